"""Batch normalization and layer normalization (PyTorch's native_batch_norm/layer_norm).

Each normalizes ``x`` by a mean and a (biased) variance — over every axis but the
channel axis (1) for batch norm in training, from running statistics given as constants
in evaluation, and over the trailing ``normalized_shape`` axes for layer norm — then
scales by ``weight`` and shifts by ``bias``. Their VJPs recompute the statistics from
``x`` with the array namespace (so ``create_graph=True`` differentiates them too) and
address every axis from the end, so a cotangent's leading batch axes ride along.
Updating a module's running statistics is the caller's job (`agrad.nn.functional`).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from .core import INPUTS, Case, Op, Saves, batch_of, register
from .windows import checked, each_point, trailing


def _channel_shape(ndim: int) -> tuple[int, ...]:
    return (1, -1) + (1,) * (ndim - 2)


def _stat_axes(ndim: int) -> tuple[int, ...]:
    """Batch norm's reduction axes, counted from the end: every axis but the channel's."""
    return tuple(a - ndim for a in (0, *range(2, ndim)))


def _bn_forward(x, weight, bias, running_mean=None, running_var=None, training=True, eps=1e-5):
    shape = _channel_shape(x.ndim)
    if training:
        axes = _stat_axes(x.ndim)
        centered = x - np.mean(x, axis=axes, keepdims=True)
        var = np.mean(centered * centered, axis=axes, keepdims=True)
    else:
        centered = x - running_mean.reshape(shape)
        var = running_var.reshape(shape)
    return centered * (weight.reshape(shape) / np.sqrt(var + eps)) + bias.reshape(shape)


def _bn_vjp(ns, g, out, x, weight, bias, running_mean=None, running_var=None, training=True,
            eps=1e-5, needs=(True, True, True)):  # fmt: skip
    nd, channels = x.ndim, x.shape[1]
    shape, axes = _channel_shape(nd), _stat_axes(nd)
    batch = batch_of(g, nd)
    m = float(math.prod(x.shape) // channels)
    if training:
        centered = x - ns.sum(x, axis=axes, keepdims=True) / m
        var = ns.sum(centered * centered, axis=axes, keepdims=True) / m
    else:
        centered = x - running_mean.reshape(shape)
        var = running_var.reshape(shape)
    invstd = 1.0 / ns.sqrt(var + eps)
    xhat = centered * invstd
    g_sum = ns.sum(g, axis=axes, keepdims=True)
    gxhat_sum = ns.sum(g * xhat, axis=axes, keepdims=True)
    gx = None
    if needs[0]:
        scale = weight.reshape(shape) * invstd
        gx = scale * (g - g_sum / m - xhat * (gxhat_sum / m)) if training else scale * g
    gw = gxhat_sum.reshape(batch + (channels,)) if needs[1] else None
    gb = g_sum.reshape(batch + (channels,)) if needs[2] else None
    return gx, gw, gb


def _bn_shape(xs, ws, bs, running_mean=None, running_var=None, training=True, eps=1e-5):
    if len(xs) < 2:
        raise AgradShapeError(f"batch_norm: expects (N, C, ...) input, got shape {tuple(xs)}")
    channels = xs[1]
    for what, s in (("weight", ws), ("bias", bs)):
        if tuple(s) != (channels,):
            raise AgradShapeError(
                f"batch_norm: {what} must have shape ({channels},) for an input of shape "
                f"{tuple(xs)}, got {tuple(s)}"
            )
    for what, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is None and not training:
            raise AgradValueError(f"batch_norm: {what} must be defined in evaluation mode")
        if stat is not None and np.shape(stat) != (channels,):
            raise AgradShapeError(
                f"batch_norm: {what} should contain {channels} elements, got shape {np.shape(stat)}"
            )
    if training and math.prod(xs) // max(channels, 1) <= 1:
        raise AgradValueError(
            f"batch_norm: expected more than 1 value per channel when training, got input "
            f"size {list(xs)}"
        )
    return tuple(xs)


def _ln_axes(normalized_shape) -> tuple[int, ...]:
    return tuple(range(-len(normalized_shape), 0))


def _ln_forward(x, weight, bias, normalized_shape, eps=1e-5):
    axes = _ln_axes(normalized_shape)
    centered = x - np.mean(x, axis=axes, keepdims=True)
    var = np.mean(centered * centered, axis=axes, keepdims=True)
    return centered / np.sqrt(var + eps) * weight + bias


def _ln_vjp(ns, g, out, x, weight, bias, normalized_shape, eps=1e-5, needs=(True, True, True)):
    axes = _ln_axes(normalized_shape)
    m = float(math.prod(normalized_shape))
    centered = x - ns.sum(x, axis=axes, keepdims=True) / m
    invstd = 1.0 / ns.sqrt(ns.sum(centered * centered, axis=axes, keepdims=True) / m + eps)
    xhat = centered * invstd
    gx = None
    if needs[0]:
        gxhat = g * weight
        mean_g = ns.sum(gxhat, axis=axes, keepdims=True) / m
        gx = invstd * (gxhat - mean_g - xhat * (ns.sum(gxhat * xhat, axis=axes, keepdims=True) / m))
    # The backward loop sums these over the leading axes, down to normalized_shape.
    return gx, (g * xhat if needs[1] else None), (g if needs[2] else None)


def _ln_shape(xs, ws, bs, normalized_shape, eps=1e-5):
    k = len(normalized_shape)
    if tuple(xs[len(xs) - k :]) != tuple(normalized_shape) or len(xs) < k:
        raise AgradShapeError(
            f"layer_norm: given normalized_shape={list(normalized_shape)}, expected input with "
            f"shape [*, {', '.join(map(str, normalized_shape))}], but got input of size {list(xs)}"
        )
    for what, s in (("weight", ws), ("bias", bs)):
        if tuple(s) != tuple(normalized_shape):
            raise AgradShapeError(
                f"layer_norm: {what} must have shape {tuple(normalized_shape)}, got {tuple(s)}"
            )
    return tuple(xs)


def _bn_batched(op, values, params, size):
    (x, _), *rest = values
    if params.get("training", True) or any(b for _, b in rest):
        return each_point(op, values, params, size)  # batch statistics must not mix points
    flat = x.reshape((size * x.shape[1],) + x.shape[2:])  # evaluation: samples independent
    return op.forward(flat, *(v for v, _ in rest), **params).reshape(x.shape)


_STATS = {"running_mean": np.array([0.3, -0.2, 0.1]), "running_var": np.array([0.5, 1.5, 2.0])}
BN_CASES = (
    Case(((4, 3), (3,), (3,)), {"training": True}),
    Case(((2, 3, 2, 2), (3,), (3,)), {"training": True, "eps": 1e-3}),
    Case(((2, 3, 3), (3,), (3,)), {"training": False, **_STATS}),
    Case(((3, 3, 2), (3,), (3,)), {"training": True, **_STATS}),
)
LN_CASES = (
    Case(((2, 4), (4,), (4,)), {"normalized_shape": (4,)}),
    Case(((2, 2, 3), (2, 3), (2, 3)), {"normalized_shape": (2, 3), "eps": 1e-3}),
)

register(
    Op("batch_norm", "NativeBatchNormBackward0", _bn_forward, _bn_vjp, _bn_shape, arity=3,
       prepare=checked(_bn_shape),
       explain="d/dx = w·invstd·(g - mean(g) - x̂·mean(g·x̂)) over the batch statistics "
               "(w·invstd·g from running statistics); d/dw = Σ g·x̂; d/db = Σ g",
       saves=Saves(inputs=(0, 1)), needs_mask=True, batch=_bn_batched, method=False, cases=BN_CASES,
       doc="batch normalization over every axis but the channel axis (1)"),
    Op("layer_norm", "NativeLayerNormBackward0", _ln_forward, _ln_vjp, _ln_shape, arity=3,
       prepare=checked(_ln_shape),
       explain="d/dx = invstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)) with ĝ = g·w over the normalized "
               "axes; d/dw = Σ g·x̂; d/db = Σ g",
       saves=INPUTS, needs_mask=True, batch=trailing, method=False, cases=LN_CASES,
       doc="layer normalization over the trailing normalized_shape axes"),
)  # fmt: skip
