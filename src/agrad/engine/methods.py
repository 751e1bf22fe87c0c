"""Tensor operators and methods: each forwards to the function of the same meaning.

Installed onto `Tensor` at import, so the class body stays the data model and
every computation goes through `functions` (and so through the op table).
"""

from __future__ import annotations

from typing import Any

from . import functions as F
from .dtypes import DTYPES, to_dtype
from .tensor import Tensor

OPERATORS = {
    "__add__": F.add,
    "__radd__": F.add,  # x + c and c + x record the same AddBackward0(x, c)
    "__sub__": F.sub,
    "__rsub__": F.rsub,
    "__mul__": F.mul,
    "__rmul__": F.mul,
    "__truediv__": F.div,
    "__rtruediv__": F.rdiv,
    "__pow__": F.pow,
    "__matmul__": F.matmul,
    "__lt__": F.lt,
    "__le__": F.le,
    "__gt__": F.gt,
    "__ge__": F.ge,
    "__eq__": F.eq,
    "__ne__": F.ne,
    "__and__": F.logical_and,
    "__or__": F.logical_or,
    "__xor__": F.logical_xor,
    "__invert__": F.logical_not,
}

# Methods whose first argument is the tensor itself, under PyTorch's names.
METHODS = (
    "exp", "log", "log1p", "expm1", "sqrt", "abs", "sign", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu",
    "reciprocal", "square", "neg", "negative", "clone", "sum", "mean", "var", "std", "cumsum",
    "prod", "amax", "amin", "max", "min", "argmax", "argmin", "any", "all", "logsumexp",
    "softmax", "log_softmax", "norm", "matmul", "dot", "mm", "mv", "outer", "reshape", "view",
    "flatten", "permute", "transpose", "expand", "broadcast_to", "unsqueeze", "squeeze",
    "clip", "clamp", "maximum", "minimum", "pow", "add", "sub", "mul", "div", "lt", "le", "gt",
    "ge", "eq", "ne", "softplus",
)  # fmt: skip


def _rpow(self: Tensor, other: Any) -> Tensor:
    return F.pow(other, self)


def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return F.matmul(other, self)


def _neg(self: Tensor) -> Tensor:
    return F.neg(self)


def _pos(self: Tensor) -> Tensor:
    return self


def _abs(self: Tensor) -> Tensor:
    return F.abs(self)


def _mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise F.AgradShapeError("tensor.mT is only supported on matrices or batches of matrices")
    return F.transpose(self, -2, -1)


def _T(self: Tensor) -> Tensor:
    return F.transpose(self)


def _t(self: Tensor) -> Tensor:
    return F.t(self)


def _to(self: Tensor, *args: Any, dtype: Any = None, **_: Any) -> Tensor:
    for a in args:  # .to("cpu"), .to(agrad.float32), .to(other_tensor)
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif not isinstance(a, str) or a in DTYPES:
            dtype = a
    return self if dtype is None else F.astype(self, to_dtype(DTYPES.get(dtype, dtype)))


def _cast(dtype_name: str):
    def method(self: Tensor) -> Tensor:
        return F.astype(self, DTYPES[dtype_name])

    return method


def _view_as(self: Tensor, other: Tensor) -> Tensor:
    return F.reshape(self, other.shape)


def _expand_as(self: Tensor, other: Tensor) -> Tensor:
    return F.expand(self, other.shape)


def _inplace(fn: Any):
    def method(self: Tensor, other: Any, *args: Any) -> Tensor:
        return self._inplace(fn, other, *args)

    return method


def _clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return self._inplace(F.clip, min, max)


def _where(self: Tensor, condition: Any, other: Any) -> Tensor:
    return F.where(condition, self, other)  # torch.Tensor.where: self where condition holds


def _identity(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return self


def install() -> None:
    for name, fn in OPERATORS.items():
        setattr(Tensor, name, fn)
    for name in METHODS:
        setattr(Tensor, name, getattr(F, name))
    for name, fn in {"add_": F.add, "sub_": F.sub, "mul_": F.mul, "div_": F.div}.items():
        setattr(Tensor, name, _inplace(fn))
    extra = {
        "__rpow__": _rpow, "__rmatmul__": _rmatmul, "__neg__": _neg, "__pos__": _pos,
        "__abs__": _abs, "T": property(_T), "mT": property(_mT), "t": _t, "to": _to,
        "type": _to, "view_as": _view_as, "reshape_as": _view_as, "expand_as": _expand_as,
        "clamp_": _clamp_, "clip_": _clamp_, "float": _cast("float32"),
        "double": _cast("float64"), "long": _cast("int64"), "int": _cast("int32"),
        "bool": _cast("bool"), "half": _cast("float16"), "cpu": _identity,
        "contiguous": _identity,
        "where": _where,
    }  # fmt: skip
    for name, fn in extra.items():
        setattr(Tensor, name, fn)


install()
