"""Shape functions (agrad.reshape, agrad.transpose, agrad.concat, ...) and indexing: the
custom entries' public functions and their composites (view, flatten, t, broadcast_to).
`functions` re-exports them as part of the one namespace."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradShapeError, AgradValueError
from .args import astype as _astype
from .args import axis_of, first, operand, shape_of
from .grad_mode import STATE
from .inplace import refresh
from .ops.core import TABLE, apply, normalize_axis
from .ops.indexing import normalize_index
from .public import public
from .tensor import INPLACE_VIEW_ERROR, Tensor, _autograd_error, mark_written, wrap
from .views import check_writable

OP = TABLE


@public()
def reshape(x: Any, *shape: Any) -> Tensor:
    """The same elements in a new shape (one size may be -1): ``reshape(x, 2, 3)`` or
    ``reshape(x, (2, 3))``."""
    x = first(x)
    target = OP["reshape"].shape_rule(x.shape, shape_of(shape))
    return apply(OP["reshape"], x, shape=target)


@public(method=True)
def view(x: Any, *shape: Any) -> Tensor:
    """``reshape`` without a copy: PyTorch's view accepts a shape its strides allow (any,
    for a contiguous tensor) and refuses others, e.g. a transpose flattened: use reshape,
    which copies."""
    x = first(x)
    target = OP["reshape"].shape_rule(x.shape, shape_of(shape))
    array = x._array
    if not array.flags.c_contiguous and array.size > 1 and not _viewable(array, target):
        raise AgradShapeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return apply(OP["reshape"], x, shape=target)


def _viewable(array: np.ndarray, shape: tuple) -> bool:
    """Whether ``array`` can take ``shape`` without a copy (NumPy's rule is PyTorch's)."""
    try:
        np.reshape(array, shape, copy=False)
    except ValueError:
        return False
    return True


@public(method=True)
def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dimensions ``start_dim`` through ``end_dim`` merged into one (all of them by default)."""
    x = first(x)
    if x.ndim == 0:
        return reshape(x, 1)
    start, end = (normalize_axis(d, x.ndim, "flatten") for d in (start_dim, end_dim))
    merged = int(np.prod(x.shape[start : end + 1]))
    return reshape(x, (*x.shape[:start], merged, *x.shape[end + 1 :]))


