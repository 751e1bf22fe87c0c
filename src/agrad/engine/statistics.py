"""Order statistics and running reductions as PyTorch has them, composed of the op table's
gathers, wheres and reductions: median, kthvalue, quantile, nansum, nanmean, cummax, cummin,
logcumsumexp, trapezoid (trapz), cumulative_trapezoid; and, without gradient, unique,
searchsorted, bucketize, isin, msort's order.

A selected element gets the gradient, as in PyTorch; between tied elements PyTorch's index
choice is its kernel's (kthvalue takes the last, median the first), and the gradient goes
where the index says. The full median, as PyTorch's, shares it evenly among the ties.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..errors import AgradShapeError, AgradValueError
from . import shaping
from .args import as_tensor, first
from .escapes import decided_by, read_values
from .gathering import gather_along
from .ops.core import normalize_axis
from .public import API, public
from .return_types import named_result
from .tensor import Tensor, wrap

KTHVALUE = named_result("kthvalue")
MEDIAN = named_result("median")
CUMMAX, CUMMIN = named_result("cummax"), named_result("cummin")


def _along(x: Tensor, d: int, positions: np.ndarray, keepdim: bool) -> Tensor:
    """x's elements at ``positions`` (x's shape with dim d of size 1) along d."""
    picked = gather_along(x, d, positions)
    return picked if keepdim else shaping.squeeze(picked, d)


def _kth_positions(data: np.ndarray, k: int, d: int) -> np.ndarray:
    """Index of the k-th smallest (1-based) along d; a nan counts as the largest value."""
    order = np.argsort(data, axis=d, kind="stable")
    return np.take(order, [k - 1], axis=d)


@public(method=True)
def kthvalue(input: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    x = first(input)
    if x.ndim == 0:
        x, zero = shaping.reshape(x, (1,)), True
    else:
        zero = False
    d = normalize_axis(dim, x.ndim, "kthvalue")
    n = x.shape[d]
    if not 1 <= k <= n:
        raise AgradShapeError(f"kthvalue(): selected number k out of range for dimension {d}")
    read_values(x)
    positions = _kth_positions(x._array, k, d)
    values = _along(x, d, positions, keepdim or zero)
    indices = positions if keepdim else np.squeeze(positions, d)
    if zero:
        values, indices = shaping.reshape(values, ()), indices.reshape(())
    return KTHVALUE(values, wrap(indices.astype(np.int64)))


@public(method=True)
def median(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The lower median (of all elements, or (values, indices) along ``dim``); nan if any
    element is nan, as PyTorch."""
    x = first(input)
    read_values(x)  # the median's position (and its ties) are constants of the graph
    if dim is None:
        data = x._array.reshape(-1)
        if data.size == 0:
            return wrap(np.asarray(np.nan, dtype=x._array.dtype))
        value = np.sort(data)[(data.size - 1) // 2]
        ties = np.isnan(data) if np.isnan(data).any() else data == value
        # The max over the tied elements: the value, with the gradient shared evenly.
        return API["amax"](API["where"](ties.reshape(x.shape), x, -np.inf))
    xs = x if x.ndim else shaping.reshape(x, (1,))
    d = normalize_axis(dim, xs.ndim, "median")
    data = xs._array
    k = (data.shape[d] + 1) // 2
    # PyTorch returns the first of equal values at the median, and a row's first nan.
    order = np.argsort(data, axis=d, kind="stable")
    positions = np.take(order, [k - 1], axis=d)
    nans = np.isnan(data)
    if nans.any():
        first_nan = np.expand_dims(np.argmax(nans, axis=d), d)
        positions = np.where(np.expand_dims(nans.any(axis=d), d), first_nan, positions)
    else:
        chosen = np.take_along_axis(data, positions, d)
        positions = np.expand_dims(np.argmax(data == chosen, axis=d), d)
    values = _along(xs, d, positions, keepdim or x.ndim == 0)
    indices = positions if keepdim else np.squeeze(positions, d)
    if x.ndim == 0:
        values, indices = shaping.reshape(values, ()), indices.reshape(())
    return MEDIAN(values, wrap(indices.astype(np.int64)))


@public(method=True)
def quantile(input: Any, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Tensor:  # fmt: skip
    """The q-quantiles (linear interpolation between the two neighbours, as PyTorch's
    default; 'lower', 'higher', 'nearest', 'midpoint' too)."""
    x = first(input)
    if isinstance(q, Tensor):
        read_values(q)  # which elements it falls between: positions from its values
    qs = np.asarray(q._array if isinstance(q, Tensor) else q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)):
        raise AgradValueError("quantile() q values must be in the range [0, 1]")
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise AgradValueError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest. Got {interpolation}"
        )
    xs = shaping.reshape(x, (-1,)) if dim is None else x
    d = 0 if dim is None else normalize_axis(dim, xs.ndim, "quantile")
    values = _sorted(xs, d)  # a nan sorts last
    n = xs.shape[d]
    rank = qs.reshape(-1) * (n - 1)
    low, high = np.floor(rank).astype(int), np.ceil(rank).astype(int)
    if interpolation == "nearest":
        low = high = np.round(rank).astype(int)  # half to even, as PyTorch's
    elif interpolation == "lower":
        high = low
    elif interpolation == "higher":
        low = high
    lead = (slice(None),) * d
    a, b = shaping.index(values, lead + (low,)), shaping.index(values, lead + (high,))
    weight = 0.5 if interpolation == "midpoint" else (rank - low)
    shape = [1] * values.ndim
    shape[d] = -1
    w = np.reshape(weight, shape) if np.ndim(weight) else weight
    if interpolation == "linear" and isinstance(q, Tensor) and q.requires_grad:
        # the weight moves with q, as PyTorch's: d/dq = (b - a)·(n - 1)
        ranks = API["mul"](shaping.reshape(q, (-1,)), float(n - 1))
        w = shaping.reshape(API["sub"](ranks, low.astype(np.float64)), tuple(shape))
    out = API["add"](a, API["mul"](API["sub"](b, a), w))
    decided_by(xs)  # whether a slice holds a nan decides which value it takes
    has_nan = np.isnan(xs._array).any(axis=d, keepdims=True)
    if has_nan.any():  # PyTorch's quantile of a slice with a nan is that nan
        last = shaping.index(values, lead + (slice(n - 1, n),))
        out = API["where"](has_nan, last, out)
    out = API["movedim"](out, d, 0)  # the q axis leads, as PyTorch's
    if keepdim:
        out = shaping.unsqueeze(out, d + 1) if dim is not None else \
            shaping.reshape(out, (out.shape[0],) + (1,) * x.ndim)  # fmt: skip
    return shaping.reshape(out, out.shape[1:]) if qs.ndim == 0 else out


