"""A backward computed in float32 for float64 inputs (mixed precision; QA round 21): its
rounding is float32's, and the linearity test (one VJP with a random cotangent against
that cotangent times the claim) allowed float64's, so a right one failed as "backward not
linear in grad_output" with the two numbers printed equal. d/dx sin = cos, by hand."""

from __future__ import annotations

import pytest

import agrad
from agrad.autograd.gradcheck import GradcheckError


def _sin_with(backward_of):
    class Sin(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return agrad.sin(a)

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return backward_of(g, a)

    return Sin.apply


X = agrad.tensor([0.3, -0.8, 1.2], dtype=agrad.float64, requires_grad=True)


@pytest.mark.parametrize("reduce", [True, False])
def test_a_float32_backward_passes(reduce):
    sin = _sin_with(lambda g, a: g.float() * agrad.cos(a.float()))
    fn = (lambda v: sin(v).sum()) if reduce else sin
    assert agrad.autograd.gradcheck(fn, (X,))


@pytest.mark.parametrize(
    "backward_of",
    [
        lambda g, a: agrad.cos(a.float()),  # grad_output forgotten
        lambda g, a: (g * g).float() * agrad.cos(a.float()),  # squared
        lambda g, a: (g.float() + 1) * agrad.cos(a.float()),  # a constant added
    ],
)
def test_a_float32_backward_not_linear_in_grad_output_fails(backward_of):
    sin = _sin_with(backward_of)
    with pytest.raises(GradcheckError, match="grad_output"):
        agrad.autograd.gradcheck(lambda v: 0.5 * sin(v), (X,))


@pytest.mark.parametrize("bend", [1e-4, 1e-3])
def test_a_float32_backward_slightly_nonlinear_in_grad_output_fails(bend):
    """2a·g·(1 + bend·(g² - 1)) in float32: exact for g = ±1, the cotangents a Jacobian is
    built from, and 2x too large for a loss times 100 (bend 1e-4). float32's allowance was
    its eps's square root, 3.5e-4 of the whole, and passed it (QA round 22); it is 64 ulps."""

    class Sq(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            g32 = g.float()
            return (2 * a.float() * g32 * (1 + bend * (g32 * g32 - 1))).double()

    for fn in (lambda v: Sq.apply(v).sum(), Sq.apply):
        with pytest.raises(GradcheckError, match="grad_output"):
            agrad.autograd.gradcheck(fn, (X,))
