"""A function that casts to float32 inside is checked at float32's precision, not failed.

`(x.float().sin() * 3).sum()` checked at float64 inputs: in float64 the function is a
staircase (x rounds to float32 first), so finite differences saw 0 or garbage and the
checker said "the rule is wrong" for a right gradient (QA, 2026-12-02; PyTorch's gradcheck
fails it too). Now the claim is the gradient as the code computes it, judged at float32's
tolerances, while the numeric side (and the float64 twin) run the function with its
narrowing casts keeping float64: a wrong rule still fails, whatever the casts.

Oracles: algebra (d/dx 3·sin(x) = 3·cos(x)); the casts' semantics against PyTorch.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import agrad

X = [0.1, -1.3, 2.7]
FUNCTIONS = {
    "x.float().sin()*3": lambda x: (x.float().sin() * 3).sum(),
    "cast back with .double()": lambda x: (x.float() ** 2).sum().double(),
    ".to(float32) times x": lambda x: (x.to(agrad.float32) * x).sum(),
    "exp of a float32 product": lambda x: (x.float() * 0.7).exp().sum(),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_a_right_gradient_through_casts_passes(name, dtype):
    x = agrad.tensor(X, dtype=getattr(agrad, dtype), requires_grad=True)
    assert agrad.autograd.gradcheck(FUNCTIONS[name], (x,))


class _Sin3(agrad.autograd.Function):
    """3·sin(x) computed in float32, its backward written by hand (possibly wrongly)."""

    factor = 1.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.float().sin().double() * 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x.float().cos().double() * _Sin3.factor


@pytest.mark.parametrize("factor", [1.0, 1.01, 1.001, -1.0])
def test_a_wrong_rule_through_casts_fails(factor, monkeypatch):
    monkeypatch.setattr(_Sin3, "factor", factor)
    x = agrad.tensor(X, dtype=agrad.float64, requires_grad=True)
    passed = agrad.autograd.gradcheck(lambda x: _Sin3.apply(x).sum(), (x,), raise_exception=False)
    assert passed == (factor == 1.0)


def test_the_cli_checks_a_python_file_with_a_cast(cli, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(
        textwrap.dedent(
            """
            import agrad as torch

            def loss(x):
                return (x.float().sin() * 3).sum()
            """
        )
    )
    result = cli(["check", "--python", f"{path}:loss", "--set", f"x={X}", "--format", "json"])
    assert result.out.startswith("{"), result.err
    report = json.loads(result.out)
    assert result.code == 0 and report["ok"] and report["dtype"] == "float32", report
    worst = report["variables"]["x"]["worst"]
    analytic = {w["input_index"][0]: w["analytic"] for w in worst}
    expected = 3 * np.cos(np.float32(X))  # float32's own cosine of float32's x
    assert np.allclose([analytic[i] for i in range(3)], expected, rtol=1e-6)


def test_casts_keep_their_meaning_outside_the_checker():
    torch = pytest.importorskip("torch")
    x = agrad.tensor(X, dtype=agrad.float64, requires_grad=True)
    agrad.autograd.gradcheck(FUNCTIONS["x.float().sin()*3"], (x,))
    y = x.float()
    t = torch.tensor(X, dtype=torch.float64).float()
    assert y.dtype == agrad.float32 and str(t.dtype) == "torch.float32"
    assert np.array_equal(y.detach().numpy(), t.numpy())


def test_casts_in_another_thread_keep_their_meaning_during_a_check():
    # the widening is the checker's own, per thread: while one thread's check runs a
    # function with its casts widened, x.float() in another thread is float32 (QA)
    import threading

    from agrad.engine.args import CASTS

    inside, release = threading.Event(), threading.Event()

    def f(x):
        if CASTS.wide and not inside.is_set():  # the numeric side's first call
            inside.set()
            release.wait(10)
        return (x.float() ** 2).sum()

    x = agrad.tensor(X, dtype=agrad.float64, requires_grad=True)
    result = {}
    worker = threading.Thread(target=lambda: result.update(ok=agrad.autograd.gradcheck(f, (x,))))
    worker.start()
    try:
        assert inside.wait(10)
        assert agrad.tensor([1.5], dtype=agrad.float64).float().dtype == agrad.float32
    finally:
        release.set()
        worker.join(30)
    assert result.get("ok") is True


@pytest.mark.parametrize("name", ["half exp", "half square, back to double"])
def test_a_cast_to_half_is_judged_at_its_own_precision(name):
    fn = {
        "half exp": lambda x: (x.half() * 0.7).exp().sum(),
        "half square, back to double": lambda x: (x.half() ** 2).sum().double(),
    }[name]
    x = agrad.tensor(X, dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(fn, (x,))  # judged as float16, not as float32 (QA)


def test_a_wrong_rule_through_a_cast_to_half_still_fails(monkeypatch):
    monkeypatch.setattr(_Sin3, "factor", 1.05)  # 5%: far beyond half's rounding

    def through_half(x):
        return _Sin3.apply(x.half().double()).sum()

    x = agrad.tensor(X, dtype=agrad.float64, requires_grad=True)
    assert not agrad.autograd.gradcheck(through_half, (x,), raise_exception=False)
