"""The negative log-likelihood loss (PyTorch's nll_loss), the op under cross_entropy.

``x`` holds log-probabilities, (N, C), (C,) or (N, C, d1, ...); ``target`` (a parameter,
like an index) holds class indices. Each sample's loss is ``-weight[t]·x[n, t]``;
``ignore_index`` samples count for nothing, and ``reduction='mean'`` divides by the sum
of the weights of the others (nan when there are none, as PyTorch). The VJP is the
cotangent times a constant one-hot array, so it is batch-aware and linear.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradIndexError, AgradShapeError, AgradValueError
from .. import kernels
from ..tensor import Tensor
from .core import INPUTS, TABLE, Case, Op, Saves, apply, batch_of, raw, register, special
from .windows import checked, each_point

REDUCTIONS = ("none", "mean", "sum")


def _picked(x, target, weight, ignore_index):
    """Each sample's class index made safe, its weight (0 where ignored) and the one-hot
    array of shape x.shape that picks its log-probability."""
    target = np.asarray(target)
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    w = np.ones(safe.shape) if weight is None else np.asarray(weight)[safe]
    w = (w * valid).astype(np.result_type(x.dtype, np.float32), copy=False)
    classes = x.shape[1] if x.ndim > 1 else x.shape[0]
    axis = 1 if x.ndim > 1 else 0
    shape = [1] * x.ndim
    shape[axis] = classes
    hot = np.arange(classes).reshape(shape) == np.expand_dims(safe, axis)
    return np.expand_dims(w, axis), hot


def _nll_forward(x, target, weight=None, ignore_index=-100, reduction="mean"):
    w, hot = _picked(x, target, weight, ignore_index)
    axis = 1 if x.ndim > 1 else 0
    picked = np.sum(np.where(hot, x, 0.0), axis=axis)
    # An ignored sample counts for nothing, even at an inf (0·inf would be nan there).
    valid = np.asarray(target) != ignore_index
    losses = np.where(valid, -picked * np.squeeze(w, axis), 0.0)
    if reduction == "none":
        return losses
    total = np.sum(losses)
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / np.sum(w)


def _nll_vjp(ns, g, out, x, target, weight=None, ignore_index=-100, reduction="mean"):
    w, hot = _picked(x, target, weight, ignore_index)
    local = -(hot * w)
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            local = local / np.sum(w)
    batch = batch_of(g, out.ndim)
    if reduction == "none":  # one loss per sample: its gradient goes to that sample's row
        axis = 1 if x.ndim > 1 else 0
        shape = batch + tuple(out.shape[:axis]) + (1,) + tuple(out.shape[axis:])
    else:
        shape = batch + (1,) * x.ndim
    return (g.reshape(shape) * local,)


def _nll_shape(shape, target, weight=None, ignore_index=-100, reduction="mean"):
    if reduction not in REDUCTIONS:
        raise AgradValueError(f"nll_loss: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if not shape:
        raise AgradShapeError("nll_loss: expects (N, C), (C,) or (N, C, d1, ...) log-probabilities")
    t = np.asarray(target)
    expected = () if len(shape) == 1 else (shape[0],) + tuple(shape[2:])
    if t.shape != expected:
        raise AgradShapeError(
            f"nll_loss: expected a target of shape {expected} for input of shape {tuple(shape)}, "
            f"got {t.shape}"
        )
    if t.dtype.kind not in "iu":
        raise AgradValueError(
            f"nll_loss: the target must hold class indices (integers), got dtype {t.dtype}"
        )
    classes = shape[1] if len(shape) > 1 else shape[0]
    bad = t[(t != ignore_index) & ((t < 0) | (t >= classes))]
    if bad.size:
        raise AgradIndexError(
            f"nll_loss: Target {int(bad.flat[0])} is out of bounds (classes 0..{classes - 1})."
        )
    if weight is not None and np.shape(weight) != (classes,):
        raise AgradShapeError(
            f"nll_loss: weight must have one entry per class ({classes}), got {np.shape(weight)}"
        )
    return t.shape if reduction == "none" else ()


def _nll_name(node) -> str:
    """PyTorch's name: the 2-D kernel for inputs of 3+ dimensions, which it reshapes to 4-D
    (and back, a view, for reduction='none' unless the input was 4-D already)."""
    ndim = node.inputs[0].ndim
    if ndim <= 2:
        return "NllLossBackward0"
    if node.params.get("reduction", "mean") == "none" and ndim != 4:
        return "ViewBackward0"
    return "NllLoss2DBackward0"


TARGET = np.array([2, 0, 1, 2])
LOSS_CASES = (
    Case(((4, 3),), {"target": TARGET}),
    Case(((4, 3),), {"target": TARGET, "reduction": "sum", "weight": np.array([0.5, 2.0, 1.0])}),
    Case(((4, 3),), {"target": np.array([2, -100, 1, 2]), "reduction": "none"}),
    Case(
        ((4, 3),),
        {"target": np.array([2, 1, 1, 0]), "ignore_index": 1, "weight": np.array([0.5, 2.0, 1.5])},
    ),  # fmt: skip
    Case(((2, 3, 2),), {"target": np.array([[0, 2], [1, 1]]), "reduction": "none"}),
    Case(((2, 3, 2, 2),), {"target": np.array([[[0, 2], [1, 1]], [[2, 2], [0, 1]]])}),
    Case(((3,),), {"target": np.array(1)}),
)

register(
    # The VJP never reads x, but PyTorch saves it (so a write into it refuses backward).
    Op("nll_loss", _nll_name, _nll_forward, _nll_vjp, _nll_shape, saves=Saves(inputs=(0,)),
       prepare=checked(_nll_shape),
       explain="d nll(x)/dx = -weight[t]/Σweight at each sample's target class (mean), 0 "
               "elsewhere", batch=each_point, method=False, cases=LOSS_CASES,
       doc="negative log-likelihood of class indices (mean, sum or none)"),
)  # fmt: skip


# ---- binary cross-entropy with logits -----------------------------------------------------
# loss = w·[(1 - t)·x + l·softplus(-x)] with l = 1 + (pos_weight - 1)·t, softplus computed
# without overflow (logaddexp). Both x and the target t get gradients (PyTorch's rule for
# the target too); weight and pos_weight are constants (parameters).


def _softplus_neg(ns, x):
    """softplus(-x) without overflow; under create_graph the table's softplus op, so its
    derivatives are smooth at 0 too."""
    if isinstance(x, Tensor):
        return apply(TABLE["softplus"], -x, beta=1.0, threshold=math.inf)
    return kernels.softplus(-x, 1.0, math.inf)


def _bce_terms(t, weight, pos_weight):
    lw = 1.0 if pos_weight is None else 1.0 + (np.asarray(pos_weight) - 1.0) * t
    w = 1.0 if weight is None else np.asarray(weight)
    return lw, w


def _bce_forward(x, t, weight=None, pos_weight=None, reduction="mean"):
    lw, w = _bce_terms(t, weight, pos_weight)
    losses = w * ((1.0 - t) * x + lw * _softplus_neg(np, x))
    return _reduce(losses, reduction)


def _bce_complex(x, t, weight=None, pos_weight=None, reduction="mean"):
    # softplus(-z) by the branch that does not overflow for the real part: both analytic.
    lw, w = _bce_terms(t, weight, pos_weight)
    big = np.real(x) >= 0
    low = -x + np.log1p(np.exp(np.where(big, 0, x)))
    tail = np.where(big, np.log1p(np.exp(-np.where(big, x, 0))), low)
    return _reduce(w * ((1.0 - t) * x + lw * tail), reduction)


def _reduce(losses, reduction):
    if reduction == "none":
        return losses
    return np.sum(losses) if reduction == "sum" else np.mean(losses)


def _bce_vjp(ns, g, out, x, t, weight=None, pos_weight=None, reduction="mean"):
    lw, w = _bce_terms(t, weight, pos_weight)
    lead = batch_of(g, out.ndim)
    if reduction != "none":
        g = g.reshape(lead + (1,) * x.ndim)
        if reduction == "mean":
            g = g / float(max(math.prod(x.shape), 1))
    gx = g * w * ((1.0 - t) - lw * ns.sigmoid(-x))
    if pos_weight is None:
        dt = -x
    else:  # (pw - 1)·softplus(-x) - x, as -pw·x + (pw - 1)·softplus(x) below 0: no inf - inf
        pw1 = np.asarray(pos_weight) - 1.0
        above = pw1 * _softplus_neg(ns, x) - x
        below = pw1 * _softplus_neg(ns, -x) - (pw1 + 1.0) * x
        dt = ns.where(raw(x) >= 0, above, below)
    return gx, g * w * dt


def check_reduction(reduction: str) -> None:
    """PyTorch's error for a reduction other than 'none', 'mean' or 'sum'."""
    if reduction not in REDUCTIONS:
        raise AgradValueError(
            f"{reduction} is not a valid value for reduction ('none', 'mean', 'sum')"
        )


