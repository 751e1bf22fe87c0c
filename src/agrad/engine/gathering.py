"""PyTorch's gather family, composed from the op table's indexing: gather, take_along_dim,
index_select, masked_select, scatter (and scatter_), scatter_add (and scatter_add_).

Each is an advanced-indexing read, an indexed assignment or an index_add, so its gradient
is theirs and the generated tests of those entries cover it; the grad_fn shown is theirs
(IndexBackward0, CopySlices, IndexAddBackward0), not PyTorch's GatherBackward0 & co. What
is written here is what PyTorch checks first: index dtypes, ranks, sizes and bounds, with
PyTorch's texts — NumPy would wrap a negative index or broadcast a short one silently.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradIndexError, AgradShapeError
from . import shaping
from .args import as_tensor, first
from .ops.core import normalize_axis
from .tensor import Tensor


def _dim(x: Tensor, dim: int) -> int:
    return normalize_axis(int(dim), x.ndim, "gather")  # PyTorch's IndexError text


def index_positions(index: Any, what: str, dtypes: str = "int32/int64") -> np.ndarray:
    """``index`` as an intp array, refused (PyTorch's text) unless it holds integers."""
    array = index._array if isinstance(index, Tensor) else np.asarray(index)
    if array.dtype.kind not in "iu":
        raise AgradShapeError(f"{what}: Expected dtype {dtypes} for index")
    return array.astype(np.intp, copy=False)


def _in_bounds(positions: np.ndarray, size: int, dim: int) -> None:
    bad = positions[(positions < 0) | (positions >= size)]
    if bad.size:
        raise AgradShapeError(
            f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with size {size}"
        )


def _grid(positions: np.ndarray, d: int) -> tuple:
    """The advanced index that reads ``x[..., positions[i, j, ...], ...]`` along ``d``."""
    grids = list(np.ogrid[tuple(slice(n) for n in positions.shape)])
    grids[d] = positions
    return tuple(grids)


def gather_along(x: Tensor, d: int, positions: np.ndarray) -> Tensor:
    """``x`` re-indexed along ``d`` by ``positions`` (x's shape but along d): one
    advanced-indexing gather, differentiable through the table (repeats add up)."""
    return shaping.index(x, _grid(positions, d))


def _checked(x: Tensor, dim: int, index: Any, what: str, src: Tensor | None = None):
    """(d, positions) for gather/scatter, after PyTorch's checks of ``index`` (and src)."""
    d = _dim(x, dim)
    positions = index_positions(index, what)
    if x.ndim == 0 and positions.ndim <= 1 and positions.size <= 1:
        return d, positions.reshape(positions.shape or (1,))  # a 0-d x has the one slot 0
    if positions.ndim != x.ndim:
        raise AgradShapeError(
            "Index tensor must have the same number of dimensions as "
            + ("input tensor" if src is None else "self tensor")
        )
    too_big = [k for k in range(x.ndim) if k != d and positions.shape[k] > x.shape[k]]
    if src is None and too_big:
        raise AgradShapeError(
            f"Size does not match at dimension {too_big[0]} expected index "
            f"{list(positions.shape)} to be no larger than self {list(x.shape)} apart from "
            f"dimension {d}"
        )
    if src is not None and (
        too_big or any(positions.shape[k] > src.shape[k] for k in range(min(src.ndim, x.ndim)))
    ):
        raise AgradShapeError(
            f"Expected index {list(positions.shape)} to be no larger than self "
            f"{list(x.shape)} apart from dimension {d} and to be no larger size than src "
            f"{list(src.shape)}"
        )
    _in_bounds(positions, x.shape[d] if x.ndim else 1, d)
    return d, positions


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    """``out[i][j] = input[i][index[i][j]]`` along ``dim`` (index has input's rank)."""
    x = first(input)
    d, positions = _checked(x, dim, index, "gather()")
    if x.ndim == 0:
        shape = np.shape(index._array if isinstance(index, Tensor) else index)
        return shaping.index(x.reshape(1), (positions,)).reshape(shape)
    return gather_along(x, d, positions)


def take_along_dim(input: Any, indices: Any, dim: int | None = None) -> Tensor:  # noqa: A002
    """gather after broadcasting ``input`` and ``indices`` against each other off ``dim``
    (with ``dim=None``, along the flattened input)."""
    x = first(input)
    positions = index_positions(indices, "torch.take_along_dim()", "long")
    if dim is None:
        flat = x.reshape(-1)
        return gather(flat, 0, positions.reshape(-1))
    d = _dim(x, dim)
    if positions.ndim != x.ndim:
        raise AgradShapeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {x.ndim} dimensions for input, and {positions.ndim} "
            "dimensions for indices"
        )
    lead_x, lead_i = list(x.shape), list(positions.shape)
    lead_x[d] = lead_i[d] = 1
    try:
        common = list(np.broadcast_shapes(tuple(lead_x), tuple(lead_i)))
    except ValueError:
        k = next(k for k in range(x.ndim) if 1 not in (lead_x[k], lead_i[k]) and
                 lead_x[k] != lead_i[k])  # fmt: skip
        raise AgradShapeError(
            f"The size of tensor a ({lead_x[k]}) must match the size of tensor b "
            f"({lead_i[k]}) at non-singleton dimension {k}"
        ) from None
    x_shape, i_shape = list(common), list(common)
    x_shape[d], i_shape[d] = x.shape[d], positions.shape[d]
    return gather(x.expand(*x_shape), d, np.broadcast_to(positions, i_shape))


