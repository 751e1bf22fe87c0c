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
from .core import Case, Op, Saves, batch_of, register
from .windows import Pads, each_point, out_sizes, pad_trailing, pairs, window_view


class _NumPy:
    """What `columns` needs, for the forward (a VJP passes its own namespace)."""

    permute = staticmethod(np.transpose)

    @staticmethod
    def windows(x, kernel, stride, padding, dilation):
        d = len(kernel)
        out = out_sizes(x.shape[x.ndim - d :], kernel, stride, padding, dilation, "conv")
        return window_view(pad_trailing(x, padding), kernel, stride, dilation, out)


def columns(ns, x, groups: int, kernel: tuple, stride: tuple, padding: Pads, dilation: tuple):
    """im2col: x (N, C, *S) as (N, G, c·prod(K), prod(O)), the layout the weight multiplies."""
    d = len(kernel)
    n, c = x.shape[0], x.shape[1] // groups
    spatial = tuple(x.shape[2:])
    out = out_sizes(spatial, kernel, stride, padding, dilation, "conv")
    xs = x.reshape((n, groups, c) + spatial)
    if all(k == 1 for k in kernel) and not any(lo or hi for lo, hi in padding):
        picked = xs[(Ellipsis, *(slice(None, None, s) for s in stride))]  # 1x1: no windows
        return picked.reshape((n, groups, c, math.prod(out)))
    win = ns.windows(xs, kernel, stride, padding, dilation)  # (N, G, c, *O, *K)
    order = (0, 1, 2) + tuple(3 + d + i for i in range(d)) + tuple(3 + i for i in range(d))
    return ns.permute(win, order).reshape((n, groups, c * math.prod(kernel), math.prod(out)))


def _conv_forward(x, weight, *bias, stride, padding, dilation, groups):
    kernel = tuple(weight.shape[2:])
    n, o = x.shape[0], weight.shape[0]
    cols = columns(_NumPy, x, groups, kernel, stride, padding, dilation)
    w = weight.reshape((groups, o // groups, -1))
    y = np.matmul(w, cols)  # (N, G, o, P): one matrix multiply per sample and group
    out = out_sizes(x.shape[2:], kernel, stride, padding, dilation, "conv")
    y = y.reshape((n, o) + out)
    if bias:  # (not in place: a float64 bias promotes a float32 result, as np.add does)
        y = y + bias[0].reshape((o,) + (1,) * len(kernel))
    return y


def _conv_vjp(ns, g, out, x, weight, *bias, stride, padding, dilation, groups, needs=()):
    d = len(stride)
    kernel = tuple(weight.shape[2:])
    n, o = x.shape[0], weight.shape[0]
    c = x.shape[1] // groups
    batch = batch_of(g, out.ndim)
    nb = len(batch)
    positions = tuple(out.shape[2:])
    gr = g.reshape(batch + (n, groups, o // groups, math.prod(positions)))
    grads = [None, None] + [None] * len(bias)
    if needs[0]:
        w = weight.reshape((groups, o // groups, c * math.prod(kernel)))
        cols = ns.matmul(ns.swapaxes(w, -1, -2), gr)  # batch + (N, G, c·K, P)
        cols = cols.reshape(batch + (n, groups, c) + kernel + positions)
        lead = nb + 3
        order = tuple(range(lead)) + tuple(lead + d + i for i in range(d))
        order += tuple(lead + i for i in range(d))
        cols = ns.permute(cols, order)  # batch + (N, G, c, *O, *K)
        gx = ns.windows_backward(cols, tuple(x.shape[2:]), kernel, stride, padding, dilation)
        grads[0] = gx.reshape(batch + tuple(x.shape))
    if needs[1]:
        cols = columns(ns, x, groups, kernel, stride, padding, dilation)
        gw = ns.sum(ns.matmul(gr, ns.swapaxes(cols, -1, -2)), axis=-4)  # summed over N
        grads[1] = gw.reshape(batch + tuple(weight.shape))
    if bias and needs[2]:
        grads[2] = ns.sum(gr, axis=(-4, -1)).reshape(batch + (o,))
    return tuple(grads)


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
              doc=doc)  # fmt: skip


CONV2D_CASES = (
    Case(((1, 2, 5, 5), (3, 2, 3, 3)), _params((1, 1), 0, (1, 1))),
    Case(((2, 2, 5, 6), (2, 2, 2, 3), (2,)), _params((2, 1), 1, (1, 2))),
    Case(((1, 4, 4, 4), (4, 2, 3, 3), (4,)), _params((1, 1), 1, (1, 1), groups=2)),
    Case(((1, 2, 4, 4), (2, 1, 2, 2)), _params((1, 1), 0, (1, 1), groups=2)),
    Case(((1, 3, 5, 5), (2, 3, 1, 1), (2,)), _params((2, 2), 0, (1, 1))),
)
CONV1D_CASES = (
    Case(((2, 2, 7), (3, 2, 3), (3,)), _params((2,), 1, (2,))),
    Case(((1, 4, 6), (2, 2, 2)), _params((1,), 0, (1,), groups=2)),
)

register(conv_op("conv2d", 2, CONV2D_CASES), conv_op("conv1d", 1, CONV1D_CASES))
