"""Tensor utilities PyTorch code uses, composed from the op table's indexing and selection:
sort, argsort, topk, flip, roll, repeat, tile, chunk, split, masked_fill, nonzero, and the
one-argument where. No new primitive: each is a gather (advanced indexing), a slice or a
where, so its gradient is theirs (a gather's VJP adds up repeated indices) and their
generated tests cover it; the grad_fn shown is that op's (IndexBackward0, SliceBackward0,
WhereBackward0), not PyTorch's SortBackward0 & co.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradValueError
from . import arranging, gathering, shaping, splitting, strided, views
from . import functions as F
from .args import as_tensor, first
from .escapes import read_values
from .grad_attr import scalar_type_name
from .ops.core import TABLE, apply
from .return_types import RESULTS  # torch.return_types: .values, .indices
from .tensor import Tensor, wrap

_dim = splitting.checked_dim


def _order(data: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    # Stable, with NaN counted as the largest value (PyTorch's order).
    if descending:
        key = np.where(np.isnan(data), -np.inf, -data) if data.dtype.kind == "f" else -data
        nan_first = np.isnan(data) if data.dtype.kind == "f" else None
        order = np.argsort(key, axis=dim, kind="stable")
        if nan_first is not None and nan_first.any():
            flags = np.take_along_axis(nan_first, order, axis=dim)
            order = np.take_along_axis(order, np.argsort(~flags, axis=dim, kind="stable"), dim)
        return order
    if data.dtype == bool:
        data = data.astype(np.int8)
    return np.argsort(data, axis=dim, kind="stable")


def sort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """(values, indices) sorted along ``dim`` (ties keep their order)."""
    x = first(x)
    if x.ndim == 0:
        return RESULTS["sort"](F.clone(x), wrap(np.zeros((), np.int64)))
    d = _dim(x, dim)
    read_values(x)  # the order is a constant of the graph
    order = _order(x._array, d, descending)
    return RESULTS["sort"](gathering.gather_along(x, d, order), wrap(order.astype(np.int64)))


def argsort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``x`` along ``dim``."""
    x = first(x)
    if x.ndim == 0:
        return wrap(np.zeros((), np.int64))
    read_values(x)
    return wrap(_order(x._array, _dim(x, dim), descending).astype(np.int64))


def topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    x = first(x)
    d = _dim(x, dim)
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if x.ndim == 0:
        return RESULTS["topk"](F.clone(x), wrap(np.zeros((), np.int64)))
    read_values(x)
    order = np.take(_order(x._array, d, largest), range(k), axis=d)
    return RESULTS["topk"](gathering.gather_along(x, d, order), wrap(order.astype(np.int64)))


def _dims(dims: Any, more: tuple) -> tuple[int, ...]:
    if isinstance(dims, (list, tuple)):
        return tuple(int(d) for d in dims) + tuple(int(d) for d in more)
    return (int(dims), *(int(d) for d in more))


def flip(x: Any, dims: Any, *more: Any) -> Tensor:
    """``x`` with the order of the elements along ``dims`` reversed."""
    x = first(x)
    key: list[Any] = [slice(None)] * x.ndim
    for d in _dims(dims, more):
        d = _dim(x, d)
        key[d] = np.arange(x.shape[d] - 1, -1, -1)
    return _index_each(x, key)


def _index_each(x: Tensor, key: list) -> Tensor:
    """``x`` indexed by one array per axis, applied one axis at a time (so the arrays do
    not broadcast against each other, unlike a single advanced index)."""
    out = x
    for d, k in enumerate(key):
        if isinstance(k, np.ndarray):
            out = shaping.index(out, (slice(None),) * d + (k,))
    return out if out is not x else F.clone(x)


def roll(x: Any, shifts: Any, dims: Any = None) -> Tensor:
    """Elements shifted along ``dims`` (the flattened tensor without), wrapping around."""
    x = first(x)
    if dims is None:
        flat = shaping.reshape(x, -1)
        shift = int(shifts[0] if isinstance(shifts, (list, tuple)) else shifts)
        rolled = shaping.index(flat, (np.roll(np.arange(flat.shape[0]), shift),))
        return shaping.reshape(rolled, x.shape)
    shift_list = _dims(shifts, ())
    dim_list = _dims(dims, ())
    if len(shift_list) != len(dim_list):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:{len(dim_list)}"
        )
    key: list[Any] = [slice(None)] * x.ndim
    for s, d in zip(shift_list, dim_list, strict=True):
        d = _dim(x, d)
        base = key[d] if isinstance(key[d], np.ndarray) else np.arange(x.shape[d])
        key[d] = np.roll(base, s)
    return _index_each(x, key)


