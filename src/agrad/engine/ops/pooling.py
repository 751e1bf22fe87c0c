"""Pooling over the last two dimensions: max, average and adaptive average (PyTorch's).

Max and average pooling read the windows of the padded input (a stride-tricks view, see
`windows`) and reduce over them; their VJPs send each window's share of the gradient
back through `windows_backward` (to the first maximum of each window, as PyTorch; or
spread by the divisor), with the array namespace, so ``create_graph=True`` works.
Adaptive average pooling is two averaging matrices, ``A_h @ x @ A_wᵀ``. The ops act on
trailing dimensions, so leading batch axes (of a cotangent or a batched replay) are free.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradIndexError, AgradShapeError, AgradValueError
from ..tensor import Tensor
from .core import INPUTS, Case, Op, raw, register
from .windows import checked, crop, offsets, out_sizes, pad_trailing, trailing


def pool_sizes(spatial, kernel, stride, padding, dilation, ceil_mode, op):
    """Output sizes and the extra padding after each dimension that ceil_mode needs (the
    last window may start in the input or the left padding, never in the right)."""
    if any(2 * p > k for p, k in zip(padding, kernel, strict=True)):
        raise AgradValueError(
            f"{op}: pad should be at most half of effective kernel size, but got pad="
            f"{max(padding)}, kernel_size={max(kernel)} and dilation={max(dilation)}"
        )
    pads = tuple((p, p) for p in padding)
    floor = out_sizes(tuple(spatial), kernel, stride, pads, dilation, op)
    sizes, extra = [], []
    for n, k, s, p, dl, o in zip(spatial, kernel, stride, padding, dilation, floor, strict=True):
        span = dl * (k - 1) + 1
        if ceil_mode:
            o = -(-(n + 2 * p - span) // s) + 1
            if (o - 1) * s >= n + p:
                o -= 1
        sizes.append(o)
        extra.append(max(0, (o - 1) * s + span - (n + 2 * p)))
    return tuple(sizes), tuple((p, p + e) for p, e in zip(padding, extra, strict=True))


def _check_dims(shape, op, empty_channels=False):
    if len(shape) not in (3, 4) or (0 in shape[-3:] and not empty_channels):
        raise (AgradIndexError if len(shape) < 3 else AgradShapeError)(
            f"{op}: expects a 3-D (C, H, W) or 4-D (N, C, H, W) input, only N may be 0; got "
            f"shape {tuple(shape)}"
        )


# ---- max pooling ---------------------------------------------------------------------------


def _max_pool_forward(x, kernel, stride, padding, dilation, ceil_mode=False):
    out, pads = pool_sizes(x.shape[-2:], kernel, stride, padding, dilation, ceil_mode, "max_pool2d")
    xp = pad_trailing(x, pads, -np.inf)
    best = None
    for _, key in offsets(kernel, stride, dilation, out):  # np.maximum keeps NaNs, as PyTorch
        best = np.array(xp[key]) if best is None else np.maximum(best, xp[key])
    return best


def first_max(x, kernel, stride, padding, dilation, ceil_mode):
    """Which kernel offset (row-major) holds each window's maximum, as PyTorch's CPU kernel
    picks it (the first of ties; a NaN wins; a window of -inf only: its first position in
    the input, never the padding), and the padding the windows read."""
    out, pads = pool_sizes(x.shape[-2:], kernel, stride, padding, dilation, ceil_mode, "max_pool2d")
    xp = pad_trailing(x, pads, -np.inf)
    inside = pad_trailing(np.ones(x.shape[-2:], dtype=bool), pads, False)
    best = which = seen = None
    for k, (_, key) in enumerate(offsets(kernel, stride, dilation, out)):
        v, valid = xp[key], inside[key]
        if best is None:
            best, which = np.array(v), np.zeros(v.shape, dtype=np.intp)
            seen = np.broadcast_to(valid, v.shape).copy()
            continue
        better = ((v > best) | np.isnan(v) | ~seen) & valid
        best = np.where(better, v, best)
        which[better] = k
        seen |= valid
    return which, pads


def _max_pool_vjp(ns, g, out, x, kernel, stride, padding, dilation, ceil_mode=False):
    which, pads = first_max(raw(x), kernel, stride, padding, dilation, ceil_mode)
    spatial = tuple(x.shape[-2:])
    if not isinstance(g, Tensor):  # arrays: each gradient added at its maximum's position
        return (_scatter_to_maxima(g, which, spatial, kernel, stride, pads, dilation),)
    hit = (which[..., None] == np.arange(math.prod(kernel))).reshape(which.shape + kernel)
    spread = g[..., None, None] * hit  # recorded: the mask is a constant
    return (ns.windows_backward(spread, spatial, kernel, stride, pads, dilation),)


def _scatter_to_maxima(g, which, spatial, kernel, stride, pads, dilation):
    """Add each window's gradient at the position of its maximum, in one bincount over the
    flattened padded planes (windows overlap, so positions repeat)."""
    (hp, wp) = (n + lo + hi for n, (lo, hi) in zip(spatial, pads, strict=True))
    oh, ow = which.shape[-2:]
    rows, cols = np.divmod(which, kernel[1])
    pos = (np.arange(oh)[:, None] * stride[0] + rows * dilation[0]) * wp
    pos = pos + np.arange(ow) * stride[1] + cols * dilation[1]
    planes = math.prod(g.shape[:-2])
    base = (np.arange(planes) * (hp * wp)).reshape(g.shape[:-2] + (1, 1))
    flat = (base + pos).reshape(-1)  # pos broadcasts over any leading batch axes of g
    z = np.bincount(flat, weights=g.reshape(-1), minlength=planes * hp * wp)
    z = z.astype(g.dtype, copy=False).reshape(g.shape[:-2] + (hp, wp))
    return crop(z, spatial, pads)


def _max_pool_shape(shape, kernel, stride, padding, dilation, ceil_mode=False):
    _check_dims(shape, "max_pool2d")
    out, _ = pool_sizes(shape[-2:], kernel, stride, padding, dilation, ceil_mode, "max_pool2d")
    return tuple(shape[:-2]) + out


# ---- average pooling -----------------------------------------------------------------------


def _divisor(spatial, kernel, stride, padding, out, count_include_pad, divisor_override):
    """Each output position's divisor, as PyTorch's: the window clipped to the padded input
    (or to the input itself without count_include_pad), unless overridden."""
    if divisor_override:
        return np.full(out, float(divisor_override))
    parts = []
    for n, k, s, p, o in zip(spatial, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        parts.append((end - start).astype(np.float64))
    return np.multiply.outer(parts[0], parts[1])


def _avg_pool_forward(x, kernel, stride, padding, ceil_mode=False, count_include_pad=True,
                      divisor_override=None):  # fmt: skip
    dil = (1, 1)
    out, pads = pool_sizes(x.shape[-2:], kernel, stride, padding, dil, ceil_mode, "avg_pool2d")
    xp = pad_trailing(x, pads)
    total = sum(xp[key] for _, key in offsets(kernel, stride, dil, out))
    div = _divisor(x.shape[-2:], kernel, stride, padding, out, count_include_pad, divisor_override)
    return total / _like(div, x)


def _avg_pool_vjp(ns, g, out, x, kernel, stride, padding, ceil_mode=False,
                  count_include_pad=True, divisor_override=None):  # fmt: skip
    spatial = tuple(x.shape[-2:])
    dil = (1, 1)
    o, pads = pool_sizes(spatial, kernel, stride, padding, dil, ceil_mode, "avg_pool2d")
    div = _divisor(spatial, kernel, stride, padding, o, count_include_pad, divisor_override)
    share = (g / _like(div, g))[..., None, None]
    spread = ns.broadcast_to(share, tuple(share.shape[:-2]) + tuple(kernel))
    return (ns.windows_backward(spread, spatial, kernel, stride, pads, dil),)


def _avg_pool_shape(shape, kernel, stride, padding, ceil_mode=False, count_include_pad=True,
                    divisor_override=None):  # fmt: skip
    _check_dims(shape, "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise AgradValueError("avg_pool2d: divisor must be not zero")
    out, _ = pool_sizes(shape[-2:], kernel, stride, padding, (1, 1), ceil_mode, "avg_pool2d")
    return tuple(shape[:-2]) + out


# ---- adaptive average pooling ----------------------------------------------------------------


def averaging_matrix(n: int, m: int) -> np.ndarray:
    """(m, n): row i averages PyTorch's window [floor(i·n/m), ceil((i+1)·n/m))."""
    a = np.zeros((m, n))
    for i in range(m):  # one row per output position (not per pixel)
        lo, hi = (i * n) // m, -(-((i + 1) * n) // m)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def _averaged(a_h, x, a_w):
    """``a_h @ x @ a_wᵀ``. With an inf or nan in x, the zeros of the averaging matrices
    would spread it (0·inf is nan) to outputs whose windows never read it: then each
    output row is summed from its window's rows only."""
    if np.isfinite(x).all():
        return np.matmul(np.matmul(a_h, x), a_w.T)
    return np.swapaxes(_rows_of(a_w, np.swapaxes(_rows_of(a_h, x), -1, -2)), -1, -2)


