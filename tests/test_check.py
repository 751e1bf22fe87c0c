"""`agrad check` and the checker behind it: does it catch broken gradients, and only those?

1. Mutation testing, generated from the op table (a new op is covered by being
   added): every differentiable op, each of its cases, float64 and float32. Its
   VJP is broken in several ways (scaled by 1.01, sign flipped, the first two
   inputs' gradients swapped, a 2-D gradient transposed, the broadcast reduction
   dropped, zeros) and the checker must report a failure; unbroken, at random
   points away from kinks, it must pass. Engine level through
   `agrad.autograd.gradcheck` (which shares `agrad.check.checker.compare`), and
   through the CLI for the ops the language reaches. `test_summary` prints the
   detection rate and the false-alarm count (`pytest -s`).
2. Kinks (relu/abs at 0, a tie in max), 3. --expect, 4. TOML suites with golden
   values and JUnit XML, 5. --fast on 10^5 inputs, 6. accuracy of central and
   Richardson differences against the algebraic gradient, 7. --order 2,
   --method forward/richardson, --dtype float32.

Expected numbers come from algebra or hand derivation, never from agrad's output.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import re
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import TUTORIAL_ARGS
from opinfo import CLI_PROGRAMS, NOT_IN_LANGUAGE, ZERO_GRADIENT

import agrad
from agrad.check.numeric import default_eps, differences
from agrad.check.verdict import DEFAULTS, FIXED_COMPARE
from agrad.engine.autograd import _topological
from agrad.engine.functional import batched_jacobian
from agrad.engine.ops import TABLE, Case, apply
from agrad.engine.replay import Tape
from agrad.lang.session import Session

# ---- the op table, as tests/test_ops_generated.py walks it ------------------------------

DEFAULT_CASES = {
    1: (Case(((),)), Case(((3,),)), Case(((2, 3),))),
    2: (Case(((2, 3), (2, 3))), Case(((2, 3), (3,))), Case(((1, 3), (2, 1)))),
}
DTYPES = ("float64", "float32")
MUTATIONS = ("scale", "flip", "swap", "transpose", "unbroadcast", "zeros")
ORIGINAL_VJPS = {name: op.vjp for name, op in TABLE.items()}


def cases_of(op):
    return op.cases or DEFAULT_CASES[op.arity]


def differentiable_ops():
    return [op for op in TABLE.values() if op.vjp is not None]


def op_cases():
    return [(op.name, i) for op in differentiable_ops() for i in range(len(cases_of(op)))]


def differentiable_inputs(op, n):
    return [i for i in range(n) if not (op.name == "where" and i == 0)]


def sample(op, case, seed):
    if case.values is not None:  # a case at fixed values (an SPD matrix): as make_inputs does
        return [np.array(v, dtype=np.float64, copy=True) for v in case.values]
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(*op.domain_of(i), size=s) for i, s in enumerate(case.shapes)]
    if op.name == "where":
        arrays[0] = (arrays[0] > 0).astype(np.float64)  # a 0/1 mask, as the language gives
    return arrays


def np_forward(op, arrays, params):
    return np.asarray(
        op.forward(*[np.array(a, copy=True) for a in arrays], **params), dtype=np.float64
    )


def suitable(op, case, arrays, allow_zero: bool) -> bool:
    """Away from kinks (one-sided quotients with a coarse step, 1e-3, agree), and no
    gradient so close to zero that a 1% error would hide inside float32's tolerance:
    each input's Jacobian has an entry of size >= 0.1 (or, if ``allow_zero``, is all 0)."""
    for i in differentiable_inputs(op, len(arrays)):

        def f(v, i=i):
            args = list(arrays)
            args[i] = v
            return np_forward(op, args, case.params)

        d = differences(f, arrays[i], 1e-3, "central", relative=False)
        scale = np.maximum(1.0, np.maximum(np.abs(d.left), np.abs(d.right)))
        if op.kink and np.any(np.abs(d.right - d.left) > 0.05 * scale):
            return False
        biggest = np.abs(d.jacobian).max(initial=0.0)
        if biggest < 0.1 and not (allow_zero and biggest < 1e-9):
            return False
    return True


@functools.cache
def point(op_name: str, index: int) -> tuple[np.ndarray, ...]:
    """A random point in the op's domain where a broken gradient can show (resampled
    until `suitable`; a Jacobian that is zero everywhere, as sign's, is accepted last)."""
    op = TABLE[op_name]
    case = cases_of(op)[index]
    seed = zlib.crc32(f"{op_name}-{index}".encode())
    for allow_zero in (False, True):
        for k in range(100):
            arrays = sample(op, case, seed + k)
            if suitable(op, case, arrays, allow_zero):
                return tuple(arrays)
    raise AssertionError(f"{op_name}: no suitable point in 200 tries")


def leaves(op, arrays, dtype):
    wanted = differentiable_inputs(op, len(arrays))
    return [
        agrad.tensor(np.asarray(a, dtype=dtype), requires_grad=i in wanted)
        for i, a in enumerate(arrays)
    ]


def call(op, params):
    """The op as a function of tensors; an in-place op writes into a clone, not a leaf.
    Numeric evaluations (grad disabled) write into a float64 copy, as the checker's tape
    promises (numeric side in float64 whatever the dtype)."""

    def f(*xs):
        if op.mutates:
            first = xs[0]
            if not agrad.is_grad_enabled():
                first = agrad.tensor(np.asarray(first.data, dtype=np.float64))
            xs = (apply(TABLE["clone"], first), *xs[1:])
        return apply(op, *xs, **params)

    return f


# ---- breaking a VJP ---------------------------------------------------------------------


def _batch(g, out) -> int:
    return np.ndim(g) - out.ndim  # leading Jacobian-row dimensions of the cotangent


def _scale(grads, xs, batch):
    return [None if gi is None else gi * 1.01 for gi in grads]


