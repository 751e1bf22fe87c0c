"""The negative log-likelihood loss (PyTorch's nll_loss), the op under cross_entropy.

``x`` holds log-probabilities, (N, C), (C,) or (N, C, d1, ...); ``target`` (a parameter,
like an index) holds class indices. Each sample's loss is ``-weight[t]·x[n, t]``;
``ignore_index`` samples count for nothing, and ``reduction='mean'`` divides by the sum
of the weights of the others (nan when there are none, as PyTorch). The VJP is the
cotangent times a constant one-hot array, so it is batch-aware and linear.
"""

from __future__ import annotations

import numpy as np

from ...errors import AgradIndexError, AgradShapeError, AgradValueError
from .core import Case, Op, Saves, batch_of, register
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