def _rows_of(a, x):
    """``a @ x`` over x's last two axes, reading only the rows each row of a weights."""
    rows = []
    for weights in a:
        used = np.flatnonzero(weights)
        rows.append(np.tensordot(x[..., used, :], weights[used], axes=([-2], [0])))
    return np.stack(rows, axis=-2)


def _like(a: np.ndarray, x) -> np.ndarray:
    """The float64 weights ``a`` in x's precision when x is float32 (a float64 weight would
    make a float32 pooling's result and gradient float64)."""
    dtype = getattr(x, "dtype", None)
    return a.astype(np.float32) if dtype == np.float32 else a


def _adaptive_forward(x, output_size):
    (h, w), (oh, ow) = x.shape[-2:], output_size
    return _averaged(_like(averaging_matrix(h, oh), x), x, _like(averaging_matrix(w, ow), x))


def _adaptive_vjp(ns, g, out, x, output_size):
    (h, w), (oh, ow) = tuple(x.shape[-2:]), output_size
    a_h, a_w = _like(averaging_matrix(h, oh), g), _like(averaging_matrix(w, ow), g)
    if isinstance(g, np.ndarray):
        return (_averaged(a_h.T, g, a_w.T),)
    return (ns.matmul(ns.matmul(a_h.T, g), a_w),)