@public(method=True)
def select(x: Any, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim`` (one dimension fewer): a view, as ``x[:, i]``."""
    x = first(x)
    d = normalize_axis(dim, x.ndim, "select")
    return x[(slice(None),) * d + (int(index),)]


@public()
def permute(x: Any, axes: Any, *more: Any) -> Tensor:
    axes = shape_of((axes, *more)) if more else shape_of((axes,))
    return apply(OP["permute"], first(x), axes=axes)


@public()
def transpose(x: Any, dim0: Any = None, dim1: Any = None, *, axes: Any = None) -> Tensor:
    """``transpose(x)`` reverses the axes (NumPy); ``transpose(x, 0, 1)`` swaps two (PyTorch)."""
    x = first(x)
    if dim0 is None:
        order = tuple(range(x.ndim))[::-1] if axes is None else shape_of((axes,))
        return apply(OP["permute"], x, axes=order)
    return apply(OP["transpose"], x, dim0=int(dim0), dim1=int(dim1))


@public(method=True)
def t(x: Any) -> Tensor:
    x = first(x)
    if x.ndim > 2:
        raise AgradShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x if x.ndim < 2 else transpose(x, 0, 1)


@public()
def expand(x: Any, *shape: Any) -> Tensor:
    x = first(x)
    target = list(shape_of(shape))
    lead = len(target) - x.ndim
    for i, n in enumerate(target):
        if n == -1 and i >= lead:
            target[i] = x.shape[i - lead]
    return apply(OP["expand"], x, shape=tuple(target))


@public(method=True)
def broadcast_to(x: Any, shape: Any) -> Tensor:
    x = first(x)
    shape = shape_of((shape,))
    return x if x.shape == shape else apply(OP["expand"], x, shape=shape)


@public()
def unsqueeze(x: Any, dim: int) -> Tensor:
    x = first(x)
    d = normalize_axis(dim, x.ndim + 1, "unsqueeze")
    return apply(OP["unsqueeze"], x, shape=x.shape[:d] + (1,) + x.shape[d:])


@public()
def squeeze(x: Any, dim: Any = None) -> Tensor:
    x = first(x)
    if dim is None:
        shape = tuple(n for n in x.shape if n != 1)
    else:
        d = normalize_axis(dim, x.ndim, "squeeze")
        shape = x.shape[:d] + x.shape[d + 1 :] if x.ndim and x.shape[d] == 1 else x.shape
    return apply(OP["squeeze"], x, shape=shape)


@public()
def concat(tensors: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    xs = [first(x) for x in tensors]
    if not xs:
        raise AgradValueError("concat: expects a non-empty list of tensors")
    ax = axis_of(dim, axis)
    OP["concat"].shape_rule(*(x.shape for x in xs), axis=0 if ax is None else ax)
    return apply(OP["concat"], *xs, axis=0 if ax is None else ax)


@public()
def stack(tensors: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    xs = [first(x) for x in tensors]
    if not xs:
        raise AgradValueError("stack: expects a non-empty list of tensors")
    ax = axis_of(dim, axis)
    return apply(OP["stack"], *xs, axis=0 if ax is None else ax)


@public()
def astype(x: Any, dtype: Any) -> Tensor:
    """``x`` cast to ``dtype``; integers and booleans carry no gradient (as in PyTorch)."""
    return _astype(x, dtype)


def index(x: Any, key: Any) -> Tensor:
    x = first(x)
    full, advanced = normalize_index(key, x.ndim)
    return apply(OP["index"], x, index=full, advanced=advanced)


@public(method=True)
def unbind(x: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``dim`` (what iterating over a tensor gives)."""
    x = first(x)
    n = normalize_axis(dim, x.ndim, "unbind")
    lead = (slice(None),) * n
    return tuple(
        apply(OP["unbind"], x, index=normalize_index((*lead, i), x.ndim)[0], advanced=False)
        for i in range(x.shape[n])
    )


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``; recorded in the graph (CopySlices) when gradients flow. Into a
    view, the write reaches its base and rebases the history there (`views`)."""
    full, advanced = normalize_index(key, x.ndim)
    value_shape = np.shape(value._array if isinstance(value, Tensor) else value)
    OP["setitem"].shape_rule(x.shape, value_shape, index=full, advanced=advanced)
    if STATE.enabled and x.grad_fn is None and x._rg:
        raise _autograd_error(INPLACE_VIEW_ERROR)
    value = _fit(value, OP["index"].shape_rule(x.shape, full, advanced))
    if x._base is not None:
        x._inplace(_assign, full, advanced, value)
        return
    tracked = STATE.enabled and (x._rg or (isinstance(value, Tensor) and value._rg))
    if not x._array.flags.writeable:
        check_writable(x)
    mark_written(x)
    if not tracked:
        x._array[full] = value._array if isinstance(value, Tensor) else value
        return
    before = wrap(x._array, x._rg, x.grad_fn)  # the pre-assignment version of x, for its grad
    before._output_nr = x._output_nr
    result = apply(OP["setitem"], before, operand(value), index=full, advanced=advanced)
    x._array = result._array
    x.grad_fn = result.grad_fn
    x._rg = True
    x._output_nr = 0
    refresh(x)


def _fit(value: Any, selected: tuple) -> Any:
    """The value without the leading 1s it has beyond the selection (PyTorch writes a (1,)
    value into a single element), so its gradient has the value's own shape."""
    shape = np.shape(value._array if isinstance(value, Tensor) else value)
    extra = len(shape) - len(selected)
    if extra <= 0:
        return value
    if isinstance(value, Tensor):
        return reshape(value, shape[extra:])
    return np.reshape(np.asarray(value), shape[extra:])


def _assign(source: Tensor, full: tuple, advanced: bool, value: Any) -> Tensor:
    return apply(OP["setitem"], source, operand(value), index=full, advanced=advanced)
