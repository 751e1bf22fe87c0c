"""Points closer to a kink than any step of the ladder: relu at x = 1e-30.

Below |x| = 1 the ladder's steps are absolute (2^-10 down to about 1.4e-14), so at 1e-30
every step straddles relu's kink at 0: the one-sided quotients are 1 and 0, the shape of
a kink at the point, and any claim in [0, 1] passed as a subgradient although
relu'(1e-30) = 1 (noticed in session 7). At 1e-15 .. 3e-14 the kink was "closer than any
step" or the estimate "not accurate enough": a right gradient did not pass. Such
elements are climbed again from |x|/2, which a kink at 0 does not reach.

Oracles: PyTorch for the right claims (relu'(x) = 1 for x > 0, 0 for x < 0); algebra for
the wrong ones; the kink at 0 itself stays a kink.
"""

from __future__ import annotations

import numpy as np
import pytest

from agrad.check import check_numpy

TINY = ["1e-30", "-1e-30", "1e-20", "-1e-15", "3e-14", "-3e-14", "1e-13", "5e-300"]
KINKED = ["relu(x)", "abs(x)", "clamp(x, 0)", "maximum(x, 0*x)", "relu(x) - 0.1*relu(-x)"]


def _torch_program(torch, program: str, t):
    return {
        "relu(x)": torch.relu,
        "abs(x)": torch.abs,
        "clamp(x, 0)": lambda v: torch.clamp(v, 0),
        "maximum(x, 0*x)": lambda v: torch.maximum(v, 0 * v),
        "relu(x) - 0.1*relu(-x)": lambda v: torch.nn.functional.leaky_relu(v, 0.1),
    }[program](t)


@pytest.mark.parametrize("program", KINKED)
@pytest.mark.parametrize("x", TINY)
def test_right_gradients_near_a_kink_pass(program, x, check_json):
    torch = pytest.importorskip("torch")
    t = torch.tensor([float(x), 1.0], dtype=torch.float64, requires_grad=True)
    _torch_program(torch, program, t).sum().backward()
    assert t.grad[0] != 0.5  # one side's slope, not a subgradient between them
    report = check_json(program, "--wrt", "x", "--set", f"x=[{x}, 1]")
    variable = report["variables"]["x"]
    assert report["ok"] and variable["verdict"] == "pass", variable


@pytest.mark.parametrize("x", ["1e-30", "1e-20", "3e-14"])
@pytest.mark.parametrize("claim", ["0.5", "0", "0.999"])
def test_a_subgradient_claim_off_the_kink_fails(x, claim, check_json):
    # f = relu(x) is as small as x: steps of |x|/2 resolve it, and the derivative is 1.
    report = check_json("sum(relu(x))", "--wrt", "x", "--set", f"x=[{x}]", "--expect",
                        f"x=[{claim}]")  # fmt: skip
    assert not report["ok"]


@pytest.mark.parametrize("claim, ok", [("0.5", False), ("1", False), ("0", True)])
def test_the_negative_side_has_derivative_zero(claim, ok, check_json):
    report = check_json("sum(relu(x))", "--wrt", "x", "--set", "x=[-1e-30]", "--expect",
                        f"x=[{claim}]")  # fmt: skip
    assert report["ok"] is ok


def test_a_wrong_backward_at_a_tiny_point_fails():
    import agrad
    from agrad.autograd import Function, gradcheck

    class HalfRelu(Function):  # backward gives the kink's midpoint slope everywhere
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            return 0.5 * g

    x = agrad.tensor([1e-30, -1e-30], dtype=agrad.float64, requires_grad=True)
    assert not gradcheck(HalfRelu.apply, (x,), raise_exception=False)


def test_the_kink_at_zero_is_still_a_kink(check_json):
    report = check_json("sum(relu(x))", "--wrt", "x", "--set", "x=[0]", "--expect", "x=[0.5]")
    assert report["ok"]
    assert report["variables"]["x"]["counts"]["kink"] == 1


def test_where_f_cannot_see_such_steps_the_kink_stays(check_json):
    # 1 + relu(1e-30) rounds to 1: no finite difference resolves x, so the element stays
    # a kink (the right claim 1 passes; so would 0.5: no step can tell them apart).
    report = check_json("sum(1 + relu(x))", "--wrt", "x", "--set", "x=[1e-30]")
    assert report["ok"]
    assert report["variables"]["x"]["counts"]["kink"] == 1


@pytest.mark.parametrize("near", [1e-15, 1e-12, -1e-13])
@pytest.mark.parametrize("fn", ["max", "relu-sum"])
def test_a_tie_closer_than_the_samples_does_not_certify_a_split(near, fn):
    """max(x0, x1) at [near, 0]: x0 > x1 or x1 > x0 there, so the gradient is one-hot, but
    the samples around the point (at 6e-5) see the tie's pieces, and their hull certified
    the split [0.5, 0.5] (QA round 22). The axis derivative decided at steps finer than
    |x0| stands. relu(x0 - x1) + x1 is max(x0, x1) too."""
    f = {"max": lambda b: max(b[0], b[1]),
         "relu-sum": lambda b: max(b[0] - b[1], 0.0) + b[1]}[fn]  # fmt: skip
    x = np.array([near, 0.0])
    truth = np.array([1.0, 0.0]) if near > 0 else np.array([0.0, 1.0])
    assert check_numpy(f, lambda b: truth, {"b": x}).ok
    assert not check_numpy(f, lambda b: np.array([0.5, 0.5]), {"b": x}).ok
