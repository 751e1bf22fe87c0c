"""PyTorch API that older and teaching code uses: typed constructors (``FloatTensor``),
``new_*`` constructors, ``x.type()``, ``allclose``/``isclose``, and PyTorch's keyword
spellings (``input=``, ``other=``, ``out=``) on the ``agrad.*`` functions."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from . import creation
from .args import as_tensor
from .dtypes import DTYPES
from .escapes import read_values
from .grad_attr import grad_dtype
from .grad_mode import STATE, no_grad
from .graph_hooks import FEATURES, refresh
from .inplace import arithmetic
from .return_types import HISTOGRAM
from .tensor import Tensor, _autograd_error, to_data, wrap

# ---- typed constructors -------------------------------------------------------------------

_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor",
}  # fmt: skip


class _TypedMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._array.dtype == cls.dtype  # type: ignore[attr-defined]


def _typed(numpy_name: str) -> type:
    """``agrad.FloatTensor``: ``FloatTensor([1, 2])`` or ``FloatTensor(2, 3)`` make a float32
    tensor, and ``isinstance(x, agrad.FloatTensor)`` tests the dtype, as in PyTorch."""

    def __new__(cls: Any, *args: Any) -> Tensor:  # noqa: N807 - the class call
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            return wrap(np.array(to_data(args[0]), dtype=cls.dtype))
        return wrap(np.zeros(tuple(int(n) for n in args), dtype=cls.dtype))

    name = _TYPE_NAMES[numpy_name]
    return _TypedMeta(name, (), {"__new__": __new__, "dtype": np.dtype(numpy_name),
                                 "__doc__": f"A {numpy_name} tensor (torch.{name})."})  # fmt: skip


TYPED = {name: _typed(numpy_name) for numpy_name, name in _TYPE_NAMES.items()}


def tensor_type(self: Tensor, dtype: Any = None, **kwargs: Any) -> Any:
    """``x.type()``: 'torch.FloatTensor' & co.; ``x.type(dtype)``: ``x`` cast to it."""
    if dtype is None and not kwargs:
        return f"torch.{_TYPE_NAMES.get(self._array.dtype.name, self._array.dtype.name)}"
    if isinstance(dtype, str) and dtype.startswith("torch."):
        names = {v: k for k, v in _TYPE_NAMES.items()}
        dtype = names.get(dtype[len("torch.") :], dtype[len("torch.") :])
    if isinstance(dtype, _TypedMeta):
        dtype = dtype.dtype  # type: ignore[attr-defined]
    return self.to(DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype)


# ---- new_* constructors: the dtype of self unless given ------------------------------------


def _new(maker: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, *size: Any, dtype: Any = None, requires_grad: bool = False,
               **_: Any) -> Tensor:  # fmt: skip
        return maker(*size, dtype=self._array.dtype if dtype is None else dtype,
                     requires_grad=requires_grad)  # fmt: skip

    method.__name__ = "new_" + maker.__name__
    return method


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
             requires_grad: bool = False, **_: Any) -> Tensor:  # fmt: skip
    kind = self._array.dtype if dtype is None else dtype
    return creation.full(size, fill_value, dtype=kind, requires_grad=requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, requires_grad: bool = False,
               **_: Any) -> Tensor:  # fmt: skip
    kind = self._array.dtype if dtype is None else dtype
    return creation.tensor(data, dtype=kind, requires_grad=requires_grad)


# ---- comparisons with tolerance -------------------------------------------------------------


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:  # fmt: skip
    """|a - b| <= atol + rtol·|b| elementwise (a boolean tensor), as torch.isclose."""
    x, y = as_tensor(a), as_tensor(b)
    if x.dtype != y.dtype:
        raise _autograd_error(f"{x.dtype} did not match {y.dtype}")
    read_values(x, y)
    return wrap(np.isclose(x._array, y._array, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:  # fmt: skip
    """True when every element is close (``isclose``): a Python bool."""
    return bool(isclose(a, b, rtol, atol, equal_nan)._array.all())


def histogram(input: Any, bins: int = 100, *, range: Any = None, weight: Any = None,  # noqa: A002
              density: bool = False) -> Any:  # fmt: skip
    """(hist, bin_edges): counts in ``bins`` equal bins over [min, max] (or ``range``)."""
    data = np.asarray(as_tensor(input)._array)
    if data.dtype.kind != "f":
        raise _autograd_error(f"histogram: expects a floating-point tensor, got {data.dtype}")
    read_values(as_tensor(input))
    w = None if weight is None else np.asarray(as_tensor(weight)._array)
    hist, edges = np.histogram(data, bins=int(bins), range=range, weights=w, density=density)
    return HISTOGRAM(wrap(hist.astype(data.dtype)), wrap(edges.astype(data.dtype)))


# ---- PyTorch's keyword spellings on agrad.* ---------------------------------------------------

OUT_ERROR = (
    "{}(): functions with out=... arguments don't support automatic differentiation, but one "
    "of the arguments requires grad."
)


def with_pytorch_keywords(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` also taking ``input=``/``other=`` for its first two operands (where it names
    them otherwise) and ``out=`` (the result written into an existing tensor)."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return fn
    takes_input = "input" in params
    takes_other = "other" in params

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return fn(*args)
        out = kwargs.pop("out", None)
        if "input" in kwargs and not takes_input:
            args = (kwargs.pop("input"), *args)
        if "other" in kwargs and not takes_other and len(args) == 1:
            args = (*args, kwargs.pop("other"))
        result = fn(*args, **kwargs)
        return result if out is None else _write_out(name, out, result, args)

    return wrapper


def _write_out(name: str, out: Any, result: Any, args: tuple) -> Tensor:
    if not isinstance(out, Tensor) or not isinstance(result, Tensor):
        raise TypeError(f"{name}(): out= takes a tensor")
    if STATE.enabled and (out.requires_grad or result.requires_grad):
        raise _autograd_error(OUT_ERROR.format(name))
    if tuple(out.shape) != tuple(result.shape):
        raise _autograd_error(
            f"{name}(): out= has shape {tuple(out.shape)}, the result {tuple(result.shape)}: "
            "give an out tensor of the result's shape (agrad does not resize it)"
        )
    with no_grad():
        out.copy_(result)
    return out


def keyword_faces(names: Any, namespace: dict[str, Any]) -> dict[str, Any]:
    """The ``agrad.*`` functions among ``names``, wrapped by `with_pytorch_keywords`."""
    wrapped: dict[int, Any] = {}  # one wrapper per function, so aliases stay the same object
    faces = {}
    for n in names:
        fn = namespace[n]
        if callable(fn):
            if id(fn) not in wrapped:
                wrapped[id(fn)] = with_pytorch_keywords(n, fn)
            faces[n] = wrapped[id(fn)]
    return faces


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> Any:
    """Call ``hook(tensor)`` after backward has accumulated into this leaf's ``.grad``."""
    if self.grad_fn is not None:
        raise _autograd_error("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self.requires_grad:
        raise _autograd_error("cannot register a hook on a tensor that doesn't require gradient")
    hooks = self.__dict__.setdefault("_post_accumulate_hooks", [])
    hooks.append(hook)
    FEATURES.post_accumulate += 1
    refresh()
    return _PostAccumulateHandle(hooks, hook)


class _PostAccumulateHandle:
    def __init__(self, hooks: list, hook: Any) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)
            FEATURES.post_accumulate -= 1
            refresh()


