"""Convolution (PyTorch's conv1d and conv2d: stride, padding, dilation, groups, bias).

The forward is im2col and one matrix multiply: the padded input's windows (a
stride-tricks view) copied once into columns of shape (N, G, c·K, P), then multiplied by
the weight as (G, o, c·K) — no loop over pixels. The VJP is written with the array
namespace: the weight's gradient is the cotangent times the columns, the input's is the
columns of weightᵀ·g scattered back by `windows_backward`, so ``create_graph=True``
records ops with VJPs of their own. Batch dimensions of the cotangent lead; every axis
is addressed from the end.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradShapeError
from ..tensor import Tensor
from .core import Case, Op, Saves, batch_of, raw, register
from .windows import Pads, checked, each_point, out_sizes, pad_trailing, pairs, window_view

# Below this many output positions per sample, the samples share one matrix product (the
# weight is read once, not once per sample; measured in benchmarks/bench_nn.py's shapes).
MERGE_BELOW = 64


class _NumPy:
    """What `columns` needs, for the forward (a VJP passes its own namespace)."""

    permute = staticmethod(np.transpose)

    @staticmethod
    def windows(x, kernel, stride, padding, dilation):
        d = len(kernel)
        out = out_sizes(x.shape[x.ndim - d :], kernel, stride, padding, dilation, "conv")
        return window_view(pad_trailing(x, padding), kernel, stride, dilation, out)


def columns(ns, x, groups: int, kernel: tuple, stride: tuple, padding: Pads, dilation: tuple,
            samples_last: bool = False):  # fmt: skip
    """im2col: x (N, C, *S) as (N, G, c·prod(K), prod(O)), the layout the weight multiplies
    sample by sample; ``samples_last``: as (G, c·prod(K), N·prod(O)), the layout the weight's
    gradient contracts in one product."""
    d = len(kernel)
    n, c = x.shape[0], x.shape[1] // groups
    spatial = tuple(x.shape[2:])
    out = out_sizes(spatial, kernel, stride, padding, dilation, "conv")
    xs = x.reshape((n, groups, c) + spatial)
    if all(k == 1 for k in kernel) and not any(lo or hi for lo, hi in padding):
        win = xs[(Ellipsis, *(slice(None, None, s) for s in stride))]  # 1x1: no windows
        kernel_axes: tuple = ()
    else:
        win = ns.windows(xs, kernel, stride, padding, dilation)  # (N, G, c, *O, *K)
        kernel_axes = tuple(3 + d + i for i in range(d))
    out_axes = tuple(3 + i for i in range(d))
    rows, p = c * math.prod(kernel), math.prod(out)
    if samples_last:
        order = (1, 2) + kernel_axes + (0,) + out_axes
        return ns.permute(win, order).reshape((groups, rows, n * p))
    order = (0, 1, 2) + kernel_axes + out_axes
    return ns.permute(win, order).reshape((n, groups, rows, p))


def _conv_forward(x, weight, *bias, stride, padding, dilation, groups):
    kernel = tuple(weight.shape[2:])
    n, o = x.shape[0], weight.shape[0]
    out = out_sizes(x.shape[2:], kernel, stride, padding, dilation, "conv")
    w = weight.reshape((groups, o // groups, -1))
    if n > 1 and math.prod(out) <= MERGE_BELOW:  # small maps: one product for all samples
        cols = columns(_NumPy, x, groups, kernel, stride, padding, dilation, samples_last=True)
        y = np.matmul(w, cols).reshape((groups, o // groups, n, -1))  # (G, o, N, P)
        y = np.ascontiguousarray(np.moveaxis(y, 2, 0))
    else:  # (N, G, o, P): one matrix multiply per sample and group
        y = np.matmul(w, columns(_NumPy, x, groups, kernel, stride, padding, dilation))
    y = y.reshape((n, o) + out)
    if bias:  # (not in place: a float64 bias promotes a float32 result, as np.add does)
        y = y + bias[0].reshape((o,) + (1,) * len(kernel))
    return y


def _conv_vjp(ns, g, out, x, weight, *bias, stride, padding, dilation, groups, needs=()):
    d = len(stride)
    n, o = x.shape[0], weight.shape[0]
    batch = batch_of(g, out.ndim)
    nb = len(batch)
    grads = [None, None] + [None] * len(bias)
    if needs[0]:
        grads[0] = _input_grad(ns, g, x, weight, batch, stride, padding, dilation, groups)
    if needs[1]:  # g·columnsᵀ, contracting samples and positions in one product
        cols = columns(ns, x, groups, tuple(weight.shape[2:]), stride, padding, dilation, True)
        p = math.prod(out.shape[2:])
        gs = g.reshape(batch + (n, groups, o // groups, p))
        gs = ns.permute(gs, tuple(range(nb)) + (nb + 1, nb + 2, nb, nb + 3))  # (G, o, N, P)
        gs = gs.reshape(batch + (groups, o // groups, n * p))
        shape = batch + tuple(weight.shape)
        if isinstance(g, Tensor):
            grads[1] = ns.matmul(gs, ns.swapaxes(cols, -1, -2)).reshape(shape)
        else:  # into a fresh array of the weight's shape, which the leaf's .grad can keep
            gw = np.empty(shape, dtype=np.result_type(gs, cols))
            np.matmul(gs, np.swapaxes(cols, -1, -2), out=gw.reshape(gs.shape[:-1] + (-1,)))
            grads[1] = gw
    if bias and needs[2]:
        grads[2] = ns.sum(g, axis=(-d - 2, *range(-d, 0)))
    return tuple(grads)


def _input_grad(ns, g, x, weight, batch, stride, padding, dilation, groups):
    """The transposed convolution of g. With stride 1 it is a convolution (im2col and one
    product again): g padded by the kernel's span less the padding, by the weight flipped
    with its in and out channels swapped (a copy of the weight: used when that is smaller
    than the input). Otherwise the columns wᵀ·g, scattered back by `windows_backward`."""
    d, nb = len(stride), len(batch)
    kernel = tuple(weight.shape[2:])
    n, o, c = x.shape[0], weight.shape[0], x.shape[1] // groups
    spans = [dl * (k - 1) for k, dl in zip(kernel, dilation, strict=True)]
    full = tuple((s - lo, s - hi) for s, (lo, hi) in zip(spans, padding, strict=True))
    as_conv = all(s == 1 for s in stride) and all(a >= 0 and b >= 0 for a, b in full)
    # (That pads g with zeros: an inf or nan in the weight would meet them, 0·inf = nan, at
    # inputs it never touches; the scatter below adds only what each input receives.)
    as_conv = as_conv and bool(np.isfinite(raw(weight)).all())
    if as_conv and math.prod(weight.shape) <= math.prod(x.shape):  # (it copies the weight)
        w = ns.swapaxes(weight.reshape((groups, o // groups, c) + kernel), 1, 2)
        w = w[(Ellipsis, *(slice(None, None, -1),) * d)].reshape((groups * c, o // groups) + kernel)
        flat = g.reshape((-1,) + tuple(g.shape[nb + 1 :]))  # batch rows join the samples
        conv = getattr(ns, f"conv{d}d")
        gx = conv(flat, w, stride=stride, padding=full, dilation=dilation, groups=groups)
        return gx.reshape(batch + tuple(x.shape))
    p = math.prod(g.shape[g.ndim - d :])
    positions = tuple(g.shape[g.ndim - d :])
    gr = g.reshape(batch + (n, groups, o // groups, p))
    w = weight.reshape((groups, o // groups, c * math.prod(kernel)))
    cols = ns.matmul(ns.swapaxes(w, -1, -2), gr)  # batch + (N, G, c·K, P)
    cols = cols.reshape(batch + (n, groups, c) + kernel + positions)
    lead = nb + 3
    order = tuple(range(lead)) + tuple(lead + d + i for i in range(d))
    cols = ns.permute(cols, order + tuple(lead + i for i in range(d)))  # (N, G, c, *O, *K)
    gx = ns.windows_backward(cols, tuple(x.shape[2:]), kernel, stride, padding, dilation)
    return gx.reshape(batch + tuple(x.shape))


def _conv_shape(xs, ws, *bs, stride, padding, dilation, groups, name="conv"):
    d = len(stride)
    if len(xs) != d + 2 or len(ws) != d + 2:
        raise AgradShapeError(
            f"{name}: expects an input of {d + 2} dimensions (N, C, {'L' if d == 1 else 'H, W'}) "
            f"and a weight of {d + 2} (out_channels, in_channels/groups, kernel...), got "
            f"input {tuple(xs)} and weight {tuple(ws)}"
        )
    if groups < 1 or ws[0] % groups:
        raise AgradShapeError(
            f"{name}: out_channels ({ws[0]}) must be divisible by groups ({groups})"
        )
    if xs[1] != ws[1] * groups:
        raise AgradShapeError(
            f"{name}: given groups={groups}, weight of size {list(ws)}, expected input"
            f"{list(xs)} to have {ws[1] * groups} channels, but got {xs[1]} channels instead"
        )
    if bs and tuple(bs[0]) != (ws[0],):
        raise AgradShapeError(
            f"{name}: bias must have shape ({ws[0]},) (one per output channel), got {tuple(bs[0])}"
        )
    out = out_sizes(tuple(xs[2:]), tuple(ws[2:]), stride, padding, dilation, name)
    return (xs[0], ws[0]) + out


def _batched(op, values, params, size):
    """Points that differ in the input only: one convolution over size·N samples."""
    (x, bx), *rest = values
    if not bx or any(b for _, b in rest):
        return each_point(op, values, params, size)
    flat = x.reshape((size * x.shape[1],) + x.shape[2:])
    y = op.forward(flat, *(v for v, _ in rest), **params)
    return y.reshape((size, x.shape[1]) + y.shape[1:])


def _params(stride, padding, dilation, groups=1):
    d = len(stride)
    return {"stride": stride, "padding": pairs(padding, d), "dilation": dilation, "groups": groups}


READS = Saves(inputs=(0, 1))


def conv_op(name: str, d: int, cases: tuple) -> Op:
    def shape(*shapes, **params):
        return _conv_shape(*shapes, **params, name=name)

    doc = f"{d}-D convolution (cross-correlation): stride, padding, dilation, groups"
    # The input and the weight are read (as PyTorch saves them); the bias is not.
    return Op(name, "ConvolutionBackward0", _conv_forward, _conv_vjp, shape, saves=READS,
              explain="d conv(x, w)/dx = wᵀ·g scattered back over the windows; "
                      "d/dw = g·windows(x)ᵀ; d/db = g summed over samples and positions",
              arity=-1, method=False, needs_mask=True, batch=_batched, grows=True, cases=cases,
              prepare=checked(shape),
              doc=doc)  # fmt: skip


CONV2D_CASES = (
    Case(((1, 2, 5, 5), (3, 2, 3, 3)), _params((1, 1), 0, (1, 1))),
    Case(((2, 2, 5, 6), (2, 2, 2, 3), (2,)), _params((2, 1), 1, (1, 2))),
    Case(((1, 4, 4, 4), (4, 2, 3, 3), (4,)), _params((1, 1), 1, (1, 1), groups=2)),
    Case(((1, 2, 4, 4), (2, 1, 2, 2)), _params((1, 1), 0, (1, 1), groups=2)),
    Case(((1, 3, 5, 5), (2, 3, 1, 1), (2,)), _params((2, 2), 0, (1, 1))),
    Case(((2, 2, 5, 5), (2, 2, 2, 2), (2,)), _params((1, 1), 1, (2, 1))),  # g as a convolution
)
CONV1D_CASES = (
    Case(((2, 2, 7), (3, 2, 3), (3,)), _params((2,), 1, (2,))),
    Case(((1, 4, 6), (2, 2, 2)), _params((1,), 0, (1,), groups=2)),
)

register(conv_op("conv2d", 2, CONV2D_CASES), conv_op("conv1d", 1, CONV1D_CASES))