def _flip(grads, xs, batch):
    return [None if gi is None else -gi for gi in grads]


def _zeros(grads, xs, batch):
    return [None if gi is None else gi * 0.0 for gi in grads]


def _swappable(grad_shapes, x_shapes) -> tuple[int, int] | None:
    present = [i for i, gs in enumerate(grad_shapes) if gs is not None][:2]
    if len(present) < 2:
        return None
    i, j = present
    if grad_shapes[i] != grad_shapes[j] or x_shapes[i] != x_shapes[j]:
        return None
    return i, j


def _shapes(items):
    return [None if x is None else np.shape(x) for x in items]


def _swap(grads, xs, batch):
    pair = _swappable(_shapes(grads), _shapes(xs))
    grads = list(grads)
    if pair:
        i, j = pair
        grads[i], grads[j] = grads[j], grads[i]
    return grads


def _transpose(grads, xs, batch):
    """A gradient whose rows have 2+ dimensions, read in transposed order: its last two
    axes swapped (a square matrix is transposed; a non-square one keeps its shape, with
    its elements in transposed order, as a transpose-for-reshape bug gives)."""
    result = []
    for gi in grads:
        if gi is not None and np.ndim(gi) - batch >= 2:
            t = np.swapaxes(gi, -1, -2)
            gi = t if t.shape == np.shape(gi) else np.reshape(t, np.shape(gi))
        result.append(gi)
    return result


def _reduced_axes(gi_shape, x_shape, batch) -> tuple | None:
    """Axes (of one row) the backward loop's sum_to reduces, or None if it does nothing."""
    row = tuple(gi_shape[batch:])
    if row == tuple(x_shape) or len(row) < len(x_shape):
        return None
    extra = len(row) - len(x_shape)
    padded = (1,) * extra + tuple(x_shape)
    return tuple(a for a in range(len(row)) if a < extra or (padded[a] == 1 and row[a] != 1))


def _unbroadcast(grads, xs, batch):
    """Drop the broadcast reduction: keep only the first slice along every axis sum_to
    would sum over (the gradient still has the wrong shape, so sum_to still runs)."""
    result = []
    for gi, x in zip(grads, xs, strict=True):
        axes = None if gi is None else _reduced_axes(np.shape(gi), np.shape(x), batch)
        if axes:
            row = np.ndim(gi) - batch
            index = tuple(slice(0, 1) if a in axes else slice(None) for a in range(row))
            gi = gi[(slice(None),) * batch + index]
        result.append(gi)
    return result


MUTATE = {
    "scale": _scale,
    "flip": _flip,
    "swap": _swap,
    "transpose": _transpose,
    "unbroadcast": _unbroadcast,
    "zeros": _zeros,
}


def mutated(vjp, mutation: str):
    def broken(ns, g, out, *xs, **params):
        grads = vjp(ns, g, out, *xs, **params)
        return tuple(MUTATE[mutation](list(grads), xs, _batch(g, out)))

    broken.__wrapped__ = vjp
    return broken


@contextlib.contextmanager
def broken_vjp(op, mutation: str):
    """Op is a frozen dataclass: swap its vjp in place, and always put the original back."""
    original = op.vjp
    object.__setattr__(op, "vjp", mutated(original, mutation))
    try:
        yield
    finally:
        object.__setattr__(op, "vjp", original)


@contextlib.contextmanager
def recording(op, calls: list):
    original = op.vjp

    def spy(ns, g, out, *xs, **params):
        grads = original(ns, g, out, *xs, **params)
        calls.append((_shapes(grads), _shapes(xs), _batch(g, out)))
        return grads

    object.__setattr__(op, "vjp", spy)
    try:
        yield
    finally:
        object.__setattr__(op, "vjp", original)


@pytest.fixture
def break_vjp():
    """break_vjp(op_name, mutation): broken for the rest of the test, restored after it."""
    with contextlib.ExitStack() as stack:
        yield lambda name, mutation: stack.enter_context(broken_vjp(TABLE[name], mutation))


@pytest.fixture(autouse=True)
def _vjps_restored():
    yield
    changed = [n for n, op in TABLE.items() if op.vjp is not ORIGINAL_VJPS[n]]
    for name in changed:
        object.__setattr__(TABLE[name], "vjp", ORIGINAL_VJPS[name])
    assert not changed, f"VJPs left broken after the test: {changed}"


# ---- running the checker on one op --------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: str  # "detected", "missed", "skipped", "error"
    reason: str = ""


def _inputs(op_name, index, dtype):
    op = TABLE[op_name]
    case = cases_of(op)[index]
    return op, case, leaves(op, point(op_name, index), dtype)


def _jacobians(op, case, ts):
    out = call(op, case.params)(*ts)
    wanted = tuple(t for t in ts if t.requires_grad)
    return [None if b is None else np.array(b.data) for b in batched_jacobian(out, wanted)]


def _gradcheck(op, case, ts, dtype) -> bool:
    """The checker with its defaults: adaptive steps, scale-aware tolerances, float32
    claims triaged against their float64 twins."""
    return agrad.autograd.gradcheck(call(op, case.params), tuple(ts), raise_exception=False)


@functools.cache
def probe(op_name, index, dtype):
    """The correct Jacobians, and the shapes the VJP returns (what each mutation can touch)."""
    op, case, ts = _inputs(op_name, index, dtype)
    calls: list = []
    with recording(op, calls):
        jac = _jacobians(op, case, ts)
    return jac, calls[0]


@functools.cache
def clean_check(op_name, index, dtype) -> bool:
    op, case, ts = _inputs(op_name, index, dtype)
    return _gradcheck(op, case, ts, dtype)


