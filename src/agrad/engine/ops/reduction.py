"""Reductions (sum, mean, prod, max/min, logsumexp, norm) and softmax along an axis.

A reduction's gradient is the cotangent re-expanded to the input's shape:
reshaped to keep the reduced axes as size 1, then broadcast. Leading batch
dimensions of the cotangent (Jacobian rows) ride along untouched.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradValueError
from .. import kernels
from ..tensor import Tensor
from .core import Case, Op, batch_of, kept_shape, normalize_axis, raw, reduced_shape, register


def _expand(ns, g, x, axis, out_ndim):
    batch = batch_of(g, out_ndim)
    return ns.broadcast_to(g.reshape(batch + kept_shape(x.shape, axis)), batch + tuple(x.shape))


def _kept(t, x, axis):
    """The saved output (or any reduced value) reshaped with the reduced axes kept."""
    return t.reshape(kept_shape(x.shape, axis))


def _reduce_shape(shape, axis=None, keepdims=False, **_):
    return reduced_shape(shape, axis, keepdims, "reduction")


def _axis_name(plain, with_axis):
    def name(node):
        return plain if node.params.get("axis") is None else with_axis

    return name


def _sum_forward(x, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims)


def _sum_vjp(ns, g, out, x, axis=None, keepdims=False):
    return (_expand(ns, g, x, axis, out.ndim),)


def _mean_forward(x, axis=None, keepdims=False):
    return np.mean(x, axis=axis, keepdims=keepdims)


def _mean_vjp(ns, g, out, x, axis=None, keepdims=False):
    count = max(math.prod(x.shape), 1) // max(math.prod(out.shape), 1)
    return (_expand(ns, g, x, axis, out.ndim) / float(count),)


def _var_forward(x, axis=None, keepdims=False, correction=1):
    return np.var(x, axis=axis, keepdims=keepdims, ddof=correction)


def _std_forward(x, axis=None, keepdims=False, correction=1):
    return np.std(x, axis=axis, keepdims=keepdims, ddof=correction)


def _var_complex(x, axis=None, keepdims=False, correction=1):
    # np.var of a complex array is the mean of |x - mean|^2, which is not holomorphic.
    d = x - np.mean(x, axis=axis, keepdims=True)
    n = max(x.size, 1) // max(np.size(np.sum(d, axis=axis)), 1)
    return np.sum(d * d, axis=axis, keepdims=keepdims) / np.float64(n - correction)


def _std_complex(x, axis=None, keepdims=False, correction=1):
    return np.sqrt(_var_complex(x, axis, keepdims, correction))


def _centered(ns, x, axis):
    """x minus its mean over ``axis`` (kept), and the count divided by in the variance."""
    n = max(math.prod(x.shape), 1) // max(math.prod(reduced_shape(x.shape, axis)), 1)
    return x - ns.sum(x, axis=axis, keepdims=True) / float(n), n


def _var_vjp(ns, g, out, x, axis=None, keepdims=False, correction=1):
    centered, n = _centered(ns, x, axis)
    scale = np.divide(2.0, np.float64(n - correction))  # inf/nan, as PyTorch, when n <= correction
    return (_expand(ns, g, x, axis, out.ndim) * centered * scale,)


def _std_vjp(ns, g, out, x, axis=None, keepdims=False, correction=1):
    centered, n = _centered(ns, x, axis)
    kept = _kept(out, x, axis)
    zero = raw(kept) == 0  # PyTorch: zero gradient where the deviation is zero
    denominator = ns.where(zero, 1.0, kept) * np.float64(n - correction)
    return (_expand(ns, g, x, axis, out.ndim) * ns.where(zero, 0.0, centered / denominator),)


def _cumsum_forward(x, axis=0):
    return np.cumsum(x, axis=axis)


def _cumsum_vjp(ns, g, out, x, axis=0):
    # d/dx_j of sum_i g_i * cumsum(x)_i = sum of g_i for i >= j: a reversed cumsum of g.
    ax = normalize_axis(axis, x.ndim, "cumsum") - x.ndim
    flip = (Ellipsis, slice(None, None, -1)) + (slice(None),) * (-ax - 1)
    return (ns.cumsum(g[flip], axis=ax)[flip],)


def _cumsum_shape(shape, axis=0):
    normalize_axis(axis, len(shape), "cumsum")
    return tuple(shape)


def _prod_forward(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims)


def _prod_vjp(ns, g, out, x, axis=None, keepdims=False):
    # d(prod)/dx_i is the product of the others; written to stay right when zeros occur.
    data = raw(x)
    zero = data == 0
    if zero.any() and isinstance(x, Tensor):  # recording a graph (create_graph)
        return (_expand(ns, g, x, axis, out.ndim) * _products_of_others(ns, x, axis),)
    zeros_here = np.sum(zero, axis=axis, keepdims=True)
    safe = ns.where(zero, 1.0, x)
    others_nonzero = ns.prod(safe, axis=axis, keepdims=True)
    no_zero = _kept(out, x, axis) / safe
    single = ns.where(zero & (zeros_here == 1), others_nonzero, 0.0)
    local = ns.where(zeros_here == 0, no_zero, single)
    return (_expand(ns, g, x, axis, out.ndim) * local,)


def _products_of_others(ns, x, axis):
    """prod of every other element, as a differentiable expression that stays right at
    zeros (so second derivatives are too): row j of an n x n matrix holds x with x_j
    replaced by 1. Quadratic in n, so used only for a recorded graph at a point with zeros."""
    if axis is not None or math.prod(x.shape) > 4096:
        raise AgradValueError(
            "prod: second derivatives at an input that contains zeros are supported for a "
            "product over all elements (up to 4,096 of them)"
        )
    n = math.prod(x.shape)
    rows = ns.where(np.eye(n, dtype=bool), 1.0, x.reshape((1, n)))
    return ns.prod(rows, axis=-1).reshape(tuple(x.shape))


def _amax_forward(x, axis=None, keepdims=False):
    return np.amax(x, axis=axis, keepdims=keepdims)


def _amin_forward(x, axis=None, keepdims=False):
    return np.amin(x, axis=axis, keepdims=keepdims)


def _extreme_vjp(ns, g, out, x, axis=None, keepdims=False):
    # PyTorch (max/amax without indices) shares the gradient evenly among ties.
    hits = raw(x) == raw(out).reshape(kept_shape(x.shape, axis))
    share = hits / np.sum(hits, axis=axis, keepdims=True)
    return (_expand(ns, g, x, axis, out.ndim) * share,)


def _argmax_forward(x, axis, keepdims=False):
    return np.amax(x, axis=axis, keepdims=keepdims)


def _argmin_forward(x, axis, keepdims=False):
    return np.amin(x, axis=axis, keepdims=keepdims)


def _first_hit(data, axis, pick):
    # max(x, dim) returns indices; its gradient goes to that one index (the first).
    idx = np.expand_dims(pick(data, axis=axis), axis)
    return (
        np.arange(data.shape[axis]).reshape(
            [-1 if i == axis % data.ndim else 1 for i in range(data.ndim)]
        )
        == idx
    )


def _argmax_vjp(ns, g, out, x, axis, keepdims=False):
    return (_expand(ns, g, x, axis, out.ndim) * _first_hit(raw(x), axis, np.argmax),)


def _argmin_vjp(ns, g, out, x, axis, keepdims=False):
    return (_expand(ns, g, x, axis, out.ndim) * _first_hit(raw(x), axis, np.argmin),)


def _logsumexp_vjp(ns, g, out, x, axis=None, keepdims=False):
    return (_expand(ns, g, x, axis, out.ndim) * ns.exp(x - _kept(out, x, axis)),)


def _softmax_vjp(ns, g, out, x, axis=-1):
    ax = normalize_axis(axis, x.ndim, "softmax") - x.ndim  # from the end: batch-safe
    return (out * (g - ns.sum(g * out, axis=ax, keepdims=True)),)


def _log_softmax_vjp(ns, g, out, x, axis=-1):
    ax = normalize_axis(axis, x.ndim, "log_softmax") - x.ndim
    return (g - ns.exp(out) * ns.sum(g, axis=ax, keepdims=True),)


def _softmax_shape(shape, axis=-1):
    normalize_axis(axis, len(shape), "softmax")
    return tuple(shape)


def _norm_forward(x, ord=2.0, axis=None, keepdims=False):
    a = np.abs(x)
    if ord == 2:
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
    if ord == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return np.amax(a, axis=axis, keepdims=keepdims)
    return np.sum(a**ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _norm_vjp(ns, g, out, x, ord=2.0, axis=None, keepdims=False):
    gx = _expand(ns, g, x, axis, out.ndim)
    if ord == 1:
        return (gx * ns.sign(x),)
    kept = _kept(out, x, axis)
    safe = ns.where(raw(kept) == 0, 1.0, kept)  # PyTorch: zero gradient at a zero norm
    if ord == 2:
        return (gx * x / safe,)
    if ord == np.inf:
        hits = np.abs(raw(x)) == raw(kept)
        return (gx * ns.sign(x) * (hits / np.sum(hits, axis=axis, keepdims=True)),)
    return (gx * ns.sign(x) * ns.abs(x) ** (ord - 1.0) / safe ** (ord - 1.0),)


def _norm_shape(shape, ord=2.0, axis=None, keepdims=False):
    return reduced_shape(shape, axis, keepdims, "norm")


REDUCE_CASES = (
    Case(((2, 3),)),
    Case(((2, 3),), {"axis": 0}),
    Case(((2, 3),), {"axis": 1, "keepdims": True}),
    Case(((2, 3),), {"axis": -1}),
    Case(((3,),)),
    Case(((),)),
    Case(((2, 3, 2),), {"axis": (0, 2)}),
)
AXIS_CASES = (Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": 1, "keepdims": True}))
SOFTMAX_CASES = (Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": -1}), Case(((4,),)))
NORM_CASES = REDUCE_CASES[:5] + tuple(
    Case(((2, 3),), {"ord": p, "axis": 1}) for p in (1.0, np.inf, 3.0)
)

register(
    Op("sum", _axis_name("SumBackward0", "SumBackward1"), _sum_forward, _sum_vjp,
       _reduce_shape, saves=False, cases=REDUCE_CASES),
    Op("mean", _axis_name("MeanBackward0", "MeanBackward1"), _mean_forward, _mean_vjp,
       _reduce_shape, saves=False, cases=REDUCE_CASES),
    Op("prod", _axis_name("ProdBackward0", "ProdBackward1"), _prod_forward, _prod_vjp,
       _reduce_shape, cases=REDUCE_CASES, reads_output=True),
    Op("amax", _axis_name("MaxBackward1", "AmaxBackward0"), _amax_forward, _extreme_vjp,
       _reduce_shape, kink=True, cases=REDUCE_CASES, reads_output=True),
    Op("amin", _axis_name("MinBackward1", "AminBackward0"), _amin_forward, _extreme_vjp,
       _reduce_shape, kink=True, cases=REDUCE_CASES, reads_output=True),
    Op("max_dim", "MaxBackward0", _argmax_forward, _argmax_vjp, _reduce_shape, kink=True,
       cases=AXIS_CASES),
    Op("min_dim", "MinBackward0", _argmin_forward, _argmin_vjp, _reduce_shape, kink=True,
       cases=AXIS_CASES),
    Op("var", "VarBackward0", _var_forward, _var_vjp, _reduce_shape, cases=REDUCE_CASES[:5],
       complex_forward=_var_complex),
    Op("std", "StdBackward0", _std_forward, _std_vjp, _reduce_shape, reads_output=True,
       cases=REDUCE_CASES[:5], complex_forward=_std_complex),
    Op("cumsum", "CumsumBackward0", _cumsum_forward, _cumsum_vjp, _cumsum_shape, saves=False,
       cases=(Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": -1}),
              Case(((4,),), {"axis": 0}))),
    Op("logsumexp", "LogsumexpBackward0", kernels.logsumexp, _logsumexp_vjp, _reduce_shape,
       cases=REDUCE_CASES, reads_output=True),
    Op("softmax", "SoftmaxBackward0", kernels.softmax, _softmax_vjp, _softmax_shape,
       reads_inputs=False,
       cases=SOFTMAX_CASES, reads_output=True),
    Op("log_softmax", "LogSoftmaxBackward0", kernels.log_softmax, _log_softmax_vjp,
       _softmax_shape, reads_inputs=False, cases=SOFTMAX_CASES, reads_output=True),
    Op("norm", "LinalgVectorNormBackward0", _norm_forward, _norm_vjp, _norm_shape, kink=True,
       cases=NORM_CASES, reads_output=True),
)  # fmt: skip