def _bce_shape(shape, target, weight=None, pos_weight=None, reduction="mean"):
    check_reduction(reduction)
    if tuple(target) != tuple(shape):
        raise AgradShapeError(
            f"Target size ({list(target)}) must be the same as input size ({list(shape)})"
        )
    for name, extra in (("weight", weight), ("pos_weight", pos_weight)):
        if extra is not None:
            try:
                np.broadcast_shapes(np.shape(extra), tuple(shape))
            except ValueError:
                raise AgradShapeError(
                    f"binary_cross_entropy_with_logits: {name} of shape {np.shape(extra)} "
                    f"cannot be broadcast to the input's shape {tuple(shape)}"
                ) from None
    return tuple(shape) if reduction == "none" else ()


register(
    Op("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
       _bce_forward, _bce_vjp, _bce_shape, arity=2, saves=INPUTS,
       prepare=checked(_bce_shape), batch=each_point, public=False, method=False,
       explain="d/dx = w·((1 - t) - l·sigmoid(-x)), d/dt = w·((pos_weight - 1)·softplus(-x) "
               "- x), l = 1 + (pos_weight - 1)·t",
       domain=((-3.0, 3.0), (0.0, 1.0)), complex_forward=_bce_complex,
       cases=(Case(((4,), (4,))), Case(((2, 3), (2, 3)), {"reduction": "sum"}),
              Case(((2, 3), (2, 3)), {"reduction": "none", "weight": np.array([0.5, 2.0, 1.0])}),
              Case(((3,), (3,)), {"pos_weight": np.array([3.0, 0.5, 1.0])}),
              Case(((), ()))),
       special=(special([0.0, 30.0, -30.0, 800.0, -800.0], [0.0, 1.0, 0.0, 1.0, 0.5]),),
       doc="binary cross-entropy of logits, computed stably"),
)  # fmt: skip
