"""Attention as PyTorch computes it: F.scaled_dot_product_attention and the forward of
nn.MultiheadAttention, composed of matmul, softmax and where (so their gradients are those
entries' gradients).

Rows with every key masked out: scaled_dot_product_attention gives 0 there (value and
gradient), as PyTorch 2.13's CPU kernel does; MultiheadAttention with ``need_weights=True``
(PyTorch's explicit softmax path) gives nan there, as PyTorch does, and with
``need_weights=False`` (its scaled_dot_product_attention path) 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import rand, zeros
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError

__all__ = ["scaled_dot_product_attention"]


class AttentionShapeError(AgradShapeError, AssertionError):
    """A shape nn.MultiheadAttention rejects; PyTorch raises AssertionError there."""


def _values(t: Any) -> np.ndarray:
    return np.asarray(first(t).detach())


def _dropout(weights: Tensor, p: float) -> Tensor:
    """PyTorch's dropout of the attention weights, with agrad's generator (the same draw as
    nn.functional.dropout's)."""
    if not 0.0 <= p <= 1.0:
        raise AgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0:
        return weights
    keep = np.asarray(rand(*weights.shape, dtype=weights.dtype)) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0).astype(weights.dtype)
    return F.mul(weights, scale)


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q kᵀ · scale + mask) v`` over (..., L, E), (..., S, E), (..., S, Ev).

    A bool ``attn_mask`` says which keys each query may attend to (True: allowed); a float
    one is added to the scores. ``is_causal`` allows key j for query i when j <= i (with a
    mask as well, both must allow it, as PyTorch 2.13 computes). ``dropout_p`` drops
    attention weights (always, as PyTorch's function does: pass 0 in evaluation)."""
    q, k, v = first(query), first(key), first(value)
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise AgradShapeError(
            "scaled_dot_product_attention: query, key and value need at least 2 dimensions, "
            f"got {q.shape}, {k.shape}, {v.shape}"
        )
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        groups, rem = divmod(q.shape[-3], k.shape[-3])
        if rem:
            raise AgradShapeError(
                "scaled_dot_product_attention: the query's heads must be a multiple of the "
                f"key's heads with enable_gqa, got {q.shape[-3]} and {k.shape[-3]}"
            )
        repeat = np.arange(q.shape[-3]) // groups
        k, v = k[..., repeat, :, :], v[..., repeat, :, :]
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = F.mul(F.matmul(q, F.transpose(k, -2, -1)), factor)
    length, source = q.shape[-2], k.shape[-2]
    hidden = np.zeros((length, source), dtype=bool)  # True where no attention is allowed
    if is_causal:
        allowed = np.tril(np.ones((length, source), dtype=bool))
        scores = F.where(allowed, scores, -math.inf)
        hidden = ~allowed
    if attn_mask is not None:
        mask = first(attn_mask)
        if mask.dtype.is_floating_point:
            scores = F.add(scores, mask)
            hidden = hidden | np.isneginf(_values(mask))
        elif mask.dtype.kind != "b":
            raise AgradShapeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {mask.dtype} and query.dtype: {q.dtype} instead."
            )
        else:
            allowed_by_mask = _values(mask).astype(bool)
            scores = F.where(allowed_by_mask, scores, -math.inf)
            hidden = hidden | ~allowed_by_mask
    dead = np.all(np.broadcast_to(hidden, np.broadcast_shapes(hidden.shape, scores.shape)), -1)
    if dead.any():  # rows with nothing to attend to: 0, not softmax's nan (PyTorch's kernel)
        dead = dead[..., None]
        weights = F.where(dead, 0.0, F.softmax(F.where(dead, 0.0, scores), -1))
    else:
        weights = F.softmax(scores, -1)
    return F.matmul(_dropout(weights, dropout_p), v)


def float_mask(mask: Any, dtype: Any, name: str) -> Tensor | None:
    """PyTorch's canonical mask: a bool mask (True: hide) as 0/-inf, a float one as is."""
    if mask is None:
        return None
    m = first(mask)
    if m.dtype.is_floating_point:
        return m
    if m.dtype.kind != "b":
        raise AttentionShapeError(f"only bool and floating types of {name} are supported")
    return F.where(_values(m), -math.inf, zeros(*m.shape, dtype=dtype))


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    heads: int,
    dropout_p: float,
    need_weights: bool,
    is_causal: bool,
) -> tuple[Tensor, Tensor | None]:
    """The core of multi_head_attention_forward on (B·H, L, hd), (B·H, S, hd): PyTorch's
    explicit softmax when the weights are wanted, else scaled_dot_product_attention."""
    bh, length, head_dim = q.shape
    source = k.shape[1]
    if need_weights:
        scores = F.matmul(F.mul(q, math.sqrt(1.0 / head_dim)), F.transpose(k, 1, 2))
        if mask is not None:
            scores = F.add(scores, mask)
        weights = _dropout(F.softmax(scores, -1), dropout_p)
        return F.matmul(weights, v), F.reshape(weights, (bh // heads, heads, length, source))
    shape4 = (bh // heads, heads)
    if mask is not None:
        mask = (
            F.unsqueeze(mask, 0) if mask.shape[0] == 1 else F.reshape(mask, (*shape4, -1, source))
        )
    out = scaled_dot_product_attention(
        F.reshape(q, (*shape4, length, head_dim)),
        F.reshape(k, (*shape4, source, head_dim)),
        F.reshape(v, (*shape4, source, v.shape[-1])),
        mask,
        dropout_p,
        is_causal and mask is None,
    )
    return F.reshape(out, (bh, length, v.shape[-1])), None
