"""Tensor constructors: tensor, zeros, ones, eye, full, arange, linspace, randn, rand, ...

Each checks the element limit (`limits`) before it allocates.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import AgradValueError
from . import limits
from .args import as_tensor, number, shape_of
from .dtypes import get_default_dtype
from .escapes import escape
from .generator import manual_seed, numpy_rng
from .graph_hooks import FEATURES, mark_inference
from .tensor import Tensor, wrap

seed = manual_seed


def _sized(args: tuple, what: str) -> tuple[int, ...]:
    """The shape asked for, refused (before anything is allocated) above the limit."""
    shape = shape_of(args)
    if any(n < 0 for n in shape):
        raise AgradValueError(f"{what}: sizes must not be negative, got {shape}")
    limits.check_shape(shape, what)
    return shape


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = wrap(data)
    if FEATURES.inference:  # made inside inference_mode: an inference tensor
        mark_inference(t)
    if requires_grad:
        t.requires_grad = True  # checks the dtype, with PyTorch's message
    return t


def _float_dtype(dtype: Any) -> Any:  # a NumPy dtype or an agrad DType (it carries one)
    return get_default_dtype() if dtype is None else np.dtype(dtype)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (torch.tensor)."""
    if isinstance(data, Tensor):  # a value leaving the graph (see escapes.py)
        escape(data)
    t = as_tensor(data, dtype)
    return _leaf(np.array(t._array, copy=True), requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    return wrap(array)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    size = _size_keyword(size, kwargs, "zeros")
    return _leaf(np.zeros(_sized(size, "zeros"), _float_dtype(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    size = _size_keyword(size, kwargs, "ones")
    return _leaf(np.ones(_sized(size, "ones"), _float_dtype(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    size = _size_keyword(size, kwargs, "empty")
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)  # (agrad has no garbage)


def full(size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    value = number(fill_value, "full", "fill_value")
    if dtype is None and isinstance(value, (bool, np.bool_)):  # PyTorch infers the dtype
        dtype = np.dtype(bool)
    elif dtype is None and isinstance(value, (int, np.integer)):
        dtype = np.dtype(np.int64)
    return _leaf(np.full(_sized((size,), "full"), value, _float_dtype(dtype)), requires_grad)


def eye(n: Any, m: Any = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    rows, cols = _sized((n, n if m is None else m), "eye")
    return _leaf(np.eye(rows, cols, dtype=_float_dtype(dtype)), requires_grad)


def arange(
    start: Any, end: Any = None, step: Any = 1, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if not all(math.isfinite(float(v)) for v in values):
        raise AgradValueError(
            f"arange: start, end and step must be finite numbers, got {tuple(values)}"
        )
    start, end, step = values
    if step == 0:
        raise AgradValueError("arange: step must not be zero")
    limits.check_count(max(0, math.ceil((end - start) / step)), "arange")
    # PyTorch: integers only give int64; any float gives the default float dtype.
    whole = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    kind = np.int64 if whole and dtype is None else _float_dtype(dtype)
    return _leaf(np.arange(start, end, step, dtype=kind), requires_grad)


def linspace(
    start: Any, end: Any, steps: Any, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    (count,) = _sized((steps,), "linspace")
    return _leaf(
        np.linspace(float(start), float(end), count, dtype=_float_dtype(dtype)), requires_grad
    )


def randn(
    *size: Any,
    dtype: Any = None,
    requires_grad: bool = False,
    generator: Any = None,
    **kwargs: Any,
) -> Tensor:
    """Standard normal numbers, ``randn(2, 3)``, ``randn((2, 3))`` or ``randn(size=(2, 3))``."""
    size = _size_keyword(size, kwargs, "randn")
    data = numpy_rng(generator).standard_normal(_sized(size, "randn"))
    return _leaf(data.astype(_float_dtype(dtype)), requires_grad)


def _size_keyword(size: tuple, kwargs: dict, what: str) -> tuple:
    """PyTorch's ``size=`` keyword, the alternative to positional sizes."""
    kwargs.pop("device", None)
    if "size" in kwargs:
        if size:
            raise TypeError(f"{what}() got sizes both positionally and as size=")
        size = (kwargs.pop("size"),)
    if kwargs:
        raise TypeError(f"{what}() got an unexpected keyword argument {next(iter(kwargs))!r}")
    return size


def randint(
    low: Any,
    high: Any = None,
    size: Any = (),
    dtype: Any = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    """Random integers in [low, high) (``randint(high, size)`` starts at 0), int64."""
    if high is None:
        low, high = 0, low
    data = numpy_rng(generator).integers(int(low), int(high), _sized((size,), "randint"))
    return _leaf(data.astype(dtype or np.int64), requires_grad)


def rand(
    *size: Any, dtype: Any = None, requires_grad: bool = False, generator: Any = None, **kwargs: Any
) -> Tensor:
    """Uniform numbers in [0, 1): ``rand(2, 3)``, ``rand((2, 3))``, ``rand(size=(2, 3))``."""
    size = _size_keyword(size, kwargs, "rand")
    data = numpy_rng(generator).random(_sized(size, "rand")).astype(_float_dtype(dtype))
    return _leaf(data, requires_grad)


def _like(maker: Any):
    def fn(t: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        t = as_tensor(t)
        return maker(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)

    fn.__name__ = maker.__name__ + "_like"
    return fn


zeros_like, ones_like, randn_like, rand_like, empty_like = (
    _like(f) for f in (zeros, ones, randn, rand, empty)
)


def full_like(t: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    t = as_tensor(t)
    return full(t.shape, fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)