def not_applicable(mutation, shapes) -> str:
    grads, xs, batch = shapes
    present = [g for g in grads if g is not None]
    if mutation == "swap":
        if len(present) < 2:
            return "fewer than two inputs receive a gradient"
        if _swappable(grads, xs) is None:
            return "the first two inputs (or their gradients) differ in shape"
    if mutation == "transpose" and not any(len(g) - batch >= 2 for g in present):
        return "no gradient with two or more dimensions"
    if mutation == "unbroadcast" and not any(
        g is not None and _reduced_axes(g, x, batch) for g, x in zip(grads, xs, strict=True)
    ):
        return "the case does not broadcast (no gradient is summed to its input's shape)"
    return ""


@functools.cache
def mutation_outcome(op_name, index, dtype, mutation) -> Outcome:
    correct, shapes = probe(op_name, index, dtype)
    reason = not_applicable(mutation, shapes)
    if reason:
        return Outcome("skipped", reason)
    op, case, ts = _inputs(op_name, index, dtype)
    with broken_vjp(op, mutation):
        try:
            broken = _jacobians(op, case, ts)
        except Exception as exc:  # the mutation machinery itself failed: a test bug
            return Outcome("error", f"{type(exc).__name__}: {exc}")
        if all(
            (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
            for a, b in zip(broken, correct, strict=True)
        ):
            if all(a is None or not a.any() for a in correct):
                return Outcome("skipped", "the gradient is zero everywhere")
            return Outcome(
                "skipped",
                "the mutated Jacobian equals the correct one (identical "
                "gradients swapped, or a layout change that maps this "
                "gradient onto itself)",
            )
        try:
            ok = _gradcheck(op, case, ts, dtype)
        except Exception as exc:
            return Outcome("error", f"{type(exc).__name__}: {exc}")
    return Outcome("missed" if ok else "detected")


OP_CASES = [pytest.param(name, i, id=f"{name}-{i}") for name, i in op_cases()]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name,index", OP_CASES)
def test_unbroken_vjp_passes(op_name, index, dtype):
    assert clean_check(op_name, index, dtype), (
        f"false alarm: {op_name} case {index} ({dtype}) fails with its correct VJP at "
        f"{point(op_name, index)}"
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name,index", OP_CASES)
def test_broken_vjp_is_detected(op_name, index, dtype):
    """Every mutation that changes the Jacobian is caught; those that cannot change it here
    (a zero gradient, a swap of equal gradients...) are counted in test_summary."""
    outcomes = {m: mutation_outcome(op_name, index, dtype, m) for m in MUTATIONS}
    applicable = {m: o for m, o in outcomes.items() if o.status != "skipped"}
    undetected = {
        m: f"{o.status} {o.reason}" for m, o in applicable.items() if o.status != "detected"
    }
    assert not undetected, f"{op_name} case {index} ({dtype}): {undetected}"


def test_mutation_fixture_restores_the_vjp():
    op = TABLE["sin"]
    original = op.vjp
    with pytest.raises(RuntimeError), broken_vjp(op, "scale"):
        assert op.vjp is not original
        raise RuntimeError("a failing check inside")
    assert op.vjp is original


def test_unbroadcast_mutation_changes_a_broadcast_gradient():
    """The machinery itself: add (2,3)+(3,) loses the rows of b's gradient but the first."""
    op = TABLE["add"]
    a = agrad.tensor(np.ones((2, 3)), requires_grad=True)
    b = agrad.tensor(np.ones(3), requires_grad=True)
    with broken_vjp(op, "unbroadcast"):
        apply(op, a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.data, np.ones((2, 3)))
    np.testing.assert_array_equal(b.grad.data, np.ones(3))  # 1 row, not 2
    b.grad = None
    apply(op, a, b).sum().backward()
    np.testing.assert_array_equal(b.grad.data, 2 * np.ones(3))


# ---- the same through the CLI, for the ops the language reaches -----------------------

X = "[0.3, -1.2, 0.7, 1.6]"
Y = "[1.1, 0.4, -0.8, 0.5]"
POS = "[0.4, 1.3, 0.8, 2.1]"
SMALL = "[0.3, -0.6, 0.45, -0.2]"
A = "[[0.5, -1.0, 0.25, 0.8], [1.5, 0.2, -0.7, 0.1]]"
# CLI_PROGRAMS (op -> program and --set values; --wrt is every variable set), NOT_IN_LANGUAGE
# (ops no program reaches, and why) and ZERO_GRADIENT come from the test-side op-info table.
CLI_MUTATIONS = ("scale", "flip")


def cli_args(op_name, *extra):
    program, sets = CLI_PROGRAMS[op_name]
    args = ["check", program, "--wrt", ",".join(sets)]
    for name, value in sets.items():
        args += ["--set", f"{name}={value}"]
    return [*args, "--format", "json", *extra]


def run_quietly(argv) -> tuple[int, str, str]:
    from agrad.cli import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(argv))
    return code, out.getvalue(), err.getvalue()


@functools.cache
def cli_exit(op_name, mutation=None) -> tuple[int, str]:
    if mutation is None:
        code, out, err = run_quietly(cli_args(op_name))
    else:
        with broken_vjp(TABLE[op_name], mutation):
            code, out, err = run_quietly(cli_args(op_name))
    return code, err


def test_every_differentiable_op_is_classified_for_the_cli():
    """A new op needs a CLI program here, or a reason the language cannot reach it."""
    names = {op.name for op in differentiable_ops()}
    assert names - set(CLI_PROGRAMS) - set(NOT_IN_LANGUAGE) == set()
    assert set(CLI_PROGRAMS) | set(NOT_IN_LANGUAGE) <= names
    assert not set(CLI_PROGRAMS) & set(NOT_IN_LANGUAGE)


@pytest.mark.parametrize("op_name", sorted(CLI_PROGRAMS))
def test_cli_program_reaches_its_op(op_name):
    program, sets = CLI_PROGRAMS[op_name]
    session = Session.create(program, [f"{k}={v}" for k, v in sets.items()], list(sets))
    out = session.run().output
    assert out.grad_fn is not None
    assert op_name in {node.op.name for node in _topological([out.grad_fn])}


@pytest.mark.parametrize("op_name", sorted(CLI_PROGRAMS))
def test_cli_check_passes_unbroken(op_name):
    code, err = cli_exit(op_name)
    assert code == 0, err


@pytest.mark.parametrize("mutation", CLI_MUTATIONS)
@pytest.mark.parametrize("op_name", sorted(set(CLI_PROGRAMS) - ZERO_GRADIENT))
def test_cli_check_fails_broken(op_name, mutation):
    """(Ops whose gradient is zero, like sign, cannot be broken by scaling or sign flips.)"""
    code, err = cli_exit(op_name, mutation)
    assert code == 1, f"exit {code}: {err}"


def test_cli_broken_vjp_fixture(cli, break_vjp):
    """The fixture form: broken for the test, restored afterwards (checked by _vjps_restored)."""
    break_vjp("exp", "scale")
    result = cli(cli_args("exp"))
    assert result.code == 1
    report = json.loads(result.out)
    assert report["ok"] is False and report["variables"]["x"]["failures"] == 4
    # analytic is 1.01 * exp(x); the numeric side replays the forward: exp(x)
    worst = report["variables"]["x"]["worst"][0]
    assert worst["analytic"] == pytest.approx(1.01 * worst["numeric"], rel=1e-8)


def test_summary():
    """Detection rate and false alarms over everything above (pytest -s prints them)."""
    tally: Counter = Counter()
    skipped: Counter = Counter()
    misses, false_alarms = [], []
    for name, index in op_cases():
        for dtype in DTYPES:
            if not clean_check(name, index, dtype):
                false_alarms.append(f"engine {name}-{index} {dtype}")
            for mutation in MUTATIONS:
                o = mutation_outcome(name, index, dtype, mutation)
                if o.status == "skipped":
                    skipped[(mutation, o.reason)] += 1
                    continue
                tally[("engine", o.status == "detected")] += 1
                if o.status != "detected":
                    misses.append(
                        f"engine {name}-{index} {dtype} {mutation}: {o.status} {o.reason}"
                    )
    for name in CLI_PROGRAMS:
        if cli_exit(name)[0] != 0:
            false_alarms.append(f"cli {name}")
        for mutation in CLI_MUTATIONS:
            if name in ZERO_GRADIENT:
                skipped[(mutation, "zero gradient (cli)")] += 1
                continue
            detected = cli_exit(name, mutation)[0] == 1
            tally[("cli", detected)] += 1
            if not detected:
                misses.append(f"cli {name} {mutation}")
    total = sum(tally.values())
    detected = tally[("engine", True)] + tally[("cli", True)]
    clean_runs = len(op_cases()) * len(DTYPES) + len(CLI_PROGRAMS)
    print(
        f"\nmutation testing over {len(differentiable_ops())} differentiable ops, "
        f"{len(op_cases())} cases, {len(DTYPES)} dtypes"
    )
    for where in ("engine", "cli"):
        n = tally[(where, True)] + tally[(where, False)]
        print(f"  {where:6s}: {tally[(where, True)]}/{n} mutations detected")
    print(f"  detection rate: {detected}/{total} = {detected / total:.1%}")
    print(f"  false alarms: {len(false_alarms)} of {clean_runs} unbroken checks")
    print(f"  skipped (cannot change the result): {sum(skipped.values())}")
    for (mutation, reason), n in sorted(skipped.items()):
        print(f"    {n:4d} {mutation}: {reason}")
    assert not misses, "\n".join(misses)
    assert not false_alarms, "\n".join(false_alarms)
    assert detected == total


# ---- 2. kinks ---------------------------------------------------------------------------


def as_json(result) -> dict:
    assert result.out.strip(), result.err
    return json.loads(result.out)


@pytest.mark.parametrize(
    "program,x,at,analytic",
    [
        ("sum(relu(x))", "[-1.5, 0, 2]", [1], 0.0),
        ("sum(abs(x))", "[0, 1.5, -2]", [0], 0.0),
        ("max(x)", "[3, 1, 3]", [0, 2], 0.5),
    ],
)
def test_kinks_are_listed_not_failed(cli, program, x, at, analytic):
    result = cli(["check", program, "--wrt", "x", "--set", f"x={x}", "--format", "json"])
    assert result.code == 0, result.err
    report = as_json(result)
    var = report["variables"]["x"]
    assert report["ok"] is True and var["ok"] is True and var["failures"] == 0
    kinks = {tuple(k["input_index"]): k for k in var["kinks"]}
    assert sorted(kinks) == [(i,) for i in at]
    for k in kinks.values():
        left, right = k["one_sided"]
        assert k["analytic"] == pytest.approx(analytic)
        assert min(left, right) <= k["analytic"] <= max(left, right)
        assert abs(right - left) > 0.5  # a real jump, not rounding


def test_kink_one_sided_values(cli):
    report = as_json(
        cli(["check", "sum(abs(x))", "--wrt", "x", "--set", "x=[0, 1.5]", "--format", "json"])
    )
    (kink,) = report["variables"]["x"]["kinks"]
    assert kink["one_sided"] == [pytest.approx(-1.0), pytest.approx(1.0)]


def test_strict_counts_kinks_as_failures(cli):
    argv = ["check", "sum(relu(x))", "--wrt", "x", "--set", "x=[-1.5, 0, 2]"]
    assert cli(argv).code == 0
    strict = cli([*argv, "--strict", "--format", "json"])
    assert strict.code == 1
    assert as_json(strict)["variables"]["x"]["failures"] == 1


def test_kink_table_output(cli):
    result = cli(["check", "sum(relu(x))", "--wrt", "x", "--set", "x=[-1.5, 0, 2]"])
    assert result.code == 0
    assert "non-differentiable" in result.out and "check passed" in result.out


# ---- 3. --expect --------------------------------------------------------------------------

TUTORIAL = ["check", *TUTORIAL_ARGS]
# By hand: r = w*x + b - y = [-4, -5]; d/dw = 2 sum(r x) = -28; d/db = 2 sum(r) = -18.


def test_expect_right_formulas_pass(cli):
    result = cli(
        [
            *TUTORIAL,
            "--expect",
            "w=2*sum((w*x+b-y)*x)",
            "--expect",
            "b=2*sum(w*x+b-y)",
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.err
    report = as_json(result)
    assert report["ok"] is True
    for name, value in (("w", -28.0), ("b", -18.0)):
        expect = report["variables"][name]["expect"]
        assert expect["ok"] is True
        assert expect["formula_value"] == pytest.approx(value, abs=1e-12)
        assert expect["autograd"] == pytest.approx(value, abs=1e-12)
        assert expect["numeric"] == pytest.approx(value, abs=1e-6)


def test_expect_wrong_formula_fails_side_by_side(cli):
    # Forgot the factor 2: formula gives sum(r x) = -14, autograd and differences -28.
    result = cli([*TUTORIAL, "--expect", "w=sum((w*x+b-y)*x)"])
    assert result.code == 1
    assert "formula" in result.out and "autograd" in result.out
    assert "finite differences" in result.out
    assert re.search(r"\(\)\s*│\s*-14\s*│\s*-28\s*│\s*-28\s*│", result.out), result.out
    text = " ".join(result.out.split())
    assert "the formula disagrees with autograd and finite differences" in text
    assert "check FAILED" in text

    report = as_json(cli([*TUTORIAL, "--expect", "w=sum((w*x+b-y)*x)", "--format", "json"]))
    expect = report["variables"]["w"]["expect"]
    assert report["ok"] is False and expect["ok"] is False
    assert expect["formula_value"] == pytest.approx(-14.0)
    assert expect["autograd"] == pytest.approx(-28.0)
    assert "formula disagrees" in expect["verdict"]
    # (a script reading the counts sees the failure: QA round 27, where they were all 0)
    assert report["variables"]["w"]["failures"] == 1 and expect["failures"] == 1
    assert expect["max_abs_error"] == pytest.approx(14.0)
    right = as_json(cli([*TUTORIAL, "--expect", "w=2*sum((w*x+b-y)*x)", "--format", "json"]))
    assert right["variables"]["w"]["failures"] == 0 == right["variables"]["w"]["expect"]["failures"]


# ---- 4. suites, golden values, JUnit ------------------------------------------------------

MODEL = """x = [1., 2.]
y = [5., 7.]
w = tensor(1.0, requires_grad=true)
b = tensor(0.0, requires_grad=true)
loss = sum((w*x + b - y)**2)
loss
"""
M = '"[[0.5, -1.0, 0.25], [1.5, 0.2, -0.7]]"'
V = '"[0.3, -0.4, 0.9]"'
SUITE_CASES = [
    (
        "linreg",
        """program = "sum((w*x+b-y)**2)"
wrt = ["w", "b"]
set = { x = "[1,2]", y = "[5,7]", w = "1", b = "0" }
expect = { w = "2*sum((w*x+b-y)*x)", b = "2*sum(w*x+b-y)" }""",
    ),
    (
        "vector",
        """program = "x**2 + 3*sin(x)"
wrt = ["x"]
set = { x = "[0.5, -1.0, 2.0]" }""",
    ),
    (
        "matmul",
        f"""program = "sum(tanh(A @ v))"
wrt = ["A", "v"]
set = {{ A = {M}, v = {V} }}""",
    ),
    (
        "softmax",
        """program = "softmax(z)"
wrt = ["z"]
set = { z = "[1.0, -0.5, 2.0, 0.1]" }""",
    ),
    (
        "logsumexp",
        """program = "logsumexp(z) + sum(log_softmax(z) * t)"
wrt = ["z"]
set = { z = "[1.0, -0.5, 2.0]", t = "[0.2, 0.3, 0.5]" }""",
    ),
    (
        "fromfile",
        """file = "model.ag"
wrt = ["w", "b"]""",
    ),
    (
        "float32",
        f"""program = "sum(tanh(A @ v))"
wrt = ["A", "v"]
dtype = "float32"
set = {{ A = {M}, v = {V} }}""",
    ),
    (
        "richardson",
        """program = "sum(exp(x) * cos(x))"
wrt = ["x"]
method = "richardson"
set = { x = "[0.1, 0.7, -1.3]" }""",
    ),
    (
        "order2",
        """program = "sum(x**3) + x[0]*x[1]"
wrt = ["x"]
order = 2
set = { x = "[0.5, -1.2, 2.0]" }""",
    ),
    (
        "fast",
        """program = "sum(sin(x) * x**2)"
wrt = ["x"]
fast = true
set = { x = "randn(200)" }""",
    ),
    (
        "forward",
        """program = "sum(sigmoid(x) * x)"
wrt = ["x"]
method = "forward"
set = { x = "[0.3, -1.2, 0.7]" }""",
    ),
    (
        "wrongexpect",
        """program = "sum((w*x+b-y)**2)"
wrt = ["w"]
set = { x = "[1,2]", y = "[5,7]", w = "1", b = "0" }
expect = { w = "sum((w*x+b-y)*x)" }""",
    ),
]


def suite_text(cases) -> str:
    return "".join(f'[[case]]\nname = "{name}"\n{body}\n\n' for name, body in cases)


def suite_lines(text: str) -> dict[str, int]:
    """Each case's line, counted here (the [[case]] header)."""
    lines, header = {}, 0
    for n, row in enumerate(text.splitlines(), 1):
        if row.startswith("[[case]]"):
            header = n
        m = re.match(r'name = "(.*)"', row)
        if m:
            lines[m.group(1)] = header
    return lines


@pytest.fixture
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")


def test_suite_end_to_end(cli, wide, tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)  # CI=true would require golden values
    suite = tmp_path / "grads.toml"
    golden = tmp_path / "grads.golden.json"
    (tmp_path / "model.ag").write_text(MODEL)
    suite.write_text(suite_text(SUITE_CASES))
    names = [n for n, _ in SUITE_CASES]
    assert len(names) == 12

    # the table: every case, the failing one marked FAIL
    table = cli(["check", "--suite", str(suite)])
    assert table.code == 1, table.err
    rows = {
        n: next(r for r in table.out.splitlines() if re.search(rf"│\s*{n}\s*│", r)) for n in names
    }
    assert "FAIL" in rows["wrongexpect"]
    assert all("FAIL" not in rows[n] for n in names if n != "wrongexpect")
    assert "1 of 12 case(s) failed" in table.out
    assert "FAIL wrongexpect" in table.out and "formula disagrees" in table.out
    assert not golden.exists()  # never written without --update-golden

    # JSON and JUnit XML
    junit = tmp_path / "junit.xml"
    result = cli(["check", "--suite", str(suite), "--format", "json", "--junit-xml", str(junit)])
    assert result.code == 1
    report = as_json(result)
    assert report["ok"] is False
    cases = {c["name"]: c for c in report["cases"]}
    assert list(cases) == names
    assert [n for n, c in cases.items() if not c["ok"]] == ["wrongexpect"]
    assert all(c["golden"] == "missing" for c in cases.values())
    lines = suite_lines(suite.read_text())
    assert all(cases[n]["line"] == lines[n] for n in names)
    assert cases["order2"]["check"]["order"] == 2
    assert cases["float32"]["check"]["dtype"] == "float32"
    assert cases["fast"]["check"]["fast"] is True
    assert cases["richardson"]["check"]["method"] == "richardson"
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    assert root.get("tests") == "12" and root.get("failures") == "1"
    testcases = [tc for s in suites for tc in s.findall("testcase")]
    assert [tc.get("name") for tc in testcases] == names
    failing = [tc for tc in testcases if tc.find("failure") is not None]
    assert [tc.get("name") for tc in failing] == ["wrongexpect"]
    assert "formula" in (failing[0].find("failure").text or "")
    assert not golden.exists()

    # --update-golden writes the golden values (the failing case still fails the run)
    update = cli(["check", "--suite", str(suite), "--update-golden"])
    assert update.code == 1
    recorded = json.loads(golden.read_text())
    # (a failing case records nothing: its wrong values would be the reference its fix
    # then "regresses" from)
    assert sorted(recorded) == sorted(n for n in names if n != "wrongexpect")
    assert recorded["linreg"]["value"] == pytest.approx(41.0)
    assert recorded["linreg"]["grads"]["w"] == pytest.approx(-28.0)
    assert recorded["linreg"]["grads"]["b"] == pytest.approx(-18.0)
    x = np.array([0.5, -1.0, 2.0])
    assert recorded["vector"]["value"] == pytest.approx(x**2 + 3 * np.sin(x))
    assert np.asarray(recorded["vector"]["jacobian"]["x"]) == pytest.approx(
        np.diag(2 * x + 3 * np.cos(x))
    )

    # without the failing case: a clean pass, every golden value matching
    passing = [c for c in SUITE_CASES if c[0] != "wrongexpect"]
    suite.write_text(suite_text(passing))
    clean = cli(["check", "--suite", str(suite), "--format", "json"])
    assert clean.code == 0, clean.err
    report = as_json(clean)
    assert report["ok"] is True
    assert {c["name"]: c["golden"] for c in report["cases"]} == {n: "match" for n, _ in passing}

    # a changed constant: the value moves, a golden regression, the golden file untouched
    before = golden.read_bytes()
    mtime = golden.stat().st_mtime_ns
    tweaked = [(n, b.replace("3*sin(x)", "4*sin(x)")) for n, b in passing]
    assert tweaked != passing
    suite.write_text(suite_text(tweaked))
    regressed = cli(["check", "--suite", str(suite), "--format", "json", "--junit-xml", str(junit)])
    assert regressed.code == 1
    cases = {c["name"]: c for c in as_json(regressed)["cases"]}
    assert cases["vector"]["golden"] == "regression" and cases["vector"]["ok"] is False
    assert cases["vector"]["check"]["ok"] is True  # the gradients themselves are right
    assert all(c["golden"] == "match" and c["ok"] for n, c in cases.items() if n != "vector")
    assert golden.read_bytes() == before and golden.stat().st_mtime_ns == mtime
    failure = ET.parse(junit).getroot().find(".//testcase[@name='vector']/failure")
    assert failure is not None and failure.get("type") == "GoldenRegression"
    text = cli(["check", "--suite", str(suite)])
    assert text.code == 1
    assert re.search(r"│\s*vector\s*│\s*FAIL\s*│\s*ok\s*│\s*regression", text.out), text.out


GOOD_CASE = 'program = "sum(x**2)"\nwrt = ["x"]\nset = { x = "[1,2]" }'
# A case that cannot run is an error case (as pytest reports a collection error): the other
# cases still run and the run fails (exit 1). Only a suite that cannot be read exits 2.
BAD_CASES = {  # id -> (cases, what the error must name besides the case's line)
    "unknown-key": (
        [("ok", GOOD_CASE), ("typo", GOOD_CASE.replace("wrt", "wrtt"))],
        [":{typo}: case 2 ('typo')", "unknown key 'wrtt'", "did you mean 'wrt'"],
    ),
    "missing-wrt": (
        [("ok", GOOD_CASE), ("nowrt", 'program = "sum(x)"\nset = { x = "[1,2]" }')],
        [":{nowrt}: case 2 ('nowrt')", "wrt"],
    ),
    "syntax-error": (
        [("ok", GOOD_CASE), ("syntax", GOOD_CASE.replace("x**2", "x**"))],
        [":{syntax}: case 2 ('syntax')", "line 1, column 8"],
    ),
}


@pytest.mark.parametrize("which", list(BAD_CASES))
def test_bad_case_is_an_error_case_and_the_others_run(cli, tmp_path, which, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    cases, needles = BAD_CASES[which]
    text = suite_text(cases)
    lines = suite_lines(text)
    suite = tmp_path / "bad.toml"
    suite.write_text(text)
    result = cli(["check", "--suite", str(suite), "--format", "json"])
    assert result.code == 1 and result.err == ""
    ok, bad = json.loads(result.out)["cases"]
    assert ok["outcome"] == "passed" and ok["check"]["ok"] is True
    assert bad["outcome"] == "error" and bad["check"] is None and bad["line"] == lines[bad["name"]]
    for needle in needles:
        assert needle.format(**lines) in bad["error"], bad["error"]
    assert str(suite) in bad["error"]
    assert not (tmp_path / "bad.golden.json").exists()


def test_unreadable_suite_exits_2(cli, tmp_path):
    text = suite_text([("ok", GOOD_CASE), ("broken", 'program = "sum(x)"\nwrt = [x]')])
    broken_line = next(n for n, row in enumerate(text.splitlines(), 1) if row == "wrt = [x]")
    suite = tmp_path / "bad.toml"
    suite.write_text(text)
    result = cli(["check", "--suite", str(suite)])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and "Traceback" not in result.err
    assert str(suite) in result.err and "not valid TOML" in result.err
    assert f"line {broken_line}" in result.err
    assert not (tmp_path / "bad.golden.json").exists()


def test_golden_and_junit_options_need_a_suite(cli):
    result = cli([*TUTORIAL, "--update-golden"])
    assert result.code == 2 and "--suite" in result.err


# ---- 5. --fast on 10^5 inputs -------------------------------------------------------------

FAST = [
    "check",
    "sum(sin(x)*x**2)",
    "--wrt",
    "x",
    "--set",
    "x=randn(100000)",
    "--fast",
    "--format",
    "json",
]


def test_fast_on_a_large_input_passes_quickly(exe):
    result = exe(FAST)
    assert result.code == 0, result.err
    assert result.seconds < 20
    report = json.loads(result.out)
    assert report["ok"] is True and report["fast"] is True
    assert report["evaluations"] < 100  # a few per direction, not two per element


def test_fast_detects_a_broken_vjp(cli, break_vjp):
    break_vjp("sin", "scale")
    result = cli(FAST)
    assert result.code == 1, result.err
    assert result.seconds < 20
    assert as_json(result)["variables"]["x"]["failures"] > 0


# ---- 6. accuracy against the algebraic gradient -------------------------------------------


@pytest.mark.parametrize("method,bound", [("central", 1e-7), ("richardson", 1e-9)])
def test_numeric_accuracy(method, bound):
    """The checker's numeric side (replayed tape, default step) against 2x sin x + x^2 cos x."""
    session = Session.create("sum(sin(x)*x**2)", ["x=randn(1000)"], ["x"], seed=3)
    run = session.run()
    x = run.wrt["x"]
    tape = Tape(run.output, [x])
    base = x._array.astype(np.float64)
    exact = 2 * base * np.sin(base) + base**2 * np.cos(base)
    numeric = differences(tape, base, default_eps(np.float64, method), method)
    error = np.abs(numeric.jacobian.reshape(-1) - exact)
    assert error.max() < bound, f"{method}: max abs error {error.max():.3g}"
    if method == "richardson":
        assert numeric.error is not None and np.all(np.isfinite(numeric.error))


@pytest.mark.parametrize("method,bound", [("central", 1e-7), ("richardson", 1e-9)])
def test_cli_accuracy(cli, method, bound):
    result = cli(
        [
            "check",
            "sum(sin(x)*x**2)",
            "--wrt",
            "x",
            "--set",
            "x=randn(1000)",
            "--seed",
            "3",
            "--method",
            method,
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.err
    report = as_json(result)
    assert report["method"] == method and report["variables"]["x"]["compared"] == 1000
    assert report["variables"]["x"]["max_abs_error"] < bound


# ---- 7. --order 2, methods, float32 -------------------------------------------------------


def test_order_2_hessian_passes(cli):
    result = cli(
        [
            "check",
            "sum(x**3) + x[0]*x[1]",
            "--wrt",
            "x",
            "--set",
            "x=[0.5, -1.2, 2.0]",
            "--order",
            "2",
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.err
    report = as_json(result)
    assert report["ok"] is True and report["order"] == 2
    assert report["variables"]["x"]["compared"] == 9
    # the Hessian itself, from algebra: diag(6x) plus 1 at (0,1) and (1,0)
    x = np.array([0.5, -1.2, 2.0])
    expected = np.diag(6 * x)
    expected[0, 1] = expected[1, 0] = 1.0
    hessian = as_json(
        cli(
            [
                "hessian",
                "sum(x**3) + x[0]*x[1]",
                "--wrt",
                "x",
                "--set",
                "x=[0.5, -1.2, 2.0]",
                "--format",
                "json",
            ]
        )
    )
    np.testing.assert_allclose(hessian["hessian"]["x"], expected, atol=1e-12)


def test_order_2_detects_a_broken_second_derivative(cli, break_vjp):
    break_vjp("pow_scalar", "scale")  # the gradient's own graph goes through the broken rule
    result = cli(
        [
            "check",
            "sum(x**3) + x[0]*x[1]",
            "--wrt",
            "x",
            "--set",
            "x=[0.5, -1.2, 2.0]",
            "--order",
            "2",
            "--format",
            "json",
        ]
    )
    assert result.code == 1, result.err


@pytest.mark.parametrize("method", ["forward", "richardson", "central"])
@pytest.mark.parametrize(
    "program,wrt,sets",
    [
        ("sum(exp(x) * sin(x))", "x", ["x=[0.3, -1.2, 0.7, 1.6]"]),
        ("logsumexp(A @ x)", "A,x", [f"A={A}", "x=[0.3, -1.2, 0.7, 1.6]"]),
        ("sum((w*x+b-y)**2)", "w,b", ["x=[1,2]", "y=[5,7]", "w=1", "b=0"]),
    ],
)
def test_methods_pass_on_smooth_functions(cli, method, program, wrt, sets):
    argv = ["check", program, "--wrt", wrt, "--method", method, "--format", "json"]
    for s in sets:
        argv += ["--set", s]
    result = cli(argv)
    assert result.code == 0, result.err
    report = as_json(result)
    assert report["ok"] is True and report["method"] == method


@pytest.mark.parametrize(
    "argv",
    [
        TUTORIAL,
        [
            "check",
            "sum(tanh(A@x))",
            "--wrt",
            "A,x",
            "--set",
            f"A={A}",
            "--set",
            "x=[0.3, -1.2, 0.7, 1.6]",
        ],
    ],
)
def test_float32_passes(cli, argv):
    result = cli([*argv, "--dtype", "float32", "--format", "json"])
    assert result.code == 0, result.err
    report = as_json(result)
    assert report["ok"] is True and report["dtype"] == "float32"
    assert (report["atol"], report["rtol"]) == ("relative", DEFAULTS["float32"][0])


def test_float32_detects_a_broken_vjp(cli, break_vjp):
    break_vjp("tanh", "scale")
    result = cli(
        [
            "check",
            "sum(tanh(A@x))",
            "--wrt",
            "A,x",
            "--set",
            f"A={A}",
            "--set",
            "x=[0.3, -1.2, 0.7, 1.6]",
            "--dtype",
            "float32",
        ]
    )
    assert result.code == 1


def test_tolerances_match_the_readme():
    """rtol 1e-5 in float64 (a 0.1% error is caught); finite differences decide when within
    1e-6 of the gradient's scale (1e-8 for an element far smaller than it), and the claim
    passes within 4 ulps of it, up to 64 undecided (their error
    estimate includes f's measured noise; a forced step compares at 1e-9); float32 claims
    1e-4 and 1e-5 (their rule is checked again in float64); a function
    casting to half inside, 1e-2 and 1e-3."""
    assert {
        "float64": (1e-5, 1e-6, 4 * np.finfo(float).eps, 4 * np.finfo(float).eps),
        "float32": (1e-4, 1e-5, 1e-5, 1e-5),
        "float16": (1e-2, 1e-3, 1e-3, 1e-3),
    } == DEFAULTS
    assert math.isclose(default_eps(np.float64, "central"), np.finfo(float).eps ** (1 / 3))
    assert FIXED_COMPARE == 1e-9


# ---- bugs found while writing these tests: each asserts the right behaviour -----------------


def test_numeric_differences_when_f_returns_a_view_of_its_input():
    """differences() keeps f(x+h) while it goes on to perturb x; when f returns x itself or
    a view of it (identity, reshape, a slice), the kept value changes with x."""
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(differences(lambda v: v, x, 1e-6).jacobian, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(
        differences(lambda v: v.reshape(3, 1), x, 1e-6).jacobian, np.eye(3), atol=1e-8
    )
    t = agrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    assert agrad.autograd.gradcheck(lambda v: v.reshape(2, 2), (t,), raise_exception=False)


@pytest.mark.parametrize("program", ["x", "reshape(x, [2, 2])", "x[1:3]", "2 * x[1:3]"])
def test_cli_check_of_a_program_whose_output_is_a_view(cli, program):
    result = cli(
        ["check", program, "--wrt", "x", "--set", "x=[0.3, -1.2, 0.7, 1.6]", "--format", "json"]
    )
    assert result.code == 0, result.out
    assert as_json(result)["variables"]["x"]["max_abs_error"] < 1e-6


def test_gradcheck_raises_its_own_error_for_a_later_input():
    """A mismatch in the second input must raise GradcheckError naming input 1, not
    'Boolean value of Tensor ... is ambiguous'."""
    a = agrad.tensor([1.0, 2.0], requires_grad=True)
    b = agrad.tensor([0.3, 1.5], requires_grad=True)
    with broken_vjp(TABLE["sin"], "scale"):
        assert (
            agrad.autograd.gradcheck(lambda a, b: a * agrad.sin(b), (a, b), raise_exception=False)
            is False
        )
        with pytest.raises(agrad.autograd.GradcheckError, match="input 1"):
            agrad.autograd.gradcheck(lambda a, b: a * agrad.sin(b), (a, b))


def test_gradcheck_passes_a_subgradient_at_a_kink():
    """relu at 0: PyTorch's 0 is a valid subgradient (one-sided derivatives 0 and 1), so the
    same machinery as agrad check passes it (PyTorch's gradcheck fails it)."""
    a = agrad.tensor([1.0, 2.0], requires_grad=True)
    b = agrad.tensor([0.0, 1.5], requires_grad=True)
    assert agrad.autograd.gradcheck(lambda a, b: a * agrad.relu(b), (a, b))


def test_float32_indexed_assignment_numeric_side_is_float64(cli):
    """The tape replays z[1:] = ... into a float32 copy of z, so the finite differences
    carry float32 rounding (about 0.4% here) although the numeric side is float64."""
    result = cli(
        [
            "check",
            "z = zeros(4); z[1:] = x[1:]; sum(z)",
            "--wrt",
            "x",
            "--set",
            "x=[0.3, -1.2, 0.7, 1.6]",
            "--dtype",
            "float32",
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.out
    assert as_json(result)["variables"]["x"]["max_abs_error"] < 1e-6
