"""Shape rules shared by many op-table entries: what shape an op gives, from its operands'
shapes and its parameters, without computing anything (JAX's abstract evaluation).

A rule raises `AgradShapeError` (or `AgradValueError` for a bad parameter) naming the op
and the shapes, so a mistake is reported before any arithmetic. The batching rule of an
entry that names no other is chosen from its shape rule (see `batching.DEFAULTS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradIndexError, AgradShapeError, AgradValueError

Shape = tuple[int, ...]


def same_shape(shape: Shape, **_: Any) -> Shape:
    """Elementwise, one operand: the shape is kept."""
    return tuple(shape)


def broadcast_shape(*shapes: Shape, **_: Any) -> Shape:
    """Elementwise with NumPy's broadcasting."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        text = " and ".join(str(tuple(s)) for s in shapes)
        raise AgradShapeError(
            f"shapes {text} cannot be broadcast together: trailing dimensions must be "
            "equal or 1 (reshape or transpose an operand)",
            torch=_torch_broadcast_text(shapes),
        ) from None


def _torch_broadcast_text(shapes: tuple[Shape, ...]) -> str | None:
    """PyTorch's message: the first pair that fails, its last mismatching dimension."""
    done: tuple = tuple(shapes[0])
    for b in shapes[1:]:
        a, b = done, tuple(b)
        n = max(len(a), len(b))
        for dim in range(n - 1, -1, -1):
            i, j = dim - (n - len(a)), dim - (n - len(b))
            sa, sb = (a[i] if i >= 0 else 1), (b[j] if j >= 0 else 1)
            if sa != sb and sa != 1 and sb != 1:
                return (
                    f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {dim}"
                )
        done = tuple(np.broadcast_shapes(a, b))
    return None


def normalize_axis(axis: int, ndim: int, op: str = "") -> int:
    """A non-negative axis, or an error naming the op and the valid range. A 0-d tensor
    takes 0 and -1, as in PyTorch (``torch.softmax(torch.tensor(2.), -1)`` is 1)."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise AgradValueError(
            f"{op + ': ' if op else ''}axis must be one integer here, got {axis!r}"
        )
    low, high = -max(ndim, 1), max(ndim, 1) - 1
    if not low <= axis <= high:
        raise AgradIndexError(
            f"{op + ': ' if op else ''}axis {axis} is out of range for a tensor with {ndim} "
            f"dimension(s) (valid: {low}..{high})",
            torch=f"Dimension out of range (expected to be in range of [{low}, {high}], but got "
            f"{axis})",
        )
    return axis % ndim if ndim else 0


def reduced_shape(shape: Shape, axis: Any = None, keepdims: bool = False, op: str = "") -> Shape:
    """``shape`` reduced over ``axis`` (an int, a tuple, or None for every axis)."""
    if axis is None:
        axes = set(range(len(shape)))
    else:
        axes = {normalize_axis(a, len(shape), op) for a in _as_tuple(axis)}
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def reduce_shape(shape: Shape, axis: Any = None, keepdims: bool = False, **_: Any) -> Shape:
    """The shape rule of a reduction over ``axis`` (sum, mean, norm, ...)."""
    return reduced_shape(shape, axis, keepdims)


def along_axis_shape(shape: Shape, axis: int, **_: Any) -> Shape:
    """The shape rule of an op along one axis that keeps the shape (softmax, cumsum)."""
    normalize_axis(axis, len(shape))
    return tuple(shape)


def kept_shape(shape: Shape, axis: Any) -> Shape:
    """``shape`` with the reduced axes kept as size 1 (to re-expand a reduction's grad)."""
    return reduced_shape(shape, axis, keepdims=True)


def _as_tuple(axis: Any) -> tuple:
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def batch_of(g: Any, out_ndim: int) -> Shape:
    """Leading batch dimensions a cotangent carries beyond the op's output (jacobian rows)."""
    return tuple(g.shape[: g.ndim - out_ndim])
