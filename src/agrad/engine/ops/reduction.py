"""Reductions (sum, mean, prod, max/min, var/std, logsumexp, norm), softmax along an axis.

A reduction's gradient is the cotangent re-expanded to the input's shape:
reshaped to keep the reduced axes as size 1, then broadcast. Leading batch
dimensions of the cotangent (Jacobian rows) ride along untouched.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import AgradIndexError, AgradValueError
from .. import batching, kernels
from ..kernels import Array, Axis
from ..tensor import Tensor
from .core import (
    ALONG_AXIS,
    INPUTS_AND_OUTPUT,
    NOTHING,
    OUTPUT,
    REDUCTION,
    Case,
    Op,
    along_axis_shape,
    batch_of,
    kept_shape,
    normalize_axis,
    raw,
    reduce_shape,
    reduced_shape,
    register,
    special,
)


def _expand(ns, g, x, axis, out_ndim):
    batch = batch_of(g, out_ndim)
    return ns.broadcast_to(g.reshape(batch + kept_shape(x.shape, axis)), batch + tuple(x.shape))


def _kept(t, x, axis):
    """The saved output (or any reduced value) reshaped with the reduced axes kept."""
    return t.reshape(kept_shape(x.shape, axis))


def _axis_name(plain, with_axis):
    def name(node):
        return plain if node.params.get("axis") is None else with_axis

    return name


def _sum_vjp(ns, g, out, x, axis=None, keepdims=False):
    if axis is None and g.ndim == out.ndim:  # all of it, no batch: g broadcasts as it is
        return (ns.broadcast_to(g, tuple(x.shape)),)
    return (_expand(ns, g, x, axis, out.ndim),)


def _axis_of(x: Any, axis: Axis) -> Axis:
    """NumPy's mean/var/std refuse an axis of a 0-d array; PyTorch reduces it (0 or -1)."""
    return None if np.ndim(x) == 0 else axis


