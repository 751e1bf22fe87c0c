"""More of PyTorch's numeric functions and Tensor methods, composed of the op table's
entries: clamp_min, clamp_max, div / divide (rounding modes), true_divide, float_power, fmax,
fmin, signbit, sinc, dist, tensordot, vdot, inner, cross, matrix_power, logspace; the
methods type_as, is_floating_point, and the in-place addcmul_, addcdiv_, lerp_;
index_fill(_), index_copy(_), index_put(_).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradDtypeError, AgradShapeError, AgradValueError
from . import gathering, shaping
from .args import as_tensor, first, operand, pair
from .escapes import decided_by, read_values
from .ops.core import TABLE, apply, normalize_axis
from .promotion import mixed_floats
from .public import API, METHODS, public
from .tensor import Tensor, wrap


def clamp_tensor(x: Any, min: Any, max: Any, name: str = "") -> Tensor:  # noqa: A002
    """PyTorch's clamp with tensor bounds: they are operands (a gradient flows to them),
    broadcast with ``x``. ``name``: "clamp_min" or "clamp_max" for those functions' nodes."""
    bounds = "both" if min is not None and max is not None else "min" if min is not None else "max"
    limits = [operand(b) for b in (min, max) if b is not None]
    return apply(TABLE["clamp_tensor"], first(x), *limits, bounds=bounds, name=name)


@public(method=True)
def clamp_min(input: Any, min: Any) -> Tensor:  # noqa: A002
    if isinstance(min, Tensor):
        return clamp_tensor(input, min, None, "clamp_min")
    return API["clip"](input, min=min)


@public(method=True)
def clamp_max(input: Any, max: Any) -> Tensor:  # noqa: A002
    if isinstance(max, Tensor):
        return clamp_tensor(input, None, max, "clamp_max")
    return API["clip"](input, max=max)


