"""autograd.functional.vhp and hvp: products of a scalar function's Hessian with a vector,
by double backward (grad of <grad f, v>), without forming the Hessian."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .autograd import grad
from .functional import _outputs, _prepare, tolerant_grad
from .functional_strict import check_requires_grad, fill_in_zeros
from .tensor import Tensor, wrap


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """(func(inputs), v^T H) for a function returning a single number."""
    ins, in_tuple = _prepare(inputs, create_graph)
    outs, _ = _outputs(func, ins)
    if len(outs) != 1 or outs[0]._array.size != 1:
        raise RuntimeError(
            "The function given to hvp should return a single Tensor containing a single element"
            if len(outs) == 1
            else "The function given to vhp should return a single Tensor"
        )
    out = outs[0]
    vs = _vectors(v, ins)
    check_requires_grad(outs, "outputs", strict)
    first = tolerant_grad(out, ins, create_graph=True)
    check_requires_grad(first, "jacobian", strict)
    pairs = [(g, vi) for g, vi in zip(first, vs, strict=True) if g is not None and g._rg]
    if pairs:
        second = grad([p[0] for p in pairs], ins, grad_outputs=[p[1] for p in pairs],
                      create_graph=create_graph, allow_unused=True)  # fmt: skip
    else:
        second = (None,) * len(ins)
    products = fill_in_zeros(second, ins, strict, create_graph, "double_back")
    return (out if create_graph else out.detach()), (products if in_tuple else products[0])


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """(func(inputs), H v): the Hessian of a twice-differentiable function is symmetric,
    so this is v^T H (PyTorch computes it by another route, to the same value)."""
    return vhp(func, inputs, v, create_graph, strict)


def _vectors(v: Any, ins: tuple[Tensor, ...]) -> tuple:
    if v is None:
        if len(ins) != 1 or ins[0]._array.size != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element."
            )
        return (wrap(np.ones_like(ins[0]._array)),)
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if len(vs) != len(ins):
        raise RuntimeError(f"v has {len(vs)} tensors, the inputs {len(ins)}: give one each")
    for vi, x in zip(vs, ins, strict=True):
        if tuple(vi.shape) != tuple(x.shape):
            raise RuntimeError(
                f"Mismatch in shape: v has shape {tuple(vi.shape)}, the input {tuple(x.shape)}"
            )
    return vs
