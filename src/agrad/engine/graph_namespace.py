"""The array namespace VJP rules use under ``create_graph=True``: each name records its op.

The same names as `kernels.NAMESPACE`, with NumPy's signatures (a test compares the two),
mapped straight to the op table — so a VJP rule written once computes first derivatives
on arrays and, through this module, a differentiable graph of its own (Hessians). Only
an op that would do nothing (a cast to the same dtype, a broadcast to the same shape) is
skipped, as NumPy would return its input.
"""

from __future__ import annotations

from typing import Any

from .args import astype as _astype
from .args import first
from .args import operand as _operand
from .ops.core import TABLE, apply
from .tensor import Tensor

_OP = TABLE


def exp(x: Any, /) -> Tensor:
    return apply(_OP["exp"], first(x))


def log(x: Any, /) -> Tensor:
    return apply(_OP["log"], first(x))


def log1p(x: Any, /) -> Tensor:
    return apply(_OP["log1p"], first(x))


def sin(x: Any, /) -> Tensor:
    return apply(_OP["sin"], first(x))


def cos(x: Any, /) -> Tensor:
    return apply(_OP["cos"], first(x))


def sinh(x: Any, /) -> Tensor:
    return apply(_OP["sinh"], first(x))


def cosh(x: Any, /) -> Tensor:
    return apply(_OP["cosh"], first(x))


def sqrt(x: Any, /) -> Tensor:
    return apply(_OP["sqrt"], first(x))


def abs(x: Any, /) -> Tensor:  # noqa: A001 - NumPy's name
    return apply(_OP["abs"], first(x))


def sign(x: Any, /) -> Tensor:
    return apply(_OP["sign"], first(x))


def sigmoid(x: Any) -> Tensor:
    return apply(_OP["sigmoid"], first(x))


def where(condition: Any, x: Any = None, y: Any = None, /) -> Tensor:
    return apply(_OP["where"], first(condition), _operand(x), _operand(y))


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    return apply(_OP["sum"], first(x), axis=axis, keepdims=keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return apply(_OP["prod"], first(x), axis=axis, keepdims=keepdims)


def amax(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return apply(_OP["amax"], first(x), axis=axis, keepdims=keepdims)


def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Tensor:
    x, shape = first(array), tuple(shape)
    return x if x.shape == shape else apply(_OP["expand"], x, shape=shape)


def swapaxes(a: Any, axis1: int, axis2: int) -> Tensor:
    return apply(_OP["transpose"], first(a), dim0=int(axis1), dim1=int(axis2))


def matmul(x1: Any, x2: Any, /) -> Tensor:
    return apply(_OP["matmul"], first(x1), first(x2))


def sum_to(x: Any, shape: tuple) -> Tensor:
    x, shape = first(x), tuple(shape)
    return x if x.shape == shape else apply(_OP["sum_to"], x, shape=shape)


def index_backward(g: Any, shape: tuple, index: tuple, advanced: bool = False) -> Tensor:
    return apply(_OP["index_backward"], first(g), shape=tuple(shape), index=index,
                 advanced=advanced)  # fmt: skip


def astype(x: Any, dtype: Any) -> Tensor:
    return _astype(x, dtype)


def permute(x: Any, axes: tuple) -> Tensor:
    return apply(_OP["permute"], first(x), axes=tuple(int(a) for a in axes))


def cumsum(x: Any, axis: int = 0) -> Tensor:
    return apply(_OP["cumsum"], first(x), axis=axis)
