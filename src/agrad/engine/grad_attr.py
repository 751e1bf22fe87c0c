"""What may be assigned to ``Tensor.grad``, and ``Tensor.grad_dtype``: PyTorch's checks and
texts (code written for PyTorch catches them, and tests compare the wording)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradAutogradError

# PyTorch's two names for a dtype in its message: the C++ scalar's, then the ScalarType's.
_C_NAMES = {
    "float64": ("double", "Double"), "float32": ("float", "Float"),
    "float16": ("c10::Half", "Half"),
    "int64": ("long int", "Long"), "int32": ("int", "Int"), "int16": ("short int", "Short"),
    "int8": ("signed char", "Char"), "uint8": ("unsigned char", "Byte"), "bool": ("bool", "Bool"),
    "complex128": ("c10::complex<double>", "ComplexDouble"),
    "complex64": ("c10::complex<float>", "ComplexFloat"),
}  # fmt: skip


def not_a_tensor(value: Any) -> TypeError:
    """PyTorch's error for ``t.grad = value`` when ``value`` is neither a Tensor nor None."""
    return TypeError(
        f"assigned grad expected to be a Tensor or None but got grad of type {type_name(value)}"
    )


def checked_grad(tensor: Any, value: Any) -> Any:
    """The tensor ``value`` if it may become ``tensor.grad``; PyTorch's RuntimeError if not."""
    wanted = grad_dtype_of(tensor)
    if wanted is not None and value._array.dtype != wanted:
        got, want = _C_NAMES.get(value._array.dtype.name), _C_NAMES.get(wanted.name)
        raise AgradAutogradError(
            f"attempting to assign a gradient with dtype '{got[0] if got else value.dtype}' to "
            f"a tensor with grad_dtype '{want[1] if want else wanted}'. The gradient must match "
            "the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
            "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. "
            "Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
            "may break downstream systems that assume they match."
        )
    if value.shape != tensor.shape:
        raise AgradAutogradError(
            f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
            f"size '{list(tensor.shape)}'. Please ensure that the gradient and the tensor are "
            "the same size"
        )
    return value


def c_type_name(dtype: np.dtype) -> str:
    """PyTorch's C++ name of a dtype ('float', 'long int'), as some of its messages print it."""
    names = _C_NAMES.get(dtype.name)
    return names[0] if names else str(dtype)


def scalar_type_name(dtype: np.dtype) -> str:
    """PyTorch's ScalarType name of a dtype ('Float', 'Long'), as its messages print it."""
    names = _C_NAMES.get(dtype.name)
    return names[1] if names else str(dtype)


def type_name(value: Any) -> str:
    """A type's name as PyTorch's messages print it: builtins bare, others qualified."""
    kind = type(value)
    return (
        kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    )


def grad_dtype_of(tensor: Any) -> np.dtype | None:
    """The dtype a gradient of ``tensor`` must have (None: any)."""
    if tensor.__dict__.get("_any_grad_dtype"):
        return None
    return tensor._array.dtype


def _get_grad_dtype(self: Any) -> Any:
    from .dtypes import as_dtype

    _leaf_only(self, "accessed")
    wanted = grad_dtype_of(self)
    return None if wanted is None else as_dtype(wanted)


def _set_grad_dtype(self: Any, dtype: Any) -> None:
    from .dtypes import to_dtype

    _leaf_only(self, "set")
    if dtype is None:
        self.__dict__["_any_grad_dtype"] = True
    elif to_dtype(dtype) == self._array.dtype:
        self.__dict__.pop("_any_grad_dtype", None)
    else:  # PyTorch would cast every incoming gradient; agrad's engine does not
        raise NotImplementedError(
            f"agrad cannot make a {self.dtype} tensor's gradients {dtype}: set grad_dtype to "
            "the tensor's own dtype or None, or cast the gradient yourself after backward"
        )


def _leaf_only(t: Any, verb: str) -> None:
    if t.grad_fn is not None:
        raise AgradAutogradError(f"grad_dtype can only be {verb} on leaf tensors.")


grad_dtype = property(_get_grad_dtype, _set_grad_dtype, doc="The dtype .grad must have.")