def _inplace_unary(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return self._inplace(arithmetic(lambda source: fn(source, *args, **kwargs)))

    return method


def inplace_unary_methods(api: dict[str, Callable], names: Any) -> dict[str, Callable]:
    """``x.sin_()`` & co.: the in-place variant of each unary function (PyTorch's)."""
    return {f"{n}_": _inplace_unary(api[n]) for n in names if n in api}


def is_inference(self: Tensor) -> bool:
    """True for a tensor made inside inference_mode."""
    return bool(self.__dict__.get("_inference", False))


def _equal(self: Tensor, other: Any) -> bool:
    """True when both have the same shape and elements (torch.equal)."""
    other = as_tensor(other)
    return tuple(self.shape) == tuple(other.shape) and bool(
        np.array_equal(self._array, other._array)
    )


METHODS = {
    "grad_dtype": grad_dtype,
    "equal": _equal,
    "is_inference": is_inference,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "type": tensor_type, "new_zeros": _new(creation.zeros), "new_ones": _new(creation.ones),
    "new_empty": _new(creation.empty), "new_full": new_full, "new_tensor": new_tensor,
    "isclose": isclose, "allclose": allclose,
}  # fmt: skip
FUNCTIONS = {"isclose": isclose, "allclose": allclose, "histogram": histogram, **TYPED}
