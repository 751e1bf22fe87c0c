"""More of torch.nn.functional's losses and distances, with PyTorch's formulas (so their
gradients at the edges are PyTorch's): kl_div, huber_loss, poisson_nll_loss,
gaussian_nll_loss, soft_margin_loss, margin_ranking_loss, hinge_embedding_loss,
cosine_embedding_loss, triplet_margin_loss; cosine_similarity, pairwise_distance.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import as_tensor, first
from ..engine.escapes import decided_by
from ..engine.nn_public import legacy_reduction
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError
from .losses import reduced


def _as(x: Any) -> Tensor:
    return first(x) if isinstance(x, Tensor) else as_tensor(x)


def _data(x: Tensor) -> np.ndarray:
    # (the library's own read, for a mask: not a value leaving the graph, but a constant of
    # it made from the values, which a replay at other values must not hold fixed)
    decided_by(x)
    return x._array


def _clamped_below(x: Tensor, low: float) -> Tensor:
    """x with values below ``low`` raised to it, the gradient passing as if unclamped (what
    PyTorch gets from clamping in place under no_grad)."""
    a = _data(x)
    return F.add(x, np.maximum(a, low) - a)


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    return legacy_reduction(size_average, reduce, reduction)


def kl_div(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:  # fmt: skip
    """target·(log target - input) pointwise (0 where target is 0); 'batchmean' divides the
    sum by the batch size, as the KL divergence's definition wants."""
    x, t = first(input), _as(target)
    losses = F.mul(F.exp(t), F.sub(t, x)) if log_target else F.sub(F.xlogy(t, t), F.mul(t, x))
    how = _reduction(size_average, reduce, reduction)
    if how == "batchmean":
        total = F.sum(losses)
        return F.div(total, x.shape[0]) if x.ndim else total
    return reduced(losses, how)


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Any = None) -> Tensor:  # fmt: skip
    """½d² where |d| < delta, delta·(|d| - ½delta) elsewhere."""
    if weight is not None:
        raise NotImplementedError("huber_loss: weight= is not supported")
    d = F.sub(first(input), target)
    a = F.abs(d)
    inside = _data(a) < delta
    losses = F.where(inside, F.mul(F.mul(d, d), 0.5), F.mul(F.sub(a, 0.5 * delta), delta))
    return reduced(losses, reduction)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    """exp(input) - target·input (log_input), else input - target·log(input + eps); with
    ``full``, Stirling's term for targets above 1."""
    x, t = first(input), _as(target)
    rate = F.exp(x) if log_input else x
    log_rate = x if log_input else F.log(F.add(x, eps))
    losses = F.sub(rate, F.mul(t, log_rate))
    if full:
        above = _data(t) > 1
        ts = F.where(above, t, 1.0)  # (the term is masked to 0 where target <= 1)
        stirling = F.add(F.sub(F.mul(ts, F.log(ts)), ts), F.mul(F.log(F.mul(ts, 2 * math.pi)), 0.5))
        losses = F.add(losses, F.where(above, stirling, 0.0))
    return reduced(losses, _reduction(size_average, reduce, reduction))


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Tensor:  # fmt: skip
    """½(log var + (input - target)²/var) (+ ½log 2π with ``full``); var is clamped to eps
    for the value only, as PyTorch does."""
    x, t, v = first(input), _as(target), _as(var)
    if v.shape != x.shape:
        if x.shape[:-1] == v.shape:
            v = v.unsqueeze(-1)  # one variance per sample
        elif not (x.shape[:-1] == v.shape[:-1] and v.shape[-1:] == (1,)):
            raise AgradValueError("var is of incorrect size")
    if np.any(_data(v) < 0):
        raise AgradValueError("var has negative entry/entries")
    v = _clamped_below(v, eps)
    d = F.sub(x, t)
    losses = F.mul(F.add(F.log(v), F.div(F.mul(d, d), v)), 0.5)
    if full:
        losses = F.add(losses, 0.5 * math.log(2 * math.pi))
    return reduced(losses, reduction)


def soft_margin_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    """log(1 + exp(-target·input)), as PyTorch writes it."""
    z = F.neg(F.mul(_as(target), first(input)))
    return reduced(F.log1p(F.exp(z)), _reduction(size_average, reduce, reduction))


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:  # fmt: skip
    """max(0, -target·(input1 - input2) + margin)."""
    z = F.add(F.neg(F.mul(_as(target), F.sub(first(input1), input2))), margin)
    return reduced(F.clip(z, min=0.0), _reduction(size_average, reduce, reduction))


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, size_average: Any = None,  # noqa: A002
                         reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """input where target is 1, max(0, margin - input) where it is -1."""
    x, t = first(input), _data(_as(target))
    margin_part = F.where(t != 1, F.clip(F.rsub(x, margin), min=0.0), 0.0)
    self_part = F.where(t != -1, x, 0.0)
    return reduced(F.add(margin_part, self_part), _reduction(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:  # fmt: skip
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1; cos along
    dim 1 as PyTorch's kernel computes it (squared norms plus 1e-12)."""
    a, b = first(input1), _as(input2)
    dim = a.ndim - 1
    dot = F.sum(F.mul(a, b), dim)
    squares = F.mul(F.add(F.sum(F.mul(a, a), dim), 1e-12), F.add(F.sum(F.mul(b, b), dim), 1e-12))
    cos = F.div(dot, F.sqrt(squares))
    t = _data(_as(target))
    pos = F.where(t == 1, F.rsub(cos, 1.0), 0.0)
    neg = F.where(t == -1, F.clip(F.sub(cos, margin), min=0.0), 0.0)
    return reduced(F.add(pos, neg), _reduction(size_average, reduce, reduction))


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Σ (x1/‖x1‖)(x2/‖x2‖) along ``dim``, each norm at least eps (its value only)."""
    a, b = first(x1), _as(x2)
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        raise AgradShapeError(
            f"cosine_similarity: shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
        ) from None
    a, b = a.expand(*shape), b.expand(*shape)
    na = _clamped_below(F.norm(a, 2, dim, True), eps)
    nb = _clamped_below(F.norm(b, 2, dim, True), eps)
    return F.sum(F.mul(F.div(a, na), F.div(b, nb)), dim)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:  # fmt: skip
    """‖x1 - x2 + eps‖_p along the last dim."""
    d = F.add(F.sub(first(x1), x2), eps)
    return F.norm(d, p, -1, keepdim) if d.ndim else F.abs(d)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:  # fmt: skip
    """max(0, margin + d(anchor, positive) - d(anchor, negative))."""
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = F.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    losses = F.clip(F.sub(F.add(d_pos, margin), d_neg), min=0.0)
    return reduced(losses, _reduction(size_average, reduce, reduction))


__all__ = [
    "cosine_embedding_loss", "cosine_similarity", "gaussian_nll_loss", "hinge_embedding_loss",
    "huber_loss", "kl_div", "margin_ranking_loss", "pairwise_distance", "poisson_nll_loss",
    "soft_margin_loss", "triplet_margin_loss",
]  # fmt: skip
