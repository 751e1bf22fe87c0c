"""gradgradcheck compares the first derivative that create_graph=True records with the plain
backward's (QA round 21). A custom Function may take another path while grad mode is on;
gradgradcheck differentiated that path on both sides, so a wrong one agreed with itself and
passed, while the Hessians users get through create_graph were wrong (a factor 2 passed;
PyTorch's gradgradcheck passes it too). d/dx x³ = 3x², d²/dx² = 6x, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from cube import cube

import agrad
from agrad.autograd.gradcheck import GradcheckError


def _cube(factor_when_recorded: float):
    class Cube(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if agrad.is_grad_enabled():  # create_graph=True: the differentiable path
                return g * factor_when_recorded * x**2
            return g * 3 * x**2

    return Cube


X = agrad.tensor([0.7, -1.3, 0.4], dtype=agrad.float64, requires_grad=True)


@pytest.mark.parametrize("factor", [6.0, 3.0 * (1 + 1e-4), 0.0])
def test_a_wrong_recorded_path_fails(factor):
    cube = _cube(factor).apply
    assert agrad.autograd.gradcheck(cube, (X,))  # the plain path is right
    assert not agrad.autograd.gradgradcheck(cube, (X,), raise_exception=False)
    with pytest.raises(GradcheckError, match="differs with create_graph=True"):
        agrad.autograd.gradgradcheck(cube, (X,))


def test_a_right_recorded_path_passes():
    cube = _cube(3.0).apply
    assert agrad.autograd.gradgradcheck(cube, (X,))
    # and its Hessian is the algebra's: diag(6x)
    hessian = agrad.autograd.functional.hessian(lambda v: cube(v).sum(), X)
    assert np.allclose(hessian.numpy(), np.diag(6 * X.detach().numpy()), rtol=1e-12)


@pytest.mark.parametrize(
    "fn", [lambda v: agrad.tanh(v) * v, lambda v: (v[:, None] * v[None, :]).exp().sum(1)]
)
def test_built_in_ops_pass(fn):
    assert agrad.autograd.gradgradcheck(fn, (X,))


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_masked_true_on_dense_inputs_changes_nothing_as_in_pytorch(check):
    torch = pytest.importorskip("torch")
    for lib in (torch, agrad):
        x = lib.tensor([0.3, -0.2], dtype=lib.float64, requires_grad=True)
        assert getattr(lib.autograd, check)(lambda a: a.sin() * a, (x,), masked=True)
    cube = _cube(6.0).apply  # (a wrong recorded path: gradgradcheck still fails it)
    if check == "gradgradcheck":
        assert not agrad.autograd.gradgradcheck(cube, (X,), masked=True, raise_exception=False)


def _cube_outside(kind: str):
    """x³ whose backward is right at first order but computed outside autograd."""

    def numpy(ctx, g):
        (x,) = ctx.saved_tensors
        return agrad.tensor(g.detach().numpy() * 3 * x.detach().numpy() ** 2)

    def detach(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach() ** 2

    def once(ctx, g):
        return g * 3 * ctx.saved_tensors[0] ** 2

    backward = {"numpy": numpy, "detach": detach,
                "once": agrad.autograd.function.once_differentiable(once)}[kind]  # fmt: skip
    return type("Outside", (cube(agrad),), {"backward": staticmethod(backward)})


@pytest.mark.parametrize("kind", ["numpy", "detach", "once"])
def test_a_backward_outside_autograd_is_named_not_blamed_on_a_rule(kind):
    # (QA round 28: "the rule is wrong ... the gradient is 0" for each; the second
    # derivative of x³ is 6x, which autograd cannot see through such a backward)
    x = agrad.tensor([0.5, -1.2, 2.0], dtype=agrad.float64, requires_grad=True)
    cube = _cube_outside(kind)
    assert agrad.autograd.gradcheck(cube.apply, (x,))  # first order: right
    with pytest.raises(GradcheckError, match="does not depend on input 0"):
        agrad.autograd.gradgradcheck(cube.apply, (x,))
