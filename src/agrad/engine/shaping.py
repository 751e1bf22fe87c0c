"""Shape functions (agrad.reshape, agrad.transpose, agrad.concat, indexing, ...): argument
handling, then the op table. Split from `functions`, which re-exports every name here
(the VJP namespace under create_graph=True needs several of them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradShapeError, AgradValueError
from .dtypes import to_dtype
from .functions import OP, _axis, _first, _operand
from .grad_mode import STATE
from .ops import apply
from .ops.core import normalize_axis
from .ops.shape import normalize_index
from .tensor import INPLACE_VIEW_ERROR, Tensor, _autograd_error, _to_data, mark_written, wrap


def _shape_args(args: tuple) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (list, tuple, Tensor, np.ndarray)):
        args = tuple(np.asarray(_to_data(args[0])).reshape(-1).tolist())
    try:
        return tuple(int(n) for n in args)
    except (TypeError, ValueError):
        raise AgradValueError(f"a shape must be whole numbers, got {args!r}") from None


def reshape(x: Any, *shape: Any) -> Tensor:
    x = _first(x)
    target = OP["reshape"].shape(x.shape, _shape_args(shape))
    return apply(OP["reshape"], x, shape=target)


def view(x: Any, *shape: Any) -> Tensor:
    """``reshape`` for a tensor whose elements are laid out in order (PyTorch's view
    refuses others, e.g. a transpose: use reshape, which copies)."""
    x = _first(x)
    if not x.data.flags.c_contiguous and x.data.size > 1:
        raise AgradShapeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return reshape(x, *shape)


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dimensions ``start_dim`` through ``end_dim`` merged into one (all of them by default)."""
    x = _first(x)
    if x.ndim == 0:
        return reshape(x, 1)
    start, end = start_dim % x.ndim, end_dim % x.ndim
    merged = int(np.prod(x.shape[start : end + 1]))
    return reshape(x, (*x.shape[:start], merged, *x.shape[end + 1 :]))


def permute(x: Any, axes: Any, *more: Any) -> Tensor:
    axes = _shape_args((axes, *more)) if more else _shape_args((axes,))
    return apply(OP["permute"], _first(x), axes=axes)


def transpose(x: Any, dim0: Any = None, dim1: Any = None, *, axes: Any = None) -> Tensor:
    """``transpose(x)`` reverses the axes (NumPy); ``transpose(x, 0, 1)`` swaps two (PyTorch)."""
    x = _first(x)
    if dim0 is None:
        order = tuple(range(x.ndim))[::-1] if axes is None else _shape_args((axes,))
        return apply(OP["permute"], x, axes=order)
    return apply(OP["transpose"], x, dim0=int(dim0), dim1=int(dim1))


swapaxes = transpose


def t(x: Any) -> Tensor:
    x = _first(x)
    if x.ndim > 2:
        raise AgradShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x if x.ndim < 2 else transpose(x, 0, 1)


def expand(x: Any, *shape: Any) -> Tensor:
    x = _first(x)
    target = list(_shape_args(shape))
    lead = len(target) - x.ndim
    for i, n in enumerate(target):
        if n == -1 and i >= lead:
            target[i] = x.shape[i - lead]
    return apply(OP["expand"], x, shape=tuple(target))


def broadcast_to(x: Any, shape: Any) -> Tensor:
    x = _first(x)
    shape = _shape_args((shape,))
    return x if x.shape == shape else apply(OP["expand"], x, shape=shape)


def unsqueeze(x: Any, dim: int) -> Tensor:
    x = _first(x)
    d = dim % (x.ndim + 1)
    return apply(OP["unsqueeze"], x, shape=x.shape[:d] + (1,) + x.shape[d:])


def squeeze(x: Any, dim: Any = None) -> Tensor:
    x = _first(x)
    if dim is None:
        shape = tuple(n for n in x.shape if n != 1)
    else:
        d = dim % max(x.ndim, 1)
        shape = x.shape[:d] + x.shape[d + 1 :] if x.ndim and x.shape[d] == 1 else x.shape
    return apply(OP["squeeze"], x, shape=shape)


def concat(tensors: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    xs = [_first(x) for x in tensors]
    if not xs:
        raise AgradValueError("concat: expects a non-empty list of tensors")
    ax = _axis(dim, axis)
    OP["concat"].shape(*(x.shape for x in xs), axis=0 if ax is None else ax)
    return apply(OP["concat"], *xs, axis=0 if ax is None else ax)


cat = concatenate = concat


def stack(tensors: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    xs = [_first(x) for x in tensors]
    if not xs:
        raise AgradValueError("stack: expects a non-empty list of tensors")
    ax = _axis(dim, axis)
    return apply(OP["stack"], *xs, axis=0 if ax is None else ax)


def astype(x: Any, dtype: Any) -> Tensor:
    x, dtype = _first(x), to_dtype(dtype)
    if x.dtype == dtype:
        return x
    if dtype.kind not in "fc":  # integers and booleans carry no gradient (as in PyTorch)
        return wrap(x.data.astype(dtype))
    return apply(OP["astype"], x, dtype=dtype)


def sum_to(x: Any, shape: Any) -> Tensor:
    x = _first(x)
    return x if x.shape == tuple(shape) else apply(OP["sum_to"], x, shape=tuple(shape))


def index(x: Any, key: Any) -> Tensor:
    x = _first(x)
    full, advanced = normalize_index(key, x.ndim)
    return apply(OP["index"], x, index=full, advanced=advanced)


def unbind(x: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``dim`` (what iterating over a tensor gives)."""
    x = _first(x)
    n = normalize_axis(dim, x.ndim, "unbind")
    lead = (slice(None),) * n
    return tuple(
        apply(OP["unbind"], x, index=normalize_index((*lead, i), x.ndim)[0], advanced=False)
        for i in range(x.shape[n])
    )


def index_backward(g: Any, shape: Any, index: Any, advanced: bool = False) -> Tensor:
    return apply(
        OP["index_backward"], _first(g), shape=tuple(shape), index=index, advanced=advanced
    )


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``; recorded in the graph (CopySlices) when gradients flow."""
    full, advanced = normalize_index(key, x.ndim)
    OP["setitem"].shape(x.shape, np.shape(value.data if isinstance(value, Tensor) else value),
                        index=full, advanced=advanced)  # fmt: skip
    tracked = STATE.enabled and (x._rg or (isinstance(value, Tensor) and value._rg))
    if STATE.enabled and x.grad_fn is None and x._rg:
        raise _autograd_error(INPLACE_VIEW_ERROR)
    mark_written(x)
    if not tracked:
        x.data[full] = value.data if isinstance(value, Tensor) else value
        return
    before = wrap(x.data, x._rg, x.grad_fn)  # the pre-assignment version of x, for its grad
    result = apply(OP["setitem"], before, _operand(value), index=full, advanced=advanced)
    x.data = result.data
    x.grad_fn = result.grad_fn
    x._rg = True