def index_select(input: Any, dim: int, index: Any) -> Tensor:  # noqa: A002
    """The slices of ``input`` at ``index`` (a vector) along ``dim``, repeats allowed."""
    x = first(input)
    d = _dim(x, dim)
    positions = index_positions(index, "index_select()", "int32 or int64")
    if positions.ndim > 1:
        raise AgradIndexError("index_select(): Index is supposed to be a vector")
    positions = positions.reshape(-1)
    size = x.shape[d] if x.ndim else 1
    bad = positions[(positions < 0) | (positions >= size)]
    if bad.size:
        raise AgradShapeError(
            f"index_select(): index {int(bad[0])} is out of range for dimension {d} with "
            f"size {size}",
            torch=f"INDICES element is out of DATA bounds, id={int(bad[0])} axis_dim={size}",
        )
    if x.ndim == 0:
        if positions.size != 1:
            raise AgradShapeError(
                "index_select(): Index to scalar can have only 1 value, got "
                f"{positions.size} value(s)"
            )
        return x.reshape(1)
    return shaping.index(x, (slice(None),) * d + (positions,))


def masked_select(input: Any, mask: Any) -> Tensor:  # noqa: A002
    """The elements of ``input`` where ``mask`` (broadcast with it) is true, as a vector."""
    x = first(input)
    m = as_tensor(mask)._array
    if m.dtype != np.dtype(bool):
        raise AgradShapeError("masked_select: expected BoolTensor for mask")
    try:
        shape = np.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise AgradShapeError(
            f"masked_select: the mask of shape {list(m.shape)} does not broadcast with the "
            f"input of shape {list(x.shape)}"
        ) from None
    if tuple(shape) != tuple(x.shape):
        x = x.expand(*shape)
    return shaping.index(x, (np.broadcast_to(m, shape),))


def _source(x: Tensor, src: Any, value: Any, what: str) -> Any:
    if (src is None) == (value is None):
        raise TypeError(f"{what}() takes a src tensor or a value (exactly one of them)")
    if src is None:
        return value
    return first(src) if isinstance(src, Tensor) else src


def _scattered(x: Tensor, dim: int, index: Any, src: Any, what: str):
    src_t = src if isinstance(src, Tensor) else None
    d, positions = _checked(x, dim, index, what, src_t)
    if x.ndim == 0:  # the one element, or nothing with an empty index
        return (() if positions.size else None), src
    grid = _grid(positions, d)
    if src_t is not None:  # the first index.shape elements of src, as PyTorch reads them
        src = (
            shaping.index(src_t, tuple(slice(n) for n in positions.shape)) if src_t.ndim else src_t
        )
    return grid, src


def scatter(
    input: Any,  # noqa: A002
    dim: int,
    index: Any,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """A copy of ``input`` with ``src`` (or ``value``) written at ``index`` along ``dim``."""
    x = first(input)
    out = x.clone()
    _scatter_into(out, dim, index, src, value, reduce)
    return out


def scatter_(self: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None,
             reduce: str | None = None) -> Tensor:  # fmt: skip
    _scatter_into(self, dim, index, src, value, reduce)
    return self


def _scatter_into(x: Tensor, dim: int, index: Any, src: Any, value: Any, reduce: Any) -> None:
    if reduce is not None:
        raise NotImplementedError(
            "scatter with reduce= is not supported (PyTorch deprecates it); use "
            "scatter_add, or scatter_reduce in PyTorch"
        )
    if not isinstance(src, Tensor) and src is not None and value is None:
        src, value = None, src  # scatter(dim, index, 2.0): the value overload
    grid, data = _scattered(x, dim, index, _source(x, src, value, "scatter"), "scatter()")
    if grid is not None:
        x[grid] = data.reshape(()) if x.ndim == 0 and isinstance(data, Tensor) else data


def scatter_add(input: Any, dim: int, index: Any, src: Any) -> Tensor:  # noqa: A002
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices add up)."""
    x = first(input)
    s = first(src) if isinstance(src, Tensor) else as_tensor(src)
    grid, data = _scattered(x, dim, index, s, "scatter_add()")
    if x.ndim == 0:
        return x.clone() if grid is None else x + data.reshape(())
    flat = np.ravel_multi_index(np.broadcast_arrays(*grid), x.shape).reshape(-1)
    return x.reshape(-1).index_add(0, flat, data.reshape(-1)).reshape(x.shape)


def scatter_add_(self: Tensor, dim: int, index: Any, src: Any) -> Tensor:
    return self._inplace(lambda s, source: scatter_add(s, dim, index, source), src)


FUNCTIONS = {
    "gather": gather, "take_along_dim": take_along_dim, "index_select": index_select,
    "masked_select": masked_select, "scatter": scatter, "scatter_add": scatter_add,
}  # fmt: skip
METHODS = {**FUNCTIONS, "scatter_": scatter_, "scatter_add_": scatter_add_}