def _adaptive_shape(shape, output_size):
    _check_dims(shape, "adaptive_avg_pool2d", empty_channels=True)
    if len(output_size) != 2 or any(n < 1 for n in output_size):
        raise AgradValueError(
            f"adaptive_avg_pool2d: output_size must be two positive sizes, got {output_size}"
        )
    if 0 in shape[-2:]:
        raise AgradShapeError(f"adaptive_avg_pool2d: empty input of shape {tuple(shape)}")
    return tuple(shape[:-2]) + tuple(output_size)


def _params(k, s, p, **more):
    return {"kernel": k, "stride": s, "padding": p, **more}


MAX_CASES = (
    Case(((1, 2, 4, 4),), {**_params((2, 2), (2, 2), (0, 0)), "dilation": (1, 1)}),
    Case(((2, 5, 5),), {**_params((3, 3), (2, 2), (1, 1)), "dilation": (1, 1)}),
    Case(
        ((1, 1, 5, 6),), {**_params((2, 3), (2, 1), (1, 0)), "dilation": (2, 1), "ceil_mode": True}
    ),  # fmt: skip
)
MAX_TIES = (
    Case(
        ((1, 1, 2, 4),),
        {**_params((2, 2), (1, 2), (0, 0)), "dilation": (1, 1)},
        (np.array([[[[1.0, 1.0, 2.0, 0.5], [0.0, 1.0, 2.0, 2.0]]]]),),
        at_kink=True,
    ),
)
AVG_CASES = (
    Case(((1, 2, 4, 4),), _params((2, 2), (2, 2), (0, 0))),
    Case(((2, 5, 5),), _params((3, 3), (2, 2), (1, 1), count_include_pad=False)),
    Case(((1, 1, 5, 6),), _params((2, 3), (2, 2), (1, 1), ceil_mode=True)),
    Case(((1, 1, 5, 6),), _params((3, 2), (2, 3), (1, 1), ceil_mode=True, count_include_pad=False)),
    Case(((1, 1, 4, 4),), _params((2, 2), (1, 1), (0, 0), divisor_override=3)),
)
ADAPTIVE_CASES = (
    Case(((1, 2, 5, 7),), {"output_size": (3, 2)}),
    Case(((2, 4, 4),), {"output_size": (1, 2)}),
    Case(((1, 1, 3, 3),), {"output_size": (4, 5)}),
)

# Each saves its input, as PyTorch's do (the average poolings' VJPs read only its shape,
# but a write into it after recording makes backward refuse there too).
register(
    Op("max_pool2d", "MaxPool2DWithIndicesBackward0", _max_pool_forward, _max_pool_vjp,
       _max_pool_shape, prepare=checked(_max_pool_shape),
       explain="d max_pool(x)/dx = g at the first maximum of each window",
       saves=INPUTS, kink=True, batch=trailing, method=False, cases=MAX_CASES, special=MAX_TIES,
       doc="2-D max pooling (the gradient goes to each window's first maximum)"),
    Op("avg_pool2d", "AvgPool2DBackward0", _avg_pool_forward, _avg_pool_vjp, _avg_pool_shape,
       prepare=checked(_avg_pool_shape),
       explain="d avg_pool(x)/dx = g / divisor, spread over each window", saves=INPUTS,
       batch=trailing, method=False, cases=AVG_CASES, doc="2-D average pooling"),
    Op("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", _adaptive_forward, _adaptive_vjp,
       _adaptive_shape, prepare=checked(_adaptive_shape),
       explain="d (A_h·x·A_wᵀ)/dx = A_hᵀ·g·A_w (each output averages its window)",
       saves=INPUTS, batch=trailing, method=False, cases=ADAPTIVE_CASES,
       doc="2-D average pooling to a given output size"),
)  # fmt: skip
