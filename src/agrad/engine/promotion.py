"""PyTorch's type promotion (``torch.result_type``), and its refusals of mixed dtypes.

Categories rank bool < integer < floating < complex. Among operands of one category a
dimensioned tensor outranks a 0-d tensor, which outranks a Python number; an operand of a
higher category wins whatever its rank, but a Python float brings the default dtype (a
0-d tensor its own dtype). So an int64 tensor times a float32 tensor is float32, a float32
tensor plus a 0-d float64 tensor is float32, and an integer tensor times 1.5 has the
default dtype (NumPy would make the last two float64). Ops that compute in floats (``/``,
``sqrt``) give integer and bool operands the default float dtype.

The matrix products promote nothing: PyTorch raises on operands of two dtypes, with a
message that names its kernel (`matmul_dtype_error`), and so do `linear` and convolutions.
"""

from __future__ import annotations

import numbers
import threading
from typing import Any

import numpy as np

from ..errors import AgradDtypeError
from .dtypes import get_default_dtype
from .grad_attr import c_type_name, scalar_type_name
from .tensor import Tensor

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64)}
_INT64, _BOOL = np.dtype(np.int64), np.dtype(np.bool_)


def category(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    return _CATEGORY[dtype.kind]


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """``torch.promote_types``: the higher category's dtype; within one, the wider (an
    int64 and a float16 give float16, where NumPy gives float64)."""
    if a == b:
        return a
    ka, kb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ka == kb or (ka + kb == 5):  # same category, or a complex and a float: widen
        return np.promote_types(a, b)
    return a if ka > kb else b


def _scalar_dtype(value: Any) -> np.dtype:
    """A Python number's dtype as an operand: the default dtype for a float."""
    if isinstance(value, (bool, np.bool_)):
        return _BOOL
    if isinstance(value, numbers.Integral):
        return _INT64
    default = get_default_dtype().dtype
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        return _COMPLEX_OF.get(default, np.dtype(np.complex128))
    return default


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """PyTorch's combine_categories: ``higher`` (a higher-ranked operand's dtype) wins
    unless ``lower`` is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    kh, kl = _CATEGORY[higher.kind], _CATEGORY[lower.kind]
    if kh >= kl:
        return higher
    if kh == 2 and kl == 3:  # a float tensor and a complex operand: the float's complex
        return _COMPLEX_OF.get(higher, np.dtype(np.complex128))
    return promote_types(higher, lower)


def result_type(*operands: Any) -> np.dtype:
    """The dtype PyTorch computes ``operands`` (tensors or Python numbers) in."""
    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, Tensor):
            d = x._array.dtype
            if x._array.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        elif x is not None:
            d = _scalar_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    found = _combine(dim, _combine(zero, wrapped))
    return get_default_dtype().dtype if found is None else found


def floating(dtype: np.dtype) -> np.dtype:
    """``dtype``, or the default float dtype for an integer or bool one."""
    return dtype if dtype.kind in "fc" else get_default_dtype().dtype


class _Casts(threading.local):
    """The gradient checker's float64 twin (agrad.check.callables) sets ``wide`` while it
    calls a function: a cast to a narrower float then leaves x as it is (as a cast to its
    own dtype does), so finite differences see the smooth function, not float32's
    staircase. While ``seen`` holds a list, each such cast appends its dtype there (the
    precision the function computes in). Per thread: another thread's casts keep their
    meaning while a check runs."""

    wide = False
    seen: list | None = None


CASTS = _Casts()


def mixed_floats(*dtypes: np.dtype) -> bool:
    """Whether a product's refusal of mixed dtypes is waived: while the checker's float64
    twin runs (``CASTS.wide``), its float64 values meet a function's own float32
    constants (a module's input, a closure's matrix), and promote as sums do."""
    return CASTS.wide and all(d.kind == "f" for d in dtypes)


# ---- the matrix products: one dtype or PyTorch's RuntimeError ------------------------------


def matmul_dtype_error(a: np.dtype, b: np.dtype, ndims: tuple[int, int]) -> AgradDtypeError:
    """PyTorch's error for ``a @ b`` of two dtypes: its text names the kernel the shapes
    reach (dot, addmv, mm or bmm)."""
    na, nb = ndims
    if na == 1 and nb == 1:
        return AgradDtypeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{scalar_type_name(a)} and {scalar_type_name(b)}"
        )
    if nb == 1:
        v, m = scalar_type_name(b), scalar_type_name(a)
        return AgradDtypeError(
            f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}"
        )
    if nb == 2 or na == 1:
        return AgradDtypeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{c_type_name(a)} != {c_type_name(b)}"
        )
    return expected_scalar_type(a, b)


def expected_scalar_type(a: np.dtype, b: np.dtype) -> AgradDtypeError:
    """PyTorch's ``expected scalar type Float but found Double`` (bmm, convolutions)."""
    return AgradDtypeError(
        f"expected scalar type {scalar_type_name(a)} but found {scalar_type_name(b)}"
    )


def check_addmm(bias: Tensor | None, mat1: Tensor, mat2: Tensor) -> None:
    """PyTorch's checks of ``addmm(bias, mat1, mat2)`` (and of ``linear`` with a bias):
    the bias against mat2 first, then mat1."""
    d2 = mat2._array.dtype
    dtypes = [t._array.dtype for t in (bias, mat1, mat2) if t is not None]
    if mixed_floats(*dtypes):
        return
    if bias is not None and bias._array.dtype != d2:
        raise AgradDtypeError(
            "self and mat2 must have the same dtype, but got "
            f"{scalar_type_name(bias._array.dtype)} and {scalar_type_name(d2)}"
        )
    if mat1._array.dtype != d2:
        raise AgradDtypeError(
            "mat1 and mat2 must have the same dtype, but got "
            f"{scalar_type_name(mat1._array.dtype)} and {scalar_type_name(d2)}"
        )


def check_conv(x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's checks of a convolution's dtypes: the bias against the input first."""
    dx = x._array.dtype
    if mixed_floats(*(t._array.dtype for t in (x, weight, bias) if t is not None)):
        return
    if bias is not None and bias._array.dtype != dx:
        raise AgradDtypeError(
            f"Input type ({c_type_name(dx)}) and bias type ({c_type_name(bias._array.dtype)}) "
            "should be the same"
        )
    if weight._array.dtype != dx:
        raise expected_scalar_type(dx, weight._array.dtype)
