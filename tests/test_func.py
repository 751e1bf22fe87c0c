"""torch.func's transforms against PyTorch: the numbers, nesting, argnums, has_aux, and
composition with ordinary autograd. The functions mirror the jacobians/hessians tutorial
(a small nonlinear model) and the torch.func docstrings (sin, a dot product, a loss)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")


def _values(result: Any) -> list:
    """Every tensor in a (nested) result, in order, as arrays with their shapes."""
    if isinstance(result, (tuple, list)):
        return [leaf for r in result for leaf in _values(r)]
    return [np.asarray(result.detach().numpy())]


def _same(expected: list, actual: list) -> None:
    assert len(actual) == len(expected)
    for e, a in zip(expected, actual, strict=True):
        assert a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-14)


def model(t: Any) -> Any:
    def f(w: Any, x: Any) -> Any:
        return (t.tanh(w @ x) * x.sum()).sum()

    return f


CASES = {
    "grad": lambda t, x, w: t.func.grad(lambda v: (v.sin() * v).sum())(x),
    "grad_argnums_1": lambda t, x, w: t.func.grad(model(t), argnums=1)(w, x),
    "grad_argnums_both": lambda t, x, w: t.func.grad(model(t), argnums=(0, 1))(w, x),
    "grad_has_aux": lambda t, x, w: t.func.grad(lambda v: ((v**2).sum(), v.cos()), has_aux=True)(
        x
    ),  # fmt: skip
    "grad_and_value": lambda t, x, w: t.func.grad_and_value(lambda v: (v.exp() * v).sum())(x),
    "jacrev": lambda t, x, w: t.func.jacrev(t.sin)(x),
    "jacrev_matrix": lambda t, x, w: t.func.jacrev(lambda v: w @ v.sin())(x),
    "jacrev_argnums": lambda t, x, w: t.func.jacrev(lambda a, b: a @ b.tanh(), argnums=(0, 1))(
        w, x
    ),
    "jacfwd": lambda t, x, w: t.func.jacfwd(lambda v: v.exp() * v.sum())(x),
    "hessian": lambda t, x, w: t.func.hessian(lambda v: (v.sin() * v).sum())(x),
    "hessian_model": lambda t, x, w: t.func.hessian(model(t))(w, x),
    "jacrev_of_jacrev": lambda t, x, w: t.func.jacrev(t.func.jacrev(lambda v: v.sin() * v))(x),
    "grad_of_grad": lambda t, x, w: t.func.grad(
        lambda v: t.func.grad(lambda u: (u**3).sum())(v).sum()
    )(x),  # fmt: skip
    "vjp": lambda t, x, w: t.func.vjp(lambda v: v.sin() * 2, x)[1](t.ones(3, dtype=t.float64)),
    "vjp_two": lambda t, x, w: t.func.vjp(lambda a, b: a @ b, w, x)[1](
        t.tensor([1.0, -2.0], dtype=t.float64)
    ),  # fmt: skip
    "jvp": lambda t, x, w: t.func.jvp(lambda v: v.sin() * v, (x,), (t.ones(3, dtype=t.float64),)),
    "vmap": lambda t, x, w: t.func.vmap(lambda row: (row * x).sum())(w),
    "vmap_in_dims": lambda t, x, w: t.func.vmap(lambda a, b: a * b, in_dims=(1, None))(w, x[:2]),
    "vmap_of_grad": lambda t, x, w: t.func.vmap(t.func.grad(lambda v: (v.sin() * v).sum()))(w),
}


@pytest.mark.parametrize("name", CASES)
def test_func_transforms_as_pytorch(name: str) -> None:
    def inputs(t: Any) -> tuple[Any, Any]:
        x = t.tensor([0.5, -1.25, 2.0], dtype=t.float64)
        w = t.tensor([[0.3, -0.7, 1.1], [0.9, 0.2, -0.4]], dtype=t.float64)
        return x, w

    _same(_values(CASES[name](torch, *inputs(torch))), _values(CASES[name](agrad, *inputs(agrad))))


def test_transforms_compose_with_backward_as_pytorch() -> None:
    grads = []
    for t in (torch, agrad):
        x = t.tensor([0.5, -1.25, 2.0], dtype=t.float64, requires_grad=True)
        g = t.func.grad(lambda v: (v.sin() * v * v).sum())(x)
        assert g.requires_grad  # differentiable further, by ordinary autograd
        (g * g).sum().backward()
        grads.append(_values(x.grad))
    _same(grads[0], grads[1])


def test_grad_of_a_non_scalar_is_refused_with_pytorchs_text() -> None:
    texts = []
    for t in (torch, agrad):
        with pytest.raises(RuntimeError) as info:
            t.func.grad(lambda v: v * 2)(t.ones(3))
        texts.append(str(info.value))
    assert texts[0] == texts[1]
