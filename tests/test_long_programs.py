"""Long programs (issue 15: a 100,000-term sum must run in about the time Lark takes to
parse it). Guards that are not timings: what compiling and running a program costs per
instruction or term, in objects and in the language's own Python calls, must not grow;
and the value and gradient of long sums of distinct terms are PyTorch's."""

from __future__ import annotations

import gc
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from agrad.lang import executor as executor_module
from agrad.lang.parser import parse
from agrad.lang.program import Program
from agrad.lang.session import Session
from agrad.lang.steps import compile_steps

LANG = str(Path(executor_module.__file__).parent)


def _sum(terms: list[str]) -> str:
    return " + ".join(terms)


def _distinct_terms(n: int) -> list[str]:
    """Terms that differ in their constants and their functions (no two alike)."""
    shapes = ("sin(x*{c!r})", "tanh(x/{c!r})", "x*{c!r}", "exp(-x*{c!r})*x", "x**2/{c!r}")
    return [shapes[i % len(shapes)].format(c=1.0 + i * 1e-3) for i in range(n)]


def test_compiling_a_program_makes_no_object_per_instruction():
    """A closure per instruction cost more than running it (300-480 ms for 400,000
    instructions): compiling now makes only the two tuples of steps, and one `CallStep`
    per call."""
    parsed = parse(_sum(["x*1.5"] * 1000))  # 4,000 instructions, no call
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        steps = compile_steps(parsed.instrs)
        after = len(gc.get_objects())
    finally:
        gc.enable()
    assert len(steps.functions) == len(parsed.instrs) == 4 * 1000 - 1
    assert after - before <= 5, f"{after - before} objects for {len(parsed.instrs)} instructions"


def _language_calls(text: str, n: int) -> tuple[float, Counter]:
    """Python calls into agrad.lang per term during a run (compiling included)."""
    prepared = Program.compile(text).prepare({"x": np.array(2.0)}, ["x"])
    calls: Counter = Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(LANG):
            calls[frame.f_code.co_name] += 1

    sys.setprofile(profile)
    try:
        prepared.run()
    finally:
        sys.setprofile(None)
    return sum(calls.values()) / n, calls


# Per term of x*1.5 + ...: a name, a number and two operators, one step each (main before
# issue 15's fix: 16, with a closure compiled per instruction). Per term of sin(x*c) + ...:
# those, the call's step, its `CallStep` (made when compiled) and its argument's conversion
# (to_tensor, through a lambda): 9 (38 before, with every call's signature check).
@pytest.mark.parametrize(
    "terms,bound", [(["x*1.5"] * 1000, 4.02), (["sin(x*1.5)"] * 1000, 9.05)], ids=["mul", "sin"]
)
def test_the_language_makes_a_bounded_number_of_python_calls_per_term(terms, bound):
    per_term, calls = _language_calls(_sum(terms), len(terms))
    assert per_term <= bound, f"{per_term:.2f} calls per term: {calls.most_common(6)}"


def test_a_function_called_in_every_term_is_checked_once():
    terms = [f"sin(x*{1 + i * 1e-3!r})" for i in range(500)]
    _, calls = _language_calls(_sum(terms), len(terms))
    assert calls["_bind"] == 1  # the signature check, for the first call only
    assert calls["call"] == 500 + 1  # each call's step, and Executor.call once


@pytest.mark.parametrize("n", [1, 2, 3000])
def test_a_long_sum_of_distinct_terms_is_pytorchs(n):
    torch = pytest.importorskip("torch")
    terms = _distinct_terms(n)
    got = Session.create(_sum(terms), ["x=0.7"], ["x"]).evaluate()
    x = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    namespace = {"x": x, "sin": torch.sin, "tanh": torch.tanh, "exp": torch.exp}
    want = None
    for term in terms:  # left to right, as the program's + associates (one eval per term:
        value = eval(term, namespace)  # noqa: S307 - Python cannot compile the whole sum)
        want = value if want is None else want + value
    (grad,) = torch.autograd.grad(want, [x])
    np.testing.assert_allclose(got.value, want.item(), rtol=1e-12)
    np.testing.assert_allclose(got.variables["x"].grad, grad.item(), rtol=1e-12)


@pytest.mark.parametrize("terms", [["x"], ["x*1.5"], ["sin(x*1.5)"]], ids=["x", "mul", "sin"])
def test_a_sum_of_the_same_term_is_the_term_times_its_count(terms):
    """Exact: n copies of a term whose value and derivative are exact binary fractions
    sum exactly (n < 2**40), whatever the order of the additions."""
    n = 4096
    got = Session.create(_sum(terms * n), ["x=0.5"], ["x"]).evaluate()
    one = Session.create(terms[0], ["x=0.5"], ["x"]).evaluate()
    if terms[0].startswith("sin"):  # sin's values are not exact fractions: within rounding
        np.testing.assert_allclose(got.value, n * one.value, rtol=1e-12)
        np.testing.assert_allclose(got.variables["x"].grad, n * one.variables["x"].grad, rtol=1e-12)
    else:
        assert got.value == n * one.value
        assert got.variables["x"].grad == n * one.variables["x"].grad
