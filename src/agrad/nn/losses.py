"""The loss functions of agrad.nn.functional, composed of op-table entries with PyTorch's
formulas: cross_entropy (class indices or probabilities, class weights, ignore_index,
label_smoothing), mse, l1, smooth l1, binary cross-entropy (on probabilities or logits)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import as_tensor, first
from ..engine.creation import tensor
from ..engine.nn_public import legacy_reduction, nll_loss, not_differentiable
from ..engine.ops import TABLE, apply
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError


def reduced(losses: Tensor, reduction: str) -> Tensor:
    """PyTorch's reduction of elementwise losses: 'none', 'mean' or 'sum'."""
    if reduction == "none":
        return losses
    if reduction == "mean":
        return F.mean(losses)
    if reduction == "sum":
        return F.sum(losses)
    raise AgradValueError(f"{reduction} is not a valid value for reduction ('none', 'mean', 'sum')")


def mse_loss(
    input: Any,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,  # noqa: A002
    reduction: str = "mean",
) -> Tensor:
    d = F.sub(first(input), target)
    return reduced(F.mul(d, d), legacy_reduction(size_average, reduce, reduction))


def l1_loss(
    input: Any,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,  # noqa: A002
    reduction: str = "mean",
) -> Tensor:
    losses = F.abs(F.sub(first(input), target))
    return reduced(losses, legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(
    input: Any,
    target: Any,
    size_average: Any = None,
    reduce: Any = None,  # noqa: A002
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    d = F.sub(first(input), target)
    a = F.abs(d)
    if beta == 0.0:
        losses = a
    else:
        losses = F.where(F.lt(a, beta), F.mul(F.mul(d, d), 0.5 / beta), F.sub(a, 0.5 * beta))
    return reduced(losses, legacy_reduction(size_average, reduce, reduction))


def _class_shape(x: Tensor, axis: int) -> list[int]:
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return shape


def cross_entropy(
    input: Any,  # noqa: A002
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class axis (1, or 0 for one unbatched sample), then the negative
    log-likelihood of class indices, or of probabilities (a float target of the input's
    shape); with ``label_smoothing`` ε the target is mixed with the uniform distribution."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = first(input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise AgradValueError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    axis = 1 if x.ndim > 1 else 0
    classes = x.shape[axis]
    logp = F.log_softmax(x, axis)
    w = None  # (a tensor: with probabilities, its gradient flows, as PyTorch's)
    if weight is not None:
        w = (weight if isinstance(weight, Tensor) else tensor(weight)).reshape(
            _class_shape(x, axis)
        )
    t = np.asarray(target)
    if t.dtype.kind == "f":  # probabilities
        if t.shape != x.shape:
            raise AgradShapeError(
                f"cross_entropy: a float target holds probabilities and must "
                f"have the input's shape {x.shape}, got {t.shape}"
            )
        probs = first(target) if isinstance(target, Tensor) else tensor(t)
        if label_smoothing:
            probs = F.add(F.mul(probs, 1.0 - label_smoothing), label_smoothing / classes)
        terms = F.mul(logp, probs) if w is None else F.mul(F.mul(logp, probs), w)
        losses = F.neg(F.sum(terms, dim=axis))
        if reduction == "mean":  # PyTorch divides by the number of samples, whatever the weights
            return F.div(F.sum(losses), float(x.numel() // max(classes, 1)) or math.nan)
        return reduced(losses, reduction)
    nll = nll_loss(logp, t, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    ignored = t == ignore_index
    smooth = F.neg(F.sum(logp if w is None else F.mul(logp, w), dim=axis))
    smooth = F.where(tensor(ignored), 0.0, smooth)
    if reduction == "mean":
        kept = t[~ignored]
        total = float(np.asarray(weight)[kept].sum()) if weight is not None else float(kept.size)
        smooth = F.div(F.sum(smooth), total if total else math.nan)
    elif reduction == "sum":
        smooth = F.sum(smooth)
    return F.add(F.mul(nll, 1.0 - label_smoothing), F.mul(smooth, label_smoothing / classes))


def binary_cross_entropy(
    input: Any,  # noqa: A002
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-w·(t·log x + (1-t)·log(1-x)), the table's entry with PyTorch's kernels: each log
    clamped at -100, the gradient (x - t)/max(x(1 - x), 1e-12) (finite at x = 0 or 1);
    an input or target outside [0, 1] (or nan) is PyTorch's error."""
    x = first(input)
    t = first(target) if isinstance(target, Tensor) else tensor(np.asarray(target, dtype=x.dtype))
    if t.shape != x.shape:
        raise AgradShapeError(
            f"Using a target size ({list(t.shape)}) that is different to the input size "
            f"({list(x.shape)}) is deprecated. Please ensure they have the same size."
        )
    not_differentiable("binary_cross_entropy", weight=weight)
    how = legacy_reduction(size_average, reduce, reduction)
    t = F.astype(t, x.dtype) if t.dtype != x.dtype else t
    return apply(TABLE["binary_cross_entropy"], x, t, weight=_array_or_none(weight), reduction=how)


def binary_cross_entropy_with_logits(
    input: Any,  # noqa: A002
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Any = None,
) -> Tensor:
    """(1-t)·x + (1 + (pos_weight-1)·t)·log(1 + exp(-x)), computed stably (softplus)."""
    x = first(input)
    t = first(target)
    if t.shape != x.shape:
        raise AgradShapeError(
            f"Target size ({list(t.shape)}) must be the same as input size ({list(x.shape)})"
        )
    how = legacy_reduction(size_average, reduce, reduction)
    constant = all(not (isinstance(v, Tensor) and v.requires_grad) for v in (weight, pos_weight))
    if constant:  # the table's op: PyTorch's node (BinaryCrossEntropyWithLogitsBackward0)
        target_as_x = F.astype(t, x.dtype) if t.dtype != x.dtype else t
        return apply(
            TABLE["binary_cross_entropy_with_logits"], x, target_as_x,
            weight=_array_or_none(weight), pos_weight=_array_or_none(pos_weight), reduction=how,
        )  # fmt: skip
    # A weight that requires grad: composed of ops, so it gets its gradient too.
    tail = F.softplus(F.neg(x), 1.0, math.inf)  # log(1 + exp(-x)) with no linear cut-off
    if pos_weight is not None:
        tail = F.mul(tail, F.add(F.mul(F.sub(pos_weight, 1.0), t), 1.0))
    losses = F.add(F.mul(F.rsub(t, 1.0), x), tail)
    if weight is not None:
        losses = F.mul(losses, weight)
    return reduced(losses, how)


def _array_or_none(value: Any) -> Any:
    return None if value is None else np.asarray(as_tensor(value).detach())
