"""Argument handling for the public functions: tensors from what users pass, PyTorch's
and NumPy's names for axes (``dim``/``axis``, ``keepdim``/``keepdims``), shapes.

Shared by `functions` (and the functions it generates from the op table) and `shaping`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import AgradTypeError, AgradValueError
from .dtypes import get_default_dtype, to_dtype
from .escapes import read_values
from .ops.core import TABLE, apply
from .promotion import CASTS, result_type
from .tensor import Tensor, to_data, wrap

SCALAR = (numbers.Number, np.generic)
_PASS_THROUGH = (Tensor, *SCALAR)


def number(value: Any, fn: str, name: str) -> Any:
    """A number parameter as a Python number: PyTorch's TypeError for a tensor that requires
    grad (its gradient would be lost in silence, and a check would agree with the loss); a
    0-d tensor without one is read, as the Python number it holds."""
    if isinstance(value, Tensor):
        if value._rg:
            raise AgradTypeError(
                f"{fn}(): argument '{name}' must be a number, not a Tensor that requires grad "
                "(its gradient would be lost); pass a number, or .item() to cut it"
            )
        return value.item()
    return value


def as_tensor(value: Any, dtype: Any = None) -> Tensor:
    """A Tensor from a tensor, array, number or nested list (floats get the default dtype)."""
    if isinstance(value, Tensor):
        return value if dtype is None else astype(value, dtype)
    data = np.asarray(to_data(value))
    if dtype is not None:
        data = data.astype(to_dtype(dtype), copy=False)
    elif (
        data.dtype.kind == "f"
        and data.dtype != get_default_dtype()
        and not isinstance(value, np.ndarray)
    ):
        data = data.astype(get_default_dtype())
    elif data.dtype.kind in "OUS":
        raise AgradValueError(f"cannot make a tensor from {type(value).__name__} {value!r}")
    return wrap(data)


def astype(x: Any, dtype: Any) -> Tensor:
    """``x`` cast to ``dtype``; integers and booleans carry no gradient (as in PyTorch)."""
    x, dtype = first(x), to_dtype(dtype)
    if x.dtype == dtype:
        return x
    if dtype.kind == "f" and x.dtype.kind == "f" and dtype.itemsize < x.dtype.itemsize:
        casts = CASTS
        if casts.seen is not None:
            casts.seen.append(dtype)
        if casts.wide:
            return x
    if dtype.kind not in "fc":  # (a value read: a replay would hold it fixed)
        read_values(x)
        return wrap(x._array.astype(dtype))
    return apply(TABLE["astype"], x, dtype=dtype)


def operand(x: Any) -> Any:
    """Tensors pass through; Python/NumPy scalars stay raw (weak dtype, as PyTorch's)."""
    if isinstance(x, _PASS_THROUGH):
        return x
    return as_tensor(x)


def first(a: Any) -> Tensor:
    """The leading operand, always a tensor."""
    return a if isinstance(a, Tensor) else as_tensor(a)


def pair(a: Any, b: Any, floating: bool = False) -> tuple[Tensor, Any]:
    """Operands of a binary op, promoted as PyTorch promotes them (`promotion.result_type`:
    an int64 tensor times a float32 one is float32, a float32 tensor plus a 0-d float64 one
    float32, an integer tensor times 1.5 the default dtype); with ``floating`` an integer or
    bool result is the default float dtype (``/``). A Python number stays a number (NumPy
    computes it in the other operand's dtype, as PyTorch does); a NumPy scalar becomes one."""
    a, b = first(a), operand(b)
    if isinstance(b, np.generic):
        b = b.item()
    dtype = result_type(a, b)
    if floating and dtype.kind not in "fc":
        dtype = get_default_dtype().dtype
    if a._array.dtype != dtype:
        a = astype(a, dtype)
    if isinstance(b, Tensor) and b._array.dtype != dtype:
        b = astype(b, dtype)
    return a, b


def floated(x: Any) -> Tensor:
    """``x`` as a tensor to compute a float function of: an integer or bool one cast to the
    default float dtype (PyTorch's ``sqrt`` of an int64 tensor is float32 by default)."""
    x = first(x)
    if x._array.dtype.kind in "fc":
        return x
    return astype(x, get_default_dtype())


def promoted(*values: Any) -> list[Any]:
    """Several operands (``where``'s two values) as tensors of their PyTorch result type."""
    values = tuple(v.item() if isinstance(v, np.generic) else operand(v) for v in values)
    dtype = result_type(*values)
    return [astype(v, dtype) if isinstance(v, Tensor) else as_tensor(v, dtype) for v in values]


def axis_of(dim: Any, axis: Any) -> Any:
    """PyTorch's ``dim`` or NumPy's ``axis``: an int, a tuple of ints, or None."""
    value = axis if dim is None else dim
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, Tensor):
        value = int(value.item())
    if isinstance(value, float):
        value = int(value)
    return value


def reduced_axes(dim: Any, axis: Any) -> Any:
    """A reduction's axes: `axis_of`'s, with no axes given (``dim=()``, ``dim=[]``) meaning
    all of them, as in PyTorch (NumPy reduces none)."""
    value = axis_of(dim, axis)
    return None if value == () else value


def keep_of(keepdim: Any, keepdims: Any) -> bool:
    """PyTorch's ``keepdim`` or NumPy's ``keepdims``."""
    return bool(keepdims if keepdim is None else keepdim)


def shape_of(args: tuple) -> tuple[int, ...]:
    """A shape from ``f(2, 3)`` or ``f((2, 3))`` (or a list, array or tensor of sizes)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple, Tensor, np.ndarray)):
        args = tuple(np.asarray(to_data(args[0])).reshape(-1).tolist())
    try:
        return tuple(int(n) for n in args)
    except (TypeError, ValueError, OverflowError):
        raise AgradValueError(f"a shape must be whole numbers, got {args!r}") from None