def _mean_forward(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
    return np.mean(x, axis=_axis_of(x, axis), keepdims=keepdims)


def _mean_vjp(ns, g, out, x, axis=None, keepdims=False):
    count = max(math.prod(x.shape), 1) // max(math.prod(out.shape), 1)
    return (_expand(ns, g, x, axis, out.ndim) / float(count),)


def _var_forward(x: Array, axis: Axis = None, keepdims: bool = False, correction: int = 1):
    return np.var(x, axis=_axis_of(x, axis), keepdims=keepdims, ddof=correction)


def _std_forward(x: Array, axis: Axis = None, keepdims: bool = False, correction: int = 1):
    return np.std(x, axis=_axis_of(x, axis), keepdims=keepdims, ddof=correction)


def _var_complex(x, axis=None, keepdims=False, correction=1):
    # np.var of a complex array is the mean of |x - mean|^2, which is not holomorphic.
    axis = _axis_of(x, axis)
    d = x - np.mean(x, axis=axis, keepdims=True)
    n = max(x.size, 1) // max(np.size(np.sum(d, axis=axis)), 1)
    return np.sum(d * d, axis=axis, keepdims=keepdims) / np.float64(n - correction)


def _std_complex(x, axis=None, keepdims=False, correction=1):
    return kernels.complex_sqrt(_var_complex(x, axis, keepdims, correction))  # (a kink at 0)


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


def _prod_vjp(ns, g, out, x, axis=None, keepdims=False):
    # d(prod)/dx_i is the product of the others; written to stay right when zeros occur.
    if x.ndim == 0:  # the product of nothing else: 1, even at inf or nan (as PyTorch)
        return (_expand(ns, g, x, axis, out.ndim),)
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
    """prod of every other element of each reduced group, as a differentiable expression
    that stays right at zeros (so second derivatives are too): the reduced axes moved
    last and flattened to n, then an n x n block per group holds x with x_j replaced by 1.
    Quadratic in n, so used only for a recorded graph at a point with zeros."""
    nd = x.ndim
    given = axis if isinstance(axis, tuple) else (axis,)
    axes = tuple(range(nd)) if axis is None else tuple(normalize_axis(a, nd) for a in given)
    kept = tuple(i for i in range(nd) if i not in axes)
    n = math.prod(x.shape[i] for i in axes)
    if n > 4096:
        raise AgradValueError(
            "prod: second derivatives at an input that contains zeros are supported for "
            "products of up to 4,096 elements"
        )
    order = kept + axes
    lead = tuple(x.shape[i] for i in kept)
    flat = ns.permute(x, order).reshape(lead + (1, n))
    others = ns.prod(ns.where(np.eye(n, dtype=bool), 1.0, flat), axis=-1)  # lead + (n,)
    back = others.reshape(lead + tuple(x.shape[i] for i in axes))
    return ns.permute(back, tuple(int(i) for i in np.argsort(order)))


def _extreme_vjp(ns, g, out, x, axis=None, keepdims=False):
    # PyTorch (max/amax without indices) shares the gradient evenly among ties. Over all
    # elements (its MaxBackward1) a nan is the extreme, so its gradient goes to the nans;
    # over an axis (AmaxBackward0) a group holding a nan gets nan.
    kept = raw(out).reshape(kept_shape(x.shape, axis))
    hits = raw(x) == kept
    if axis is None:
        hits |= np.isnan(raw(x)) & np.isnan(kept)
    share = hits / np.sum(hits, axis=axis, keepdims=True)
    return (_expand(ns, g, x, axis, out.ndim) * share,)


def _max_dim_forward(x, axis, keepdims=False, indices=None):
    return np.amax(x, axis=axis, keepdims=keepdims)


def _min_dim_forward(x, axis, keepdims=False, indices=None):
    return np.amin(x, axis=axis, keepdims=keepdims)


def _indices_of(pick):
    """max(x, dim) returns where the maxima are; found once, when the op is applied, and
    kept for the VJP (as PyTorch saves them), so the VJP never reads x's values."""

    def prepare(x, axis, keepdims=False, indices=None):
        name = "max" if pick is np.argmax else "min"
        ax = normalize_axis(axis, np.ndim(x), name)  # one integer dim, in range, as PyTorch
        if np.ndim(x) and np.shape(x)[ax] == 0:
            raise AgradIndexError(
                f"{name}(): expected reduction dim {axis} to have non-zero size "
                f"(input of shape {np.shape(x)})"
            )
        if indices is None:  # (NumPy's argmax of a 0-d array along 0 or -1 is 0)
            indices = pick(x, axis=axis, keepdims=keepdims and np.ndim(x) > 0)
        return {"axis": axis, "keepdims": keepdims, "indices": indices}

    return prepare


def _at_index_vjp(ns, g, out, x, axis, keepdims=False, indices=None):
    # The gradient goes to the one index max(x, dim) returned (the first of ties).
    if x.ndim == 0:
        return (_expand(ns, g, x, axis, out.ndim),)
    ax = normalize_axis(axis, x.ndim)
    where = indices if keepdims else np.expand_dims(indices, ax)
    hit = np.arange(x.shape[ax]).reshape([-1 if i == ax else 1 for i in range(x.ndim)]) == where
    return (_expand(ns, g, x, axis, out.ndim) * hit,)


def _logsumexp_vjp(ns, g, out, x, axis=None, keepdims=False):
    return (_expand(ns, g, x, axis, out.ndim) * ns.exp(x - _kept(out, x, axis)),)


def _softmax_vjp(ns, g, out, x, axis=-1):
    if x.ndim == 0:  # the sum over the one element is that element (no axis to sum)
        return (out * (g - g * out),)
    ax = normalize_axis(axis, x.ndim, "softmax") - x.ndim  # from the end: batch-safe
    return (out * (g - ns.sum(g * out, axis=ax, keepdims=True)),)


def _log_softmax_vjp(ns, g, out, x, axis=-1):
    if x.ndim == 0:
        return (g - ns.exp(out) * g,)
    ax = normalize_axis(axis, x.ndim, "log_softmax") - x.ndim
    return (g - ns.exp(out) * ns.sum(g, axis=ax, keepdims=True),)


def _norm_forward(x: Array, ord: float = 2.0, axis: Axis = None, keepdims: bool = False):
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
    if ord == 1:  # (PyTorch's sign of nan is 0)
        return (gx * ns.where(np.isnan(raw(x)), 0.0, ns.sign(x)),)
    kept = _kept(out, x, axis)
    safe = ns.where(raw(kept) == 0, 1.0, kept)  # PyTorch: zero gradient at a zero norm
    if ord == 2:
        return (gx * x / safe,)
    if ord == np.inf:  # shared among ties; none where the norm is nan (as PyTorch)
        hits = np.abs(raw(x)) == raw(kept)
        count = np.sum(hits, axis=axis, keepdims=True)
        return (gx * ns.where(hits, ns.sign(x), 0.0) / np.maximum(count, 1),)
    return (gx * ns.sign(x) * ns.abs(x) ** (ord - 1.0) / safe ** (ord - 1.0),)


def _nonnegative_order(shape, ord=2.0, axis=None, keepdims=False):
    if not ord > 0:
        raise AgradValueError(f"norm: ord must be positive (1, 2, inf, ...), got {ord}")
    return reduce_shape(shape, axis, keepdims)


def reduction(name, grad_fn, forward, vjp, explain, **facts) -> Op:
    """An entry of the reduction family: ``agrad.name(x, dim, keepdim)`` (or ``axis``,
    ``keepdims``), ``x.name(...)``, and ``name(x, axis, keepdims)`` in the language."""
    return Op(name, grad_fn, forward, vjp, reduce_shape, explain=explain, family=REDUCTION,
              language=facts.pop("language", True), cases=facts.pop("cases", REDUCE_CASES),
              **facts)  # fmt: skip


def along_axis(name, grad_fn, forward, vjp, explain, **facts) -> Op:
    """An entry of the along-axis family (the shape is kept): ``agrad.name(x, dim)``,
    ``x.name(dim)``, and ``name(x, axis)`` in the language, with the forward's default."""
    return Op(name, grad_fn, forward, vjp, along_axis_shape, explain=explain,
              family=ALONG_AXIS, language=True, **facts)  # fmt: skip


REDUCE_CASES = (
    Case(((2, 3),)),
    Case(((2, 3),), {"axis": 0}),
    Case(((2, 3),), {"axis": 1, "keepdims": True}),
    Case(((2, 3),), {"axis": -1}),
    Case(((3,),)),
    Case(((),)),
    Case(((2, 3, 2),), {"axis": (0, 2)}),
    Case(((),), {"axis": -1}),  # a 0-d value takes dim 0 and -1 (PyTorch's rule)
)
AXIS_CASES = (Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": 1, "keepdims": True}))
SOFTMAX_CASES = (
    Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": -1}), Case(((4,),), {"axis": -1}),
    Case(((),), {"axis": -1}),  # a 0-d value: softmax 1, log_softmax 0 (PyTorch's)
)  # fmt: skip
NORM_CASES = REDUCE_CASES[:5] + tuple(
    Case(((2, 3),), {"ord": p, "axis": 1}) for p in (1.0, np.inf, 3.0)
)
ZEROS = (special([[0.0, 2.0, 3.0], [0.0, 0.0, 1.0]], axis=1), special([0.0, 2.0, -3.0]),
         special([[1.0, 2.0], [3.0, 0.0]], axis=0, keepdims=True))  # fmt: skip
TIED = (special([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], at_kink=True),
        special([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], axis=1, at_kink=True))  # fmt: skip
SPREAD = "over axis, divided by n - correction"

register(
    reduction("sum", _axis_name("SumBackward0", "SumBackward1"), kernels.sum, _sum_vjp,
              "d sum(a)/da = 1 for every element", saves=NOTHING),
    Op("mean", _axis_name("MeanBackward0", "MeanBackward1"), _mean_forward, _mean_vjp,
       reduce_shape, explain="d mean(a)/da = 1/n for every element", saves=NOTHING,
       language=True, doc="mean over axis (all axes by default)", cases=REDUCE_CASES),
    reduction("prod", _axis_name("ProdBackward0", "ProdBackward1"), kernels.prod, _prod_vjp,
              "d prod(a)/da_i = product of the other elements", saves=INPUTS_AND_OUTPUT,
              special=ZEROS),
    reduction("amax", _axis_name("MaxBackward1", "AmaxBackward0"), kernels.amax, _extreme_vjp,
              "d max(a)/da = 1 at the maximum (shared among ties)", saves=INPUTS_AND_OUTPUT,
              kink=True, language="max", special=TIED),
    reduction("amin", _axis_name("MinBackward1", "AminBackward0"), kernels.amin, _extreme_vjp,
              "d min(a)/da = 1 at the minimum (shared among ties)", saves=INPUTS_AND_OUTPUT,
              kink=True, language="min", special=TIED),
    Op("max_dim", "MaxBackward0", _max_dim_forward, _at_index_vjp, reduce_shape,
       explain="d max(a, dim)/da = 1 at the index of the maximum", saves=NOTHING,
       prepare=_indices_of(np.argmax), kink=True, public="max", cases=AXIS_CASES,
       special=TIED[1:]),
    Op("min_dim", "MinBackward0", _min_dim_forward, _at_index_vjp, reduce_shape,
       explain="d min(a, dim)/da = 1 at the index of the minimum", saves=NOTHING,
       prepare=_indices_of(np.argmin), kink=True, public="min", cases=AXIS_CASES,
       special=TIED[1:]),
    Op("var", "VarBackward0", _var_forward, _var_vjp, reduce_shape,
       explain="d var(a)/da = 2(a - mean(a))/(n - correction)", language=True,
       doc=f"variance {SPREAD}", cases=REDUCE_CASES[:5], complex_forward=_var_complex),
    Op("std", "StdBackward0", _std_forward, _std_vjp, reduce_shape,
       explain="d std(a)/da = (a - mean(a))/((n - correction)·std(a))",
       saves=INPUTS_AND_OUTPUT, language=True, doc=f"standard deviation {SPREAD}",
       cases=REDUCE_CASES[:5], complex_forward=_std_complex,
       special=(special([1.0, 1.0, 1.0], at_kink=True),)),
    reduction("logsumexp", "LogsumexpBackward0", kernels.logsumexp, _logsumexp_vjp,
              "d logsumexp(a)/da = softmax(a)", saves=INPUTS_AND_OUTPUT),
    along_axis("softmax", "SoftmaxBackward0", kernels.softmax, _softmax_vjp,
               "d softmax(a)ᵀg/da = s·(g - Σ g·s)", saves=OUTPUT,
               doc="exp(x) normalised to sum 1 along axis", cases=SOFTMAX_CASES),
    along_axis("log_softmax", "LogSoftmaxBackward0", kernels.log_softmax, _log_softmax_vjp,
               "d log_softmax(a)ᵀg/da = g - softmax(a)·Σ g", saves=OUTPUT,
               doc="log of softmax along axis", cases=SOFTMAX_CASES),
    Op("norm", "LinalgVectorNormBackward0", _norm_forward, _norm_vjp, _nonnegative_order,
       explain="d ‖a‖/da = a/‖a‖ (2-norm)", saves=INPUTS_AND_OUTPUT, kink=True,
       batch=batching.reduction, language=True,
       doc="vector p-norm (ord 2 by default) over axis", cases=NORM_CASES,
       special=(special([0.0, 0.0, 0.0], at_kink=True),)),
)  # fmt: skip

# ---- not differentiable: integer or boolean results ------------------------------------

register(
    *(reduction(name, "", fn, None, "", saves=NOTHING, language=False, cases=AXIS_CASES)
      for name, fn in (("any", np.any), ("all", np.all), ("argmax", kernels.argmax),
                       ("argmin", kernels.argmin))),
)  # fmt: skip