def repeat(x: Any, *sizes: Any) -> Tensor:
    """``x`` tiled ``sizes[i]`` times along each axis (PyTorch's Tensor.repeat)."""
    x = first(x)
    reps = _dims(sizes[0], sizes[1:]) if sizes else ()
    if len(reps) < x.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {reps}")
    y = shaping.reshape(x, (1,) * (len(reps) - x.ndim) + tuple(x.shape))
    key = [np.tile(np.arange(n), r) for n, r in zip(y.shape, reps, strict=True)]
    return _index_each(y, key)


def tile(x: Any, dims: Any, *more: Any) -> Tensor:
    """``x`` repeated along each axis; fewer ``dims`` than axes count from the last."""
    x = first(x)
    reps = _dims(dims, more)
    return repeat(x, (1,) * (x.ndim - len(reps)) + reps)


def split(x: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` along ``dim`` (the last one smaller), or of the given sizes."""
    x = first(x)
    d = _dim(x, dim)
    n = x.shape[d]
    given = isinstance(split_size_or_sections, (list, tuple))
    if given:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {d}), but got split_sizes={sizes}"
            )
    else:
        step = int(split_size_or_sections)
        if step <= 0 and n:
            raise AgradValueError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
    pieces, start = [], 0
    for size in sizes:
        pieces.append(shaping.index(x, (slice(None),) * d + (slice(start, start + size),)))
        start += size
    return views.mark_multi(tuple(pieces), "SplitWithSizes" if given else "Split")


def chunk(x: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` pieces along ``dim``, each of ceil(n / chunks) elements."""
    x = first(x)
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = x.shape[_dim(x, dim)]
    return split(x, max(1, -(-n // chunks)), dim)


def masked_fill(x: Any, mask: Any, value: Any) -> Tensor:
    """``x`` with ``value`` where ``mask`` is true (no gradient flows to those elements)."""
    x = first(x)
    m = as_tensor(mask)
    if m.dtype != np.dtype(bool):
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype}"
        )
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
    fill = value if isinstance(value, Tensor) else wrap(np.asarray(value, dtype=x._array.dtype))
    return F.where(m, F.astype(fill, x._array.dtype) if fill.dtype != x.dtype else fill, x)


def nonzero(x: Any, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: one row each, or one tensor per axis."""
    read_values(first(x))
    data = np.asarray(first(x)._array)
    if as_tuple:
        return tuple(wrap(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(data)))
    return wrap(np.argwhere(data).astype(np.int64))


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``where(cond, x, y)`` elementwise, or ``where(cond)``: ``nonzero(cond, as_tuple=True)``."""
    if x is None and y is None:
        return nonzero(condition, as_tuple=True)
    if x is None or y is None:
        raise TypeError("where() takes a condition alone or a condition and two values")
    return F.where(condition, x, y)


def index_add(x: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    """``x`` with ``alpha * source`` added into its slices ``index`` along ``dim``."""
    x, src = first(x), as_tensor(source)
    positions = np.asarray(index._array if isinstance(index, Tensor) else index)
    if src.dtype != x.dtype:
        raise RuntimeError(
            f"index_add_(): self ({scalar_type_name(x._array.dtype)}) and source "
            f"({scalar_type_name(src._array.dtype)}) must have the same scalar type"
        )
    return apply(TABLE["index_add"], x, src, dim=int(dim), index=positions, alpha=alpha)


def index_add_(self: Tensor, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    # source goes to `_inplace` as an operand, so a source that requires grad is tracked
    return self._inplace(lambda s, src: index_add(s, dim, index, src, alpha=alpha), source)


FUNCTIONS = {
    "sort": sort, "argsort": argsort, "topk": topk, "flip": flip, "roll": roll, "tile": tile,
    "split": split, "chunk": chunk, "masked_fill": masked_fill, "nonzero": nonzero,
    "where": where, "index_add": index_add,
}  # fmt: skip
FUNCTIONS.update(gathering.FUNCTIONS)  # gather, scatter, index_select, ...
FUNCTIONS.update(splitting.FUNCTIONS)  # tensor_split, hsplit, vsplit, dsplit
FUNCTIONS.update(strided.FUNCTIONS)  # as_strided


def masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    if isinstance(value, Tensor):  # an operand, so a value that requires grad is tracked
        return self._inplace(lambda s, v: masked_fill(s, mask, v), value)
    return self._inplace(lambda s: masked_fill(s, mask, value))


METHODS = {**FUNCTIONS, "repeat": repeat, "index_add_": index_add_, **gathering.METHODS,
           **arranging.METHODS, **strided.METHODS,
           "masked_fill_": masked_fill_}  # fmt: skip
del METHODS["where"]  # Tensor.where(cond, other) is x where cond: kept as it is
