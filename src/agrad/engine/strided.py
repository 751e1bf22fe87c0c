"""as_strided and storage_offset, as PyTorch's: a view of the input's storage with any
sizes and (non-negative) strides, counted in elements from the start of the storage.

The storage is the root base's array (`engine.views`): its elements in memory order, so a
transposed root (a clone of a transpose keeps its layout) is read as PyTorch reads it.
The result is one entry of the op table, the gather ``as_strided`` (flat positions into
the input, AsStridedBackward0): its VJP scatter-adds, so overlapping windows add up their
gradients as PyTorch's. Its array is then re-pointed at the storage itself and registered
as a view, so it shares memory and the version counter with the input, and a write
through it reaches the input (a write into overlapping elements is refused, as PyTorch).

Two inputs are refused rather than given a different gradient than PyTorch's: one whose
elements overlap in memory (an expanded tensor: PyTorch spreads the gradient evenly over
the aliases), and a view whose result would read storage outside it (PyTorch reads those
values but sends them no gradient). Call as_strided on the tensor they are views of, or
use ``unfold`` for sliding windows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradShapeError
from . import views
from .args import first
from .ops.core import TABLE, apply
from .tensor import Tensor


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _layout(root: Tensor) -> tuple[np.ndarray, int]:
    """Each element's position in the root's storage (in elements), and the address the
    storage starts at; refused when the root's array is not one dense block of memory."""
    a = root._array
    item = a.itemsize
    offsets: Any = np.zeros(a.shape, dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides, strict=True)):
        shape = [1] * a.ndim
        shape[axis] = n
        offsets = offsets + (np.arange(n, dtype=np.int64) * stride).reshape(shape)
    low = int(offsets.min()) if a.size else 0
    storage = (np.asarray(offsets) - low) // item
    dense = a.size == 0 or (int(storage.max()) == a.size - 1 and np.unique(storage).size == a.size)
    if not dense:
        raise AgradShapeError(
            "as_strided: the tensor's memory is not one dense block (its array is a strided "
            "window of a larger one); call it on a .contiguous() copy instead"
        )
    return storage, _address(a) + low


def storage_offset(x: Any) -> int:
    """The position of ``x``'s first element in its storage, in elements (PyTorch's)."""
    x = first(x)
    root = x._base if x._base is not None else x
    _, start = _layout(root)
    return (_address(x._array) - start) // x._array.itemsize


def _ints(name: str, values: Any, position: int) -> tuple[int, ...]:
    values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
    for k, v in enumerate(values):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(
                f"as_strided(): argument '{name}' (position {position}) must be tuple of "
                f"ints, but found element of type {type(v).__name__} at pos {k}"
            )
    return tuple(int(v) for v in values)


def _checked(size: tuple, stride: tuple, offset: int, x: Tensor, storage_size: int) -> None:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            "as_strided: Negative strides are not supported at the moment, got strides: "
            f"[{', '.join(map(str, stride))}]"
        )
    if any(n < 0 for n in size):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes=[{', '.join(map(str, size))}] and "
            f"strides=[{', '.join(map(str, stride))}]"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if 0 in size:
        return
    item = x._array.itemsize
    needed = (offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) + 1) * item
    if needed > storage_size * item:
        raise RuntimeError(
            f"setStorage: sizes [{', '.join(map(str, size))}], strides "
            f"[{', '.join(map(str, stride))}], storage offset {offset}, and itemsize {item} "
            f"requiring a storage size of {needed} are out of bounds for storage of size "
            f"{storage_size * item}"
        )


def as_strided(x: Any, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view of ``x``'s storage: element ``i`` of the result is storage element
    ``storage_offset + sum(i[k] * stride[k])`` (the input's own offset by default).

    >>> agrad.arange(5.0).as_strided((3, 2), (1, 1)).tolist()
    [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    x = first(x)
    size, stride = _ints("size", size, 1), _ints("stride", stride, 2)
    root = x._base if x._base is not None else x
    storage, start = _layout(root)
    item = x._array.itemsize
    own = (_address(x._array) - start) // item
    offset = own if storage_offset is None else _ints("storage_offset", storage_offset, 3)[0]
    _checked(size, stride, offset, x, root._array.size)
    at: Any = np.full(size, offset, dtype=np.int64)  # storage positions of the result
    for axis, (n, s) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[axis] = n
        at = at + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    position = np.empty(max(root._array.size, 1), dtype=np.int64)  # storage -> root flat
    position[np.ravel(storage)] = np.arange(root._array.size)
    mine = views.view_ids(x) if x._base is not None else np.arange(x._array.size)
    mine = np.ravel(mine)
    if np.unique(mine).size != mine.size:
        raise AgradShapeError(
            "as_strided: the input's elements overlap in memory (an expanded view); call "
            "as_strided on the tensor it was expanded from, or on a .contiguous() copy"
        )
    inverse = np.full(max(root._array.size, 1), -1, dtype=np.int64)  # root flat -> x flat
    inverse[mine] = np.arange(mine.size)
    ids = inverse[position[at]] if at.size else at
    if (ids < 0).any():
        raise AgradShapeError(
            "as_strided: the view would read storage outside the input (the input is a view "
            "of a larger tensor, and PyTorch sends those elements no gradient); call "
            "as_strided on the tensor it is a view of (x._base), or use unfold for windows"
        )
    out = apply(TABLE["as_strided"], x, ids=ids)
    whole = root._array
    if at.size:  # the result's array becomes a window onto the storage itself
        first_at = np.unravel_index(int(position[offset]), whole.shape)
        anchor = whole[tuple(slice(i, i + 1) for i in first_at)] if whole.ndim else whole[...]
    else:  # (empty: no element is read, only its strides are PyTorch's)
        anchor = np.empty(1, dtype=whole.dtype)
    out._array = np.lib.stride_tricks.as_strided(
        anchor, size, tuple(s * item for s in stride), writeable=whole.flags.writeable
    )
    views.register(TABLE["as_strided"], x, out, {"ids": ids})  # (not empty ones: no memory)
    return out


FUNCTIONS = {"as_strided": as_strided}
METHODS = {"as_strided": as_strided, "storage_offset": storage_offset}