@public("div", method=True)
def divide(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:  # noqa: A002
    """``input / other`` (DivBackward0), or with ``rounding_mode`` 'trunc' or 'floor' the
    quotient rounded towards zero or down (the table's div_rounding, DivBackward2: zero
    gradients, integers stay integers, an integer division by zero is PyTorch's error).
    ``agrad.div`` and ``Tensor.div`` are this function, as in PyTorch."""
    if rounding_mode is None:
        if (
            type(input) is Tensor
            and input._array.dtype.kind in "fc"
            and (
                type(other) is float
                or type(other) is int
                or (type(other) is Tensor and other._array.dtype == input._array.dtype)
            )
        ):  # the common cases skip the promotion rules (as the generated faces do)
            return apply(TABLE["div"], input, other)
        return apply(TABLE["div"], *pair(input, other, floating=True))
    if rounding_mode not in ("trunc", "floor"):
        raise AgradValueError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    return apply(TABLE["div_rounding"], *pair(input, other), rounding_mode=rounding_mode)


@public(method=True)
def true_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    return API["div"](input, other)


@public(method=True)
def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """input ** exponent computed in float64, as PyTorch's."""
    base = API["astype"](first(input) if isinstance(input, Tensor) else as_tensor(input),
                         np.float64)  # fmt: skip
    if isinstance(exponent, Tensor):
        exponent = API["astype"](exponent, np.float64)
    return API["pow"](base, exponent)


def _nan_aware(name: str, keeps_first: Any):
    def fn(input: Any, other: Any) -> Tensor:  # noqa: A002
        a = first(input) if isinstance(input, Tensor) else as_tensor(input)
        b = first(other) if isinstance(other, Tensor) else as_tensor(other)
        # PyTorch's rule: the first operand wins ties and wherever the second is nan.
        read_values(a, b)  # which operand wins is a constant of the graph
        first_wins = keeps_first(a._array, b._array) | np.isnan(b._array)
        return API["where"](first_wins, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name[1:]}imum ignoring nan (nan only where both are)."
    return public(method=True)(fn)


fmax = _nan_aware("fmax", np.greater_equal)
fmin = _nan_aware("fmin", np.less_equal)


@public(method=True)
def signbit(input: Any) -> Tensor:  # noqa: A002
    read_values(first(input))
    return wrap(np.signbit(first(input)._array))


@public(method=True)
def sinc(input: Any) -> Tensor:  # noqa: A002
    """sin(πx)/(πx), 1 at 0 (its derivative there is 0)."""
    x = first(input)
    decided_by(x)  # the mask of zeros is a constant of the graph
    zero = x._array == 0
    safe = API["mul"](API["where"](zero, 1.0, x), np.pi)
    return API["where"](zero, 1.0, API["div"](API["sin"](safe), safe))


@public(method=True)
def dist(input: Any, other: Any, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm of input - other (over all elements)."""
    return API["norm"](API["sub"](input, other), p)


@public()
def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Tensor:
    """Contraction over the last ``dims`` axes of a and the first of b, or the given pairs."""
    x, y = first(a), first(b) if isinstance(b, Tensor) else as_tensor(b)
    if x._array.dtype != y._array.dtype and not mixed_floats(x._array.dtype, y._array.dtype):
        raise AgradDtypeError("both inputs should have same dtype")  # (PyTorch's words)
    if isinstance(dims, int):
        if dims < 0:
            raise AgradValueError(f"tensordot expects dims >= 0, but got dims={dims}")
        ax = list(range(x.ndim - dims, x.ndim))
        bx = list(range(dims))
    else:
        ax, bx = ([d] if isinstance(d, int) else list(d) for d in dims)
    ax = [normalize_axis(d, x.ndim, "tensordot") for d in ax]
    bx = [normalize_axis(d, y.ndim, "tensordot") for d in bx]
    if len(ax) != len(bx) or any(x.shape[i] != y.shape[j] for i, j in zip(ax, bx, strict=True)):
        raise AgradShapeError(
            f"contracted dimensions need to match, but first has sizes "
            f"{[x.shape[i] for i in ax]} and second has sizes {[y.shape[j] for j in bx]}"
        )
    keep_a = [d for d in range(x.ndim) if d not in ax]
    keep_b = [d for d in range(y.ndim) if d not in bx]
    k = int(np.prod([x.shape[d] for d in ax]))
    left = shaping.reshape(shaping.permute(x, keep_a + ax), (-1, k))
    right = shaping.reshape(shaping.permute(y, bx + keep_b), (k, -1))
    shape = tuple(x.shape[d] for d in keep_a) + tuple(y.shape[d] for d in keep_b)
    return shaping.reshape(API["matmul"](left, right), shape)


@public(method=True)
def vdot(input: Any, other: Any) -> Tensor:  # noqa: A002
    return API["dot"](input, other)


@public(method=True)
def inner(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Sum over the last axes (a product when either is 0-d)."""
    x, y = first(input), first(other) if isinstance(other, Tensor) else as_tensor(other)
    if x.ndim == 0 or y.ndim == 0:
        return API["mul"](x, y)
    return tensordot(x, y, ([-1], [-1]))


@public(method=True)
def cross(input: Any, other: Any, dim: int | None = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (None: the first dim of size 3)."""
    a, b = first(input), first(other) if isinstance(other, Tensor) else as_tensor(other)
    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    a, b = a.expand(*shape), b.expand(*shape)
    if dim is None:
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise AgradShapeError("no dimension of size 3 in input")
    d = normalize_axis(dim, len(shape), "cross")
    if shape[d] != 3:
        raise AgradShapeError(
            f"linalg.cross: inputs dimension {d} must have length 3. Got {shape[d]} and {shape[d]}"
        )

    def part(t: Tensor, i: int) -> Tensor:
        return shaping.index(t, (slice(None),) * d + (i,))

    def term(i: int, j: int) -> Tensor:
        return API["sub"](API["mul"](part(a, i), part(b, j)), API["mul"](part(a, j), part(b, i)))

    return API["stack"]([term(1, 2), term(2, 0), term(0, 1)], d)


@public(method=True)
def matrix_power(input: Any, n: int) -> Tensor:  # noqa: A002
    """A @ A @ ... (n times; the identity for 0, the inverse's power for n < 0)."""
    a = first(input)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise AgradShapeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{a.shape[-2] if a.ndim >= 2 else 1} by {a.shape[-1] if a.ndim else 1} matrices"
        )
    if n == 0:
        return wrap(np.broadcast_to(np.eye(a.shape[-1], dtype=a._array.dtype), a.shape).copy())
    base = API["inverse"](a) if n < 0 else a
    result: Tensor | None = None
    power = base
    k = abs(int(n))
    while k:  # by squaring, as PyTorch
        if k & 1:
            result = power if result is None else API["matmul"](result, power)
        k >>= 1
        if k:
            power = API["matmul"](power, power)
    assert result is not None  # (k >= 1)
    return result


@public()
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             requires_grad: bool = False, **_: Any) -> Tensor:  # fmt: skip
    exponents = np.linspace(float(start), float(end), int(steps))
    values = np.power(float(base), exponents)
    t = wrap(values.astype(dtype) if dtype is not None else values)
    return t.requires_grad_() if requires_grad else t


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    return API["astype"](self, other.dtype) if self.dtype != other.dtype else self


def _is_floating_point(self: Tensor) -> bool:
    return self.dtype.kind == "f"


def _addcmul_(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    return self._inplace(lambda s, a, b: API["addcmul"](s, a, b, value=value), tensor1, tensor2)


def _addcdiv_(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    return self._inplace(lambda s, a, b: API["addcdiv"](s, a, b, value=value), tensor1, tensor2)


def _lerp_(self: Tensor, end: Any, weight: Any) -> Tensor:
    if isinstance(weight, Tensor):
        return self._inplace(lambda s, e, w: API["lerp"](s, e, w), end, weight)
    return self._inplace(lambda s, e: API["lerp"](s, e, weight), end)


def _positions(index: Any, what: str) -> np.ndarray:
    array = gathering.index_positions(index, f"{what}()", "int64")
    if array.ndim > 1:
        raise AgradShapeError(f"{what}(): Index is supposed to be a vector")
    return array.reshape(-1)


def _slot(x: Tensor, dim: int, index: Any, what: str) -> tuple:
    d = normalize_axis(dim, max(x.ndim, 1), what)
    positions = _positions(index, what)
    size = x.shape[d] if x.ndim else 1
    bad = positions[(positions < -size) | (positions >= size)]
    if bad.size:
        raise AgradShapeError(f"{what}(): index {int(bad[0])} is out of bounds for dimension {d} with size {size}")  # fmt: skip  # noqa: E501
    return (slice(None),) * d + (positions % max(size, 1),)


@public(method=True)
def index_fill(input: Any, dim: int, index: Any, value: Any) -> Tensor:  # noqa: A002
    """A copy of input with ``value`` in the slices ``index`` along ``dim``."""
    out = first(input).clone()
    out[_slot(out, dim, index, "index_fill")] = value
    return out


@public(method=True)
def index_copy(input: Any, dim: int, index: Any, source: Any) -> Tensor:  # noqa: A002
    """A copy of input with source's slices written at ``index`` along ``dim``."""
    out = first(input).clone()
    out[_slot(out, dim, index, "index_copy")] = source
    return out


@public(method=True)
def index_put(input: Any, indices: Any, values: Any, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of input with ``values`` written (or added) at the advanced index ``indices``."""
    x = first(input)
    key = tuple(i._array if isinstance(i, Tensor) else i for i in indices)
    if not accumulate:
        out = x.clone()
        out[key] = values
        return out
    flat = np.ravel_multi_index(np.broadcast_arrays(*key), x.shape[: len(key)])
    rest = int(np.prod(x.shape[len(key) :]))
    src = as_tensor(values) if not isinstance(values, Tensor) else values
    src = src.expand(*(flat.shape + tuple(x.shape[len(key) :])))
    rows = shaping.reshape(x, (-1, rest)) if rest != 1 or x.ndim > len(key) else \
        shaping.reshape(x, (-1,))  # fmt: skip
    added = rows.index_add(0, flat.reshape(-1), shaping.reshape(src, (-1,) + rows.shape[1:]))
    return shaping.reshape(added, x.shape)


def _inplace_of(fn: Any):
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        # Floating tensors go to `_inplace` as operands (so one that requires grad is tracked).
        slots = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.dtype.kind in "fc"]
        tensors = [args[i] for i in slots]
        if not tensors:
            return self._inplace(lambda s: fn(s, *args, **kwargs))

        def apply(s: Tensor, *ts: Tensor) -> Tensor:
            full = list(args)
            for i, t in zip(slots, ts, strict=True):
                full[i] = t
            return fn(s, *full, **kwargs)

        return self._inplace(apply, *tensors)

    return method


def _as(dtype: str) -> Any:
    def convert(self: Tensor, memory_format: Any = None) -> Tensor:
        return API["astype"](self, np.dtype(dtype)) if self.dtype != np.dtype(dtype) else self

    convert.__name__ = dtype
    return convert


def _stride(self: Tensor, dim: int | None = None) -> Any:
    """The strides in elements, as PyTorch's (NumPy's byte strides / the item size)."""
    strides = tuple(s // self._array.itemsize for s in self._array.strides)
    return strides if dim is None else strides[normalize_axis(dim, max(self.ndim, 1), "stride")]


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    try:
        fits = np.broadcast_shapes(tuple(shape), self.shape) == tuple(self.shape)
    except ValueError:
        fits = False
    if not fits:
        wanted, have = ", ".join(map(str, shape)), ", ".join(map(str, self.shape))
        raise AgradShapeError(f"size {{{wanted}}} is not expandable to size {{{have}}}.")
    # The table's sum_to (SumToSizeBackward0, PyTorch's grad_fn for it).
    return (
        self
        if tuple(shape) == tuple(self.shape)
        else apply(TABLE["sum_to"], self, shape=tuple(shape))
    )


def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """The main diagonal set to ``fill_value`` (NumPy's and PyTorch's positions: every
    ncols + 1 flat elements; with ``wrap``, a tall matrix's diagonal starts again)."""
    if self.ndim < 2:
        raise AgradShapeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise AgradShapeError("all dimensions of input must be of equal length")
    if self.ndim == 2:
        step, end = self.shape[1] + 1, None if wrap else self.shape[1] * self.shape[1]
    else:
        step, end = 1 + int(np.cumprod(self.shape[:-1]).sum()), None
    flat = np.arange(0, self.numel() if end is None else min(end, self.numel()), step)
    self[np.unravel_index(flat, self.shape)] = fill_value
    return self


METHODS.update({
    "byte": _as("uint8"), "char": _as("int8"), "short": _as("int16"), "stride": _stride,
    "element_size": lambda self: int(self._array.itemsize),
    "sum_to_size": _sum_to_size, "fill_diagonal_": _fill_diagonal_,
    "ndimension": lambda self: self.ndim,

    "type_as": _type_as, "is_floating_point": _is_floating_point, "addcmul_": _addcmul_,
    "addcdiv_": _addcdiv_, "lerp_": _lerp_, "index_fill_": _inplace_of(index_fill),
    "index_copy_": _inplace_of(index_copy), "index_put_": _inplace_of(index_put),
})  # fmt: skip