def _sorted(x: Tensor, d: int) -> Tensor:
    read_values(x)  # the order is a constant of the graph
    return gather_along(x, d, np.argsort(x._array, axis=d, kind="stable"))


@public(method=True)
def nansum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The sum of the non-nan elements (nan elements get no gradient)."""
    x = first(input)
    decided_by(x)  # the nan mask is a constant of the graph
    kept = API["where"](np.isnan(x._array), 0.0, x)
    return API["sum"](kept, dim, keepdim)


@public(method=True)
def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    x = first(input)
    count = np.sum(~np.isnan(x._array), axis=None if dim is None else dim, keepdims=keepdim)
    return API["div"](nansum(x, dim, keepdim), count.astype(x._array.dtype))


def _running(name: str, better: Any, result: type):
    def fn(input: Any, dim: int) -> Any:  # noqa: A002
        x = first(input)
        xs = x if x.ndim else shaping.reshape(x, (1,))
        d = normalize_axis(dim, xs.ndim, name)
        read_values(x)  # the running positions are constants of the graph
        data = np.moveaxis(xs._array, d, -1)
        best = np.zeros(data.shape, dtype=np.int64)
        for i in range(1, data.shape[-1]):  # a later equal (or nan) value takes over
            prev = np.take_along_axis(data, best[..., i - 1 : i], -1)[..., 0]
            cur = data[..., i]
            take = better(cur, prev) | np.isnan(cur)  # PyTorch's test: x >= best or x is nan
            best[..., i] = np.where(take, i, best[..., i - 1])
        positions = np.moveaxis(best, -1, d)
        values = gather_along(xs, d, positions)
        if x.ndim == 0:
            values, positions = shaping.reshape(values, ()), positions.reshape(())
        return result(values, wrap(positions))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"(values, indices) of the running {name[3:]} along ``dim``."
    return public(method=True)(fn)


cummax = _running("cummax", np.greater_equal, CUMMAX)
cummin = _running("cummin", np.less_equal, CUMMIN)


@public(method=True)
def logcumsumexp(input: Any, dim: int) -> Tensor:  # noqa: A002
    """log(cumsum(exp(x))) along ``dim``, as a running logaddexp: stable wherever the values
    fall (a shift by one maximum would underflow the rest to -inf)."""
    x = first(input)
    if x.ndim == 0:
        return API["add"](x, 0.0)
    d = normalize_axis(dim, x.ndim, "logcumsumexp")
    steps = [shaping.index(x, (slice(None),) * d + (i,)) for i in range(x.shape[d])]
    if not steps:
        return API["add"](x, 0.0)
    running = [steps[0]]
    for s in steps[1:]:
        running.append(API["logaddexp"](running[-1], s))
    return API["stack"](running, d)


@public()
def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` (spacing dx, or the sample points x)."""
    t = first(y)
    d = normalize_axis(dim, t.ndim, "trapezoid")
    return API["sum"](_panels(t, x, dx, d), d)


