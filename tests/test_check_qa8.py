"""What a user's function returns and how its backward behaves (QA, 2026-12-02).

- Only integer outputs: PyTorch's gradcheck answers True (nothing to check; bool ones
  crash its finite differences);
  `agrad check --python` said "internal error" (exit 3): now exit 2, one error line.
- An output marked non-differentiable (or detached) beside one that requires grad is no
  claim: PyTorch checks only the outputs that require grad; agrad failed right Functions.
  With no output requiring grad, every output is checked (its derivative must be 0).
- A backward that gives different numbers for the same cotangent fails ("not
  reentrant"), within nondet_tol, as in PyTorch.
- A user's BaseException (GeneratorExit, their own) is their error: exit 2, not a
  traceback with exit 1.
- A hand gradient that is complex, None, or a dict with an unknown key is refused with a
  line saying so (the imaginary part was dropped silently).

Oracle: PyTorch's gradcheck on the same functions written in torch.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import agrad


def _both():
    torch = pytest.importorskip("torch")
    return [agrad, torch]


FUNCTIONS = {
    "int output": lambda T: lambda x: (x > 0).sum(),
    "detached second output": lambda T: lambda x: (x * 2, (x * 3).detach()),
    "detached only": lambda T: lambda x: x.detach() * 2,
    "wrong first, detached second": lambda T: lambda x: (x.detach() * 2 + x, (x * 3).detach()),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONS))
def test_outputs_that_do_not_require_grad_are_judged_as_pytorch_does(case):
    verdicts = []
    for T in _both():
        x = T.tensor([0.5, 1.5, -2.0], dtype=T.float64, requires_grad=True)
        fn = FUNCTIONS[case](T)
        try:
            verdicts.append(bool(T.autograd.gradcheck(fn, (x,), raise_exception=False)))
        except Exception:  # PyTorch raises for some wrong gradients even then
            verdicts.append(False)
    assert verdicts[0] == verdicts[1], case


def _marked(T):
    class TopIndex(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            index = x.argmax()
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(x)
            return x * 2, index.to(x.dtype)

        @staticmethod
        def backward(ctx, g, g_index):
            return 2 * g

    return TopIndex


def test_an_output_marked_non_differentiable_is_not_checked():
    for T in _both():
        x = T.tensor([0.5, 1.5, -2.0], dtype=T.float64, requires_grad=True)
        assert T.autograd.gradcheck(_marked(T).apply, (x,)), T.__name__


def _noisy(T, noise):
    rng = np.random.default_rng(0)

    class Noisy(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + T.tensor(rng.standard_normal(tuple(g.shape)) * noise, dtype=g.dtype)

    return Noisy


# nondet_tol bounds how far two backward passes may differ, as PyTorch's; it does not widen
# the comparison with finite differences (QA round 13: it let a lost gradient pass), which
# a nondeterministic backward needs atol for, as in PyTorch.
@pytest.mark.parametrize("noise, tol, atol, ok", [(1e-9, 0.0, None, False),
                                                  (1e-9, 1e-5, None, False),
                                                  (1e-9, 1e-5, 1e-6, True),
                                                  (1e-9, 0.0, 1e-6, False),
                                                  (0.0, 0.0, None, True)])  # fmt: skip
def test_a_nondeterministic_backward_fails_within_nondet_tol(noise, tol, atol, ok):
    x = agrad.tensor([0.5, 1.5, -2.0], dtype=agrad.float64, requires_grad=True)
    got = agrad.autograd.gradcheck(_noisy(agrad, noise).apply, (x,), nondet_tol=tol, atol=atol,
                                   raise_exception=False)  # fmt: skip
    assert got is ok
    if not ok:  # (within nondet_tol it is reentrant: the gradient itself is what is off)
        with pytest.raises(Exception, match="not reentrant" if tol == 0 else "rule is wrong"):
            agrad.autograd.gradcheck(_noisy(agrad, noise).apply, (x,), nondet_tol=tol, atol=atol)


USER = """
import numpy as np
import agrad as torch

def ints(x):
    return (x > 0).sum()

def generator_exit(x):
    raise GeneratorExit

class Mine(BaseException):
    pass

def own_base(x):
    raise Mine("custom")

def f(x):
    return np.sum(x ** 2)

def complex_grad(x):
    return 2 * x + 1e-3j

def none_grad(x):
    return None

def extra_key(x):
    return {"x": 2 * x, "z": 1}
"""


@pytest.fixture
def user(tmp_path, monkeypatch):
    (tmp_path / "user.py").write_text(textwrap.dedent(USER))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("func, words", [("ints", "no floating-point tensor"),
                                         ("generator_exit", "GeneratorExit"),
                                         ("own_base", "Mine")])  # fmt: skip
def test_bad_user_functions_are_bad_input(cli, user, func, words):
    result = cli(["check", "--python", f"user.py:{func}", "--set", "x=[1,2,3]"])
    assert result.code == 2, (result.code, result.err)
    assert "Traceback" not in result.err and words in result.err
    assert result.err.startswith("error: ") and result.err.count("\n") == 1


@pytest.mark.parametrize("grad, words", [("complex_grad", "complex gradient"),
                                         ("none_grad", "returned None"),
                                         ("extra_key", "'z'")])  # fmt: skip
def test_bad_hand_gradients_are_refused_with_a_line(cli, user, grad, words):
    result = cli(["check", "--python", "user.py:f", "--grad", f"user.py:{grad}", "--set",
                  "x=[1,2,3]"])  # fmt: skip
    assert result.code == 2, (result.code, result.err)
    assert words in result.err and "Traceback" not in result.err


@pytest.mark.parametrize("claim, ok", [("x=[2e6*x[0], 0*x[1]]", False),
                                       ("x=[2e6*x[0], 2e-3*x[1]*1.01]", False),
                                       ("x=[2e6*x[0], 2e-3*x[1]]", True)])  # fmt: skip
def test_a_small_element_beside_a_large_one_is_compared_where_the_numbers_are_exact(
    check_json, claim, ok
):
    # The derivative of 1e-3·x1² is 2e-3 (algebra): a billionth of the row's 2e6 was the
    # allowance, and a formula dropping the term "agreed". The complex step is exact here.
    report = check_json("1e6*x[0]**2 + 1e-3*x[1]**2", "--wrt", "x", "--set", "x=[1,1]",
                        "--expect", claim)  # fmt: skip
    assert report["ok"] is ok
