"""The language's functions written by hand: ``tensor``, a few basics with their own
usage lines, and the constructors (the rest are generated from the op table's entries, see
`agrad.lang.functions`). Each signature is its usage line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine import creation as C
from ..engine import functions as F
from ..engine.dtypes import get_default_dtype
from ..engine.kernels import Array, Axis, Sizes
from ..engine.tensor import Tensor
from .functions import Size, Tensors, Value, to_tensor


def tensor(value: Value, requires_grad: bool = False) -> Tensor:
    """a leaf tensor; requires_grad=true makes it a variable to differentiate"""
    t = to_tensor(value).detach()
    t = F.astype(t, t.dtype if t.dtype.kind == "f" else np.float64)
    return C.tensor(t._array, requires_grad=requires_grad)


def square(x: Array) -> Tensor:
    """elementwise square"""
    return F.square(x)


def clip(x: Array, min: Value = None, max: Value = None) -> Tensor:  # noqa: A002
    """x limited to [min, max]; a bound may be a tensor, broadcast with x, and the gradient
    flows to a bound computed from a variable (as PyTorch's clamp with tensor bounds)"""
    return F.clip(x, min=_bound(min), max=_bound(max))


def _bound(value: Value) -> Any:
    """A bound of clip: a number where it is a constant number (PyTorch's clamp with number
    bounds, ClampBackward1), else a tensor (clamp with tensor bounds, ClampBackward0)."""
    if value is None:
        return None
    bound = to_tensor(value)
    return float(bound._array) if bound.ndim == 0 and not bound.requires_grad else bound


def dot(a: Array, b: Array) -> Tensor:
    """inner product of two vectors"""
    return F.dot(a, b)


def outer(a: Array, b: Array) -> Tensor:
    """outer product of two vectors"""
    return F.outer(a, b)


def transpose(x: Array, axes: Axis = None) -> Tensor:
    """axes reversed, or permuted by axes"""
    return F.transpose(x, axes=axes)


def reshape(x: Array, shape: Sizes) -> Tensor:
    """the same elements in a new shape (one size may be -1)"""
    return F.reshape(x, shape)


def concat(tensors: Tensors, axis: int = 0) -> Tensor:
    """tensors joined along an existing axis"""
    return F.concat(tensors, axis=axis)


def stack(tensors: Tensors, axis: int = 0) -> Tensor:
    """tensors joined along a new axis"""
    return F.stack(tensors, axis=axis)


def _filled(maker: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def fill(*size: Size) -> Tensor:
        return maker(*size)

    fill.__doc__ = f"a tensor of the given shape filled by {maker.__name__}"
    return fill


def full(shape: Sizes, value: float) -> Tensor:
    """a tensor of the given shape filled with value"""
    return C.full(shape, value)


def eye(n: int, m: int | None = None) -> Tensor:
    """the n x m identity"""
    return C.eye(n, m)


def arange(start: float, stop: float | None = None, step: float = 1.0) -> Tensor:
    """start, start + step, ... below stop"""
    lo, hi = (0.0, start) if stop is None else (start, stop)
    return C.arange(lo, hi, step, dtype=get_default_dtype())


def linspace(start: float, stop: float, num: int = 50) -> Tensor:
    """num evenly spaced numbers from start to stop"""
    return C.linspace(start, stop, num)


BASICS = [square, clip, dot, outer, transpose, reshape, concat, stack]
FILLERS = {m.__name__: _filled(m) for m in (C.zeros, C.ones, C.randn, C.rand)}
CONSTRUCTORS = [full, eye, arange, linspace]
