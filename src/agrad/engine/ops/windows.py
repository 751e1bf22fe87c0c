"""Sliding windows over the trailing dimensions, and their adjoint (im2col and col2im).

``windows(x)`` views ``x`` of shape (..., *S) as (..., *O, *K): for each output position,
the (dilated, strided) kernel window of the zero-padded input — a stride-tricks view, no
copy. ``windows_backward`` scatters such windows back, adding where they overlap: one
strided add per kernel offset (never a loop over pixels). Each is the other's VJP, so the
pair is closed under differentiation, and convolution and pooling write their VJPs with
them (plus matmul), which is what makes ``create_graph=True`` work through those ops.
Leading dimensions are free: a cotangent with extra batch axes (Jacobian rows) needs
nothing more.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from .core import NOTHING, Case, Op, register

Pads = tuple[tuple[int, int], ...]


def ints(value: Any, d: int, what: str) -> tuple[int, ...]:
    """An int or a sequence of ``d`` ints (PyTorch's ``_pair``), as a tuple of ints."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    if len(items) == 1:
        items = items * d
    if len(items) != d or not all(_whole(v) for v in items):
        raise AgradValueError(f"{what} must be an int or {d} ints, got {value!r}")
    return tuple(int(v) for v in items)


def pairs(padding: Any, d: int, what: str = "padding") -> Pads:
    """Padding as (before, after) per dimension, from an int, ``d`` ints or ``d`` pairs."""
    if isinstance(padding, (tuple, list)) and padding and isinstance(padding[0], (tuple, list)):
        if len(padding) != d:
            raise AgradValueError(f"{what} must give {d} (before, after) pairs, got {padding!r}")
        return tuple((int(a), int(b)) for a, b in padding)
    return tuple((p, p) for p in ints(padding, d, what))


def _whole(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer())


def out_sizes(
    spatial: tuple, kernel: tuple, stride: tuple, padding: Pads, dilation: tuple, op: str
) -> tuple[int, ...]:
    """The output size of each windowed dimension, or an error as PyTorch words it."""
    sizes = []
    for n, k, s, (lo, hi), dl in zip(spatial, kernel, stride, padding, dilation, strict=True):
        if k < 1 or s < 1 or dl < 1 or lo < 0 or hi < 0:
            raise AgradValueError(
                f"{op}: kernel size, stride and dilation must be positive and padding "
                f"non-negative, got kernel {kernel}, stride {stride}, padding {padding}, "
                f"dilation {dilation}"
            )
        span = dl * (k - 1) + 1
        if n + lo + hi < span:
            raise AgradShapeError(
                f"{op}: the (padded) input size {n + lo + hi} is smaller than the kernel "
                f"size {span} (input {tuple(spatial)}, kernel {kernel}, dilation {dilation})"
            )
        sizes.append((n + lo + hi - span) // s + 1)
    return tuple(sizes)


def pad_trailing(x: np.ndarray, padding: Pads, value: float = 0.0) -> np.ndarray:
    """``x`` padded by ``padding`` over its last len(padding) dimensions."""
    if not any(lo or hi for lo, hi in padding):
        return x
    d = len(padding)
    spatial = x.shape[x.ndim - d :]
    pairs_ = tuple(zip(spatial, padding, strict=True))
    shape = x.shape[: x.ndim - d] + tuple(n + lo + hi for n, (lo, hi) in pairs_)
    z = np.full(shape, value, dtype=x.dtype)  # (np.pad does the same, with more overhead)
    inside: tuple[Any, ...] = (Ellipsis, *(slice(lo, lo + n) for n, (lo, _) in pairs_))
    z[inside] = x
    return z


def window_view(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple, out: tuple):
    """The windows of an already padded array: (..., *S) -> (..., *O, *K), a view."""
    d = len(kernel)
    lead_strides = xp.strides[: xp.ndim - d]
    tail = xp.strides[xp.ndim - d :]
    shape = xp.shape[: xp.ndim - d] + tuple(out) + tuple(kernel)
    strides = (
        lead_strides
        + tuple(t * s for t, s in zip(tail, stride, strict=True))
        + tuple(t * dl for t, dl in zip(tail, dilation, strict=True))
    )
    return np.lib.stride_tricks.as_strided(xp, shape, strides, writeable=False)


def _windows_forward(x, kernel, stride, padding, dilation):
    d = len(kernel)
    spatial = x.shape[x.ndim - d :]
    out = out_sizes(spatial, kernel, stride, padding, dilation, "windows")
    return window_view(pad_trailing(np.asarray(x), padding), kernel, stride, dilation, out)


def scatter_windows(g, spatial, kernel, stride, padding, dilation):
    """The adjoint of `window_view` with padding: (..., *O, *K) -> (..., *S), summing where
    windows overlap, one strided add per kernel offset."""
    d = len(kernel)
    g = np.asarray(g)
    lead = g.shape[: g.ndim - 2 * d]
    out = g.shape[g.ndim - 2 * d : g.ndim - d]
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(spatial, padding, strict=True))
    z = np.zeros(lead + padded, dtype=g.dtype)
    if math.prod(out) == 0:
        return crop(z, spatial, padding)
    for offset, key in offsets(kernel, stride, dilation, out):
        z[key] += g[(Ellipsis, *(slice(None),) * d, *offset)]
    return crop(z, spatial, padding)


def offsets(kernel: tuple, stride: tuple, dilation: tuple, out: tuple):
    """Each kernel offset (row-major) and the strided slice of the padded input that it
    reads at every output position: a window op is one vectorised step per offset."""
    for offset in itertools.product(*(range(k) for k in kernel)):
        key = tuple(
            slice(o * dl, o * dl + s * (m - 1) + 1, s)
            for o, dl, s, m in zip(offset, dilation, stride, out, strict=True)
        )
        yield offset, (Ellipsis, *key)


def crop(z: np.ndarray, spatial: tuple, padding: Pads) -> np.ndarray:
    """The unpadded part of a padded array (the inverse of `pad_trailing`)."""
    if not any(lo or hi for lo, hi in padding):
        return z
    keep: tuple[Any, ...] = (Ellipsis,)
    keep += tuple(slice(lo, lo + n) for n, (lo, _) in zip(spatial, padding, strict=True))
    return z[keep]


def _windows_backward_forward(g, spatial, kernel, stride, padding, dilation):
    return scatter_windows(g, spatial, kernel, stride, padding, dilation)


def _windows_vjp(ns, g, out, x, kernel, stride, padding, dilation):
    d = len(kernel)
    spatial = tuple(x.shape[x.ndim - d :])
    return (ns.windows_backward(g, spatial, kernel, stride, padding, dilation),)


def _windows_backward_vjp(ns, g, out, x, spatial, kernel, stride, padding, dilation):
    return (ns.windows(g, kernel, stride, padding, dilation),)


def _windows_shape(shape, kernel, stride, padding, dilation):
    d = len(kernel)
    if len(shape) < d:
        raise AgradShapeError(f"windows: needs at least {d} dimensions, got shape {tuple(shape)}")
    spatial = tuple(shape[len(shape) - d :])
    out = out_sizes(spatial, kernel, stride, padding, dilation, "windows")
    return tuple(shape[: len(shape) - d]) + out + tuple(kernel)


def _windows_backward_shape(shape, spatial, kernel, stride, padding, dilation):
    d = len(kernel)
    out = out_sizes(tuple(spatial), kernel, stride, padding, dilation, "windows_backward")
    if len(shape) < 2 * d or tuple(shape[len(shape) - 2 * d :]) != out + tuple(kernel):
        raise AgradShapeError(
            f"windows_backward: expects (..., *{out}, *{tuple(kernel)}), got {tuple(shape)}"
        )
    return tuple(shape[: len(shape) - 2 * d]) + tuple(spatial)


def checked(rule):
    """An entry's ``prepare`` that runs its shape rule before the forward: a bad shape or
    parameter (a class index out of range, too few values for batch statistics) is an
    error, never a number computed from it."""

    def prepare(*operands, **params):
        rule(*(np.shape(x) for x in operands), **params)
        return params

    return prepare


def trailing(op, values, params, size):
    """Batching rule of an op that acts on its first operand's trailing dimensions only
    (the batch axis leads it; any other operand is not batched)."""
    if any(b for _, b in values[1:]):
        return each_point(op, values, params, size)
    return op.forward(*(v for v, _ in values), **params)


def each_point(op, values, params, size):
    """Batching rule by a loop over the points, for a forward with no batch axis of its own
    (a point differs in a weight, or batch statistics must not mix points)."""
    points = [op.forward(*(v[i] if b else v for v, b in values), **params) for i in range(size)]
    return np.stack(points)


def _params(k, s, p, dl):
    d = len(k)
    return {"kernel": k, "stride": s, "padding": pairs(p, d), "dilation": dl}


WINDOW_CASES = (
    Case(((2, 5),), _params((3,), (1,), 0, (1,))),
    Case(((1, 2, 5, 6),), _params((2, 3), (2, 1), 1, (1, 2))),
    Case(((2, 4, 4),), _params((2, 2), (2, 2), ((0, 1), (1, 0)), (1, 1))),
)
SCATTER_CASES = (
    Case(((2, 3, 3),), {"spatial": (5,), **_params((3,), (1,), 0, (1,))}),
    Case(((1, 2, 3, 4, 2, 3),), {"spatial": (5, 6), **_params((2, 3), (2, 1), 1, (1, 2))}),
)

register(
    Op("windows", "Im2ColBackward0", _windows_forward, _windows_vjp, _windows_shape,
       explain="scatter each window's gradient back into the input, adding where they overlap",
       saves=NOTHING, batch=trailing, grows=True, public=False, method=False,
       cases=WINDOW_CASES),
    Op("windows_backward", "Col2ImBackward0", _windows_backward_forward, _windows_backward_vjp,
       _windows_backward_shape, prepare=checked(_windows_backward_shape),
       explain="gather the gradient's windows (im2col)", saves=NOTHING,
       batch=trailing, grows=True, public=False, method=False, cases=SCATTER_CASES),
)  # fmt: skip
