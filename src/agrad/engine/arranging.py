"""PyTorch's functions that arrange elements, composed of reshapes, flips, transposes,
concatenations and gathers of the op table: hstack, vstack, dstack, column_stack,
atleast_1d/2d/3d, block_diag, unflatten, ravel, swapdims, rot90, fliplr, flipud,
repeat_interleave, take; and the index makers tril_indices, triu_indices (no gradient).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import AgradIndexError, AgradShapeError
from . import shaping
from .args import as_tensor, first
from .ops.core import TABLE, apply, normalize_axis
from .public import API, public
from .tensor import Tensor, wrap


def _tensors(tensors: Any) -> list[Tensor]:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return [first(t) if isinstance(t, Tensor) else as_tensor(t) for t in tensors]


def _atleast(n: int, tensors: tuple) -> Any:
    ts = [_at_least(n, t) for t in _tensors(tensors)]
    return ts[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else tuple(ts)


def _at_least(n: int, x: Tensor) -> Tensor:
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 2:
        return shaping.reshape(x, (*x.shape, 1))
    if n == 3 and x.ndim == 1:
        return shaping.reshape(x, (1, x.shape[0], 1))
    return shaping.reshape(x, (1,) * (n - x.ndim) + tuple(x.shape))


@public()
def atleast_1d(*tensors: Any) -> Any:
    return _atleast(1, tensors)


@public()
def atleast_2d(*tensors: Any) -> Any:
    return _atleast(2, tensors)


@public()
def atleast_3d(*tensors: Any) -> Any:
    return _atleast(3, tensors)


def _cat(ts: list[Tensor], dim: int, what: str) -> Tensor:
    if not ts:
        raise AgradShapeError(f"{what}(): expects a non-empty TensorList")
    return API["cat"](ts, dim)


@public()
def hstack(tensors: Any) -> Tensor:
    """Concatenation along dim 1 (dim 0 for 1-D tensors)."""
    ts = [_at_least(1, t) for t in _tensors((tensors,))]
    return _cat(ts, 0 if ts and ts[0].ndim == 1 else 1, "hstack")


@public("row_stack")
def vstack(tensors: Any) -> Tensor:
    return _cat([_at_least(2, t) for t in _tensors((tensors,))], 0, "vstack")


@public()
def dstack(tensors: Any) -> Tensor:
    return _cat([_at_least(3, t) for t in _tensors((tensors,))], 2, "dstack")


@public()
def column_stack(tensors: Any) -> Tensor:
    """1-D (and 0-d) tensors become columns, then all are joined along dim 1."""
    ts = [shaping.reshape(t, (-1, 1)) if t.ndim <= 1 else t for t in _tensors((tensors,))]
    return _cat(ts, 1, "column_stack")


@public()
def block_diag(*tensors: Any) -> Tensor:
    """The tensors (0-d, 1-D as a row, or 2-D) as blocks down the diagonal, zeros elsewhere."""
    blocks: list[Tensor] = []
    for t in _tensors(tensors):
        if t.ndim > 2:
            raise AgradShapeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{len(blocks)} has {t.ndim} dimensions"
            )
        blocks.append(shaping.reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not blocks:
        return wrap(np.zeros((0, 0)))
    dtype = np.result_type(*(b._array.dtype for b in blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [wrap(np.zeros((r, left), dtype)), b, wrap(np.zeros((r, width - left - c), dtype))]
        rows.append(API["cat"](parts, 1))
        left += c
    return API["cat"](rows, 0)


@public(method=True)
def unflatten(input: Any, dim: int, sizes: Any) -> Tensor:  # noqa: A002
    """Dim ``dim`` split into ``sizes`` (one of them may be -1)."""
    x = first(input)
    d = normalize_axis(dim, x.ndim, "unflatten")
    sizes = tuple(int(s) for s in sizes)
    known = math.prod(s for s in sizes if s != -1)
    if (
        sizes.count(-1) > 1
        or (-1 not in sizes and known != x.shape[d])
        or (-1 in sizes and (known == 0 or x.shape[d] % known))
    ):
        raise AgradShapeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({x.shape[d]}) in the input tensor"
        )
    return shaping.reshape(x, tuple(x.shape[:d]) + sizes + tuple(x.shape[d + 1 :]))


@public(method=True)
def ravel(input: Any) -> Tensor:  # noqa: A002
    return shaping.reshape(first(input), (-1,))


@public(method=True)
def swapdims(input: Any, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    return shaping.transpose(first(input), dim0, dim1)


def _flip(x: Tensor, d: int) -> Tensor:
    return shaping.index(x, (slice(None),) * d + (np.arange(x.shape[d] - 1, -1, -1),))


@public(method=True)
def rot90(input: Any, k: int = 1, dims: Any = (0, 1)) -> Tensor:  # noqa: A002
    """Rotation by 90°·k in the plane ``dims``, from the first axis towards the second."""
    x = first(input)
    dims = list(dims)
    if len(dims) != 2:
        raise AgradShapeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise AgradShapeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    a, b = (normalize_axis(d, x.ndim, "rot90") for d in dims)
    if a == b:
        raise AgradShapeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")  # fmt: skip  # noqa: E501
    k %= 4
    if k == 1:
        return shaping.transpose(_flip(x, b), a, b)
    if k == 2:
        return _flip(_flip(x, a), b)
    if k == 3:
        return shaping.transpose(_flip(x, a), a, b)
    return x


@public(method=True)
def fliplr(input: Any) -> Tensor:  # noqa: A002
    x = first(input)
    if x.ndim < 2:
        raise AgradShapeError("Input must be >= 2-d.")
    return _flip(x, 1)


@public(method=True)
def flipud(input: Any) -> Tensor:  # noqa: A002
    x = first(input)
    if x.ndim < 1:
        raise AgradShapeError("Input must be >= 1-d.")
    return _flip(x, 0)


@public(method=True)
def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:  # fmt: skip
    """Each slice along ``dim`` (each element of the flattened input) repeated; with only
    a tensor of counts, the indices each count repeats (torch.repeat_interleave(counts))."""
    if repeats is None:  # torch.repeat_interleave(counts)
        counts = np.asarray(first(input)._array)
        return wrap(np.repeat(np.arange(counts.size), counts.reshape(-1)).astype(np.int64))
    x = first(input)
    if dim is None:
        x, d = shaping.reshape(x, (-1,)), 0
    else:
        d = normalize_axis(dim, max(x.ndim, 1), "repeat_interleave")
    counts = np.asarray(repeats._array if isinstance(repeats, Tensor) else repeats).reshape(-1)
    n = x.shape[d] if x.ndim else 1
    if counts.size not in (1, n):
        raise AgradShapeError("repeats must have the same size as input along dim")
    if np.any(counts < 0):
        raise AgradShapeError("repeats can not be negative")
    positions = np.repeat(np.arange(n), np.broadcast_to(counts, (n,)))
    if x.ndim == 0:
        x = shaping.reshape(x, (1,))
    return shaping.index(x, (slice(None),) * d + (positions,))


@public(method=True)
def take(input: Any, index: Any) -> Tensor:  # noqa: A002
    """The flattened input's elements at ``index`` (negative counts from the end)."""
    x = first(input)
    positions = np.asarray(index._array if isinstance(index, Tensor) else index)
    if positions.dtype.kind not in "iu":
        raise AgradShapeError("take(): Expected a long tensor for index")
    n = x.numel()
    bad = positions[(positions < -n) | (positions >= n)]
    if bad.size:
        raise AgradIndexError(
            f"out of range: tried to access index {int(bad.flat[0])} on a tensor of {n} elements."
        )
    return shaping.index(shaping.reshape(x, (-1,)), (positions % max(n, 1),))


def _triangle(row: int, col: int, offset: int, upper: bool) -> Tensor:
    mask = np.triu(np.ones((row, col), bool), offset) if upper else \
        np.tril(np.ones((row, col), bool), offset)  # fmt: skip
    return wrap(np.stack(np.nonzero(mask)).astype(np.int64).reshape(2, -1))


@public()
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:  # fmt: skip
    return _triangle(row, col, offset, upper=False)


@public()
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:  # fmt: skip
    return _triangle(row, col, offset, upper=True)


@public()
def numel(input: Any) -> int:  # noqa: A002
    return int(first(input).numel())


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: the windows of ``size`` along ``dimension`` every ``step``, as a new
    last dim: a view, as PyTorch's (overlapping windows add up their gradients)."""
    x = first(self)
    d = normalize_axis(dimension, max(x.ndim, 1), "unfold")
    n = x.shape[d] if x.ndim else 1
    if size > n:
        raise AgradShapeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise AgradShapeError(f"step is {step} but must be > 0")
    if x.ndim == 0:
        return shaping.reshape(x, (1,) * size) if size else x
    return apply(TABLE["unfold"], x, dimension=d - x.ndim, size=size, step=step)


METHODS = {"unfold": unfold}