@public()
def trapz(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    return trapezoid(y, x, dx=dx, dim=dim)


@public()
def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    t = first(y)
    d = normalize_axis(dim, t.ndim, "cumulative_trapezoid")
    return API["cumsum"](_panels(t, x, dx, d), d)


def _panels(t: Tensor, x: Any, dx: Any, d: int) -> Tensor:
    lead = (slice(None),) * d
    right = shaping.index(t, lead + (slice(1, None),))
    left = shaping.index(t, lead + (slice(None, -1),))
    mean = API["mul"](API["add"](right, left), 0.5)
    if x is None:
        return API["mul"](mean, 1.0 if dx is None else dx)
    pts = first(x) if isinstance(x, Tensor) else as_tensor(x)
    steps = API["diff"](pts, dim=-1 if pts.ndim == 1 else d)
    if pts.ndim == 1 and t.ndim > 1:
        steps = shaping.reshape(steps, (-1,) + (1,) * (t.ndim - 1 - d))
    return API["mul"](mean, steps)


@public()
def unique(input: Any, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:  # fmt: skip
    """The distinct values (sorted), and the inverse and counts on request (no gradient)."""
    read_values(first(input))
    data = first(input)._array
    values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=dim)
    out = [wrap(values)]
    if return_inverse:
        out.append(wrap(inverse.reshape(data.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        out.append(wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@public()
def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False,  # noqa: A002
                 right: bool = False, side: str | None = None,
                 sorter: Any = None) -> Tensor:  # fmt: skip
    if sorter is not None:
        raise NotImplementedError("searchsorted: sorter= is not supported; sort first")
    seq = first(sorted_sequence)._array if isinstance(sorted_sequence, Tensor) else \
        np.asarray(sorted_sequence)  # fmt: skip
    values = input._array if isinstance(input, Tensor) else np.asarray(input)
    read_values(sorted_sequence, input)
    wanted = side or ("right" if right else "left")
    if wanted not in ("left", "right"):
        raise AgradValueError(f"side can only be 'left' or 'right' but got {wanted!r}")
    how: Literal["left", "right"] = "right" if wanted == "right" else "left"
    if seq.ndim <= 1:
        found = np.searchsorted(seq, values, side=how)
    else:
        found = np.stack([np.searchsorted(s, v, side=how) for s, v in
                          zip(seq.reshape(-1, seq.shape[-1]),
                              values.reshape(-1, values.shape[-1]), strict=True)])  # fmt: skip
        found = found.reshape(values.shape)
    return wrap(np.asarray(found, dtype=np.int32 if out_int32 else np.int64))


@public()
def bucketize(
    input: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False
) -> Tensor:  # noqa: A002, E501
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@public()
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:  # fmt: skip
    a = elements._array if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._array if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    read_values(elements, test_elements)
    return wrap(np.isin(a, b, invert=invert))


@public(method=True)
def msort(input: Any) -> Tensor:  # noqa: A002
    return _sorted(first(input), 0)
