"""The one place where `Tensor` gets everything that computes: operators, the methods the
op table's entries declare (`public.METHODS`), in-place variants, conversions, and
``backward``/``repr``. Imported by `agrad.engine` itself, so a Tensor always has them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradShapeError
from . import autograd, compat, fills, inplace, printing, reorder, shaping
from . import functions as F
from .args import as_tensor
from .dtypes import DTYPES, DType, as_dtype, to_dtype
from .node import node_class
from .ops.core import TABLE, UNARY, apply
from .public import API, METHODS
from .size import Size
from .tensor import Tensor

OPERATORS = {
    "__add__": F.add,
    "__radd__": F.add,  # x + c and c + x record the same AddBackward0(x, c)
    "__sub__": F.sub,
    "__rsub__": F.rsub,
    "__mul__": API["mul"],  # (the generated function itself: F.mul is a wrapper of it)
    "__rmul__": API["mul"],
    "__truediv__": F.div,
    "__rtruediv__": F.rdiv,
    "__pow__": F.pow,
    "__matmul__": API["matmul"],
    "__mod__": F.remainder,
    "__floordiv__": F.floor_divide,
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
    "__neg__": F.neg,
    "__abs__": F.abs,
    "__getitem__": shaping.index,
    "__setitem__": shaping.setitem,
}


def _rpow(self: Tensor, other: Any) -> Tensor:
    return F.pow(other, self)


def _rmod(self: Tensor, other: Any) -> Tensor:
    return F.remainder(other, self)


def _rfloordiv(self: Tensor, other: Any) -> Tensor:
    return F.floor_divide(other, self)


def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return F.matmul(other, self)


def _pos(self: Tensor) -> Tensor:
    return self


def _contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """Itself when C-contiguous, else a C-ordered copy recorded as CloneBackward0, as
    PyTorch's (clone keeps a transpose's strides; this copy is what view() accepts)."""
    if self._array.flags.c_contiguous:
        return self
    out = apply(TABLE["clone"], self)
    out._array = np.ascontiguousarray(out._array)  # (clone's rule never reads its output)
    return out


def _iter(self: Tensor):
    if self._array.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(shaping.unbind(self))


def _backward(
    self: Tensor,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (PyTorch's backward)."""
    if gradient is None and inputs is None and not create_graph:  # (the common call)
        autograd.run_backward([self], [], retain_graph)
        return
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise AgradShapeError("tensor.mT is only supported on matrices or batches of matrices")
    return F.transpose(self, -2, -1)


def _T(self: Tensor) -> Tensor:
    return F.transpose(self)


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
    def method(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Tensor:
        if kwargs:  # x.add_(y, alpha=-lr)
            return self._inplace(lambda a, *rest: fn(a, *rest, **kwargs), other, *args)
        return self._inplace(fn, other, *args)

    return method


def _clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return self._inplace(F.clip, min, max)


def _fill(source: Tensor, value: Any, name: str = "") -> Tensor:
    # Recorded as where(False, self, value): no gradient flows to what self held before,
    # exactly 0 (self * 0 + value made inf or nan of an inf, and of an infinite cotangent).
    # Its node is named as PyTorch's: FillBackward2 (a number), FillBackward3 (a tensor).
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    out = F.where(np.zeros(source.shape, dtype=bool), source, value)
    if out.grad_fn is not None:
        label = name or ("FillBackward3" if isinstance(value, Tensor) else "FillBackward2")
        out.grad_fn.__class__ = node_class(label)
    return out


def _copy_from(source: Tensor, src: Any) -> Tensor:
    # As _fill: where(False, self, src), so that self's old history gets a zero gradient (a
    # copy_ of a constant into a recorded tensor kept its history: x's gradient flowed on).
    value = src if isinstance(src, Tensor) else as_tensor(src, source.dtype)
    out = F.where(np.zeros(source.shape, dtype=bool), source, value)
    if out.grad_fn is not None:
        out.grad_fn.__class__ = node_class("CopyBackwards")
    return out


def _fill_(self: Tensor, value: Any) -> Tensor:
    return self._inplace(_fill, value)


def _zero_(self: Tensor) -> Tensor:
    return self._inplace(_fill, 0, "ZeroBackward0")


def _copy_(self: Tensor, src: Any) -> Tensor:
    return self._inplace(_copy_from, src)


def _where(self: Tensor, condition: Any, other: Any) -> Tensor:
    return F.where(condition, self, other)  # torch.Tensor.where: self where condition holds


def _identity(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return self


# PyTorch's faces of a tensor's shape and dtype: a Size (a tuple printing torch.Size([...]))
# and a DType (a NumPy dtype printing torch.float32); they replace tensor.py's plain ones.
_new_tuple = tuple.__new__  # a NumPy shape is already a tuple of ints: no conversion needed


def _shape(self: Tensor) -> Size:
    return _new_tuple(Size, self._array.shape)


def _dtype(self: Tensor) -> DType:
    return as_dtype(self._array.dtype)


def _size(self: Tensor, dim: int | None = None) -> Any:
    return _new_tuple(Size, self._array.shape) if dim is None else self._array.shape[dim]


def _nelement(self: Tensor) -> int:
    return int(self._array.size)


def install() -> None:
    """Put every operator and method on `Tensor` (once, when agrad.engine is imported)."""
    for name, fn in {**OPERATORS, **METHODS}.items():
        setattr(Tensor, name, fn)
    Tensor._inplace = inplace.inplace  # type: ignore[attr-defined]  # every in-place write
    arithmetic = {"add": F.add, "sub": F.sub, "mul": F.mul, "div": F.div}
    for name, fn in arithmetic.items():  # (checked: no float written into an integer tensor)
        setattr(Tensor, f"{name}_", _inplace(inplace.arithmetic(fn)))
    dunders = {"add": "__iadd__", "sub": "__isub__", "mul": "__imul__", "div": "__itruediv__"}
    for name, dunder in dunders.items():
        setattr(Tensor, dunder, _inplace(inplace.arithmetic(arithmetic[name])))
    extra = {
        "__rpow__": _rpow, "__rmatmul__": _rmatmul, "__rmod__": _rmod,
        "__rfloordiv__": _rfloordiv, "__pos__": _pos, "__iter__": _iter,
        "__repr__": printing.tensor_repr, "backward": _backward,
        "T": property(_T), "mT": property(_mT), "to": _to,
        "type": _to, "view_as": _view_as, "reshape_as": _view_as, "expand_as": _expand_as,
        "clamp_": _clamp_, "clip_": _clamp_, "fill_": _fill_, "zero_": _zero_, "copy_": _copy_,
        "float": _cast("float32"), "double": _cast("float64"), "long": _cast("int64"),
        "int": _cast("int32"), "bool": _cast("bool"), "half": _cast("float16"),
        "cpu": _identity, "contiguous": _contiguous, "where": _where, "__ipow__": fills.pow_,
        "shape": property(_shape), "dtype": property(_dtype), "size": _size,
        "nelement": _nelement,
    }  # fmt: skip
    for name, fn in {**extra, **fills.METHODS, **reorder.METHODS, **compat.METHODS}.items():
        setattr(Tensor, name, fn)
    unary = [op.api_name for op in TABLE.values() if op.family == UNARY and op.vjp is not None]
    for name, fn in compat.inplace_unary_methods(METHODS, unary).items():
        if not hasattr(Tensor, name):  # (those written by hand, clamp_ & co., stay)
            setattr(Tensor, name, fn)


install()
