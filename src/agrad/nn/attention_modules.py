"""nn.MultiheadAttention, PyTorch's: its parameter names (in_proj_weight or q/k/v_proj_weight,
in_proj_bias, bias_k, bias_v, out_proj), initialisation (xavier_uniform_ projections, zero
biases, xavier_normal_ bias_k/bias_v), masks, batch_first and unbatched inputs."""

from __future__ import annotations

from typing import Any

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import empty, zeros
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError
from . import init
from .attention import AttentionShapeError, attend, float_mask
from .layers import Linear
from .module import Module
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for MultiheadAttention's output projection (a Linear)."""


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """A mask with one more (visible) key: the column for bias_k/bias_v or the zero key."""
    if mask is None:
        return None
    return F.cat([mask, zeros(*mask.shape[:-1], 1, dtype=mask.dtype)], -1)


class MultiheadAttention(Module):
    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise AgradValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AttentionShapeError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self, query: Tensor, key: Tensor, value: Tensor) -> list[Tensor]:
        e, b = self.embed_dim, self.in_proj_bias
        if self._qkv_same_embed_dim:
            weights = [self.in_proj_weight[i * e : (i + 1) * e] for i in range(3)]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        out = []
        for i, (x, w) in enumerate(zip((query, key, value), weights, strict=True)):
            y = F.matmul(x, F.transpose(w, 0, 1))
            out.append(y if b is None else F.add(y, b[i * e : (i + 1) * e]))
        return out

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        query, key, value = first(query), first(key), first(value)
        batched = query.ndim == 3
        self._check_shapes(query, key, value, key_padding_mask, attn_mask, batched)
        if batched and self.batch_first:
            query, key, value = (F.transpose(x, 0, 1) for x in (query, key, value))
        if not batched:
            query, key, value = (F.unsqueeze(x, 1) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = F.unsqueeze(first(key_padding_mask), 0)
        length, batch, embed = query.shape
        if embed != self.embed_dim:
            raise AttentionShapeError(
                f"was expecting embedding dimension of {self.embed_dim}, but got {embed}"
            )
        kpm = float_mask(key_padding_mask, query.dtype, "key_padding_mask")
        if is_causal and attn_mask is None:
            raise AgradShapeError(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask."
            )
        causal_hint = is_causal and kpm is None and not need_weights
        mask = None if causal_hint else float_mask(attn_mask, query.dtype, "attn_mask")
        q, k, v = self._projections(query, key, value)
        heads, hd = self.num_heads, self.head_dim
        if mask is not None:
            mask = self._check_attn_mask(mask, length, key.shape[0], batch)
        if self.bias_k is not None and self.bias_v is not None:
            k = F.cat([k, F.expand(self.bias_k, (1, batch, embed))], 0)
            v = F.cat([v, F.expand(self.bias_v, (1, batch, embed))], 0)
            mask, kpm = _pad_last(mask), _pad_last(kpm)
        q = F.transpose(F.reshape(q, (length, batch * heads, hd)), 0, 1)
        k = F.transpose(F.reshape(k, (k.shape[0], batch * heads, hd)), 0, 1)
        v = F.transpose(F.reshape(v, (v.shape[0], batch * heads, hd)), 0, 1)
        if self.add_zero_attn:
            k = F.cat([k, zeros(batch * heads, 1, hd, dtype=k.dtype)], 1)
            v = F.cat([v, zeros(batch * heads, 1, hd, dtype=v.dtype)], 1)
            mask, kpm = _pad_last(mask), _pad_last(kpm)
        source = k.shape[1]
        if kpm is not None:
            if tuple(kpm.shape) != (batch, source):
                raise AttentionShapeError(
                    f"expecting key_padding_mask shape of {(batch, source)}, but got "
                    f"{tuple(kpm.shape)}"
                )
            kpm = F.reshape(
                F.expand(F.reshape(kpm, (batch, 1, 1, source)), (batch, heads, 1, source)),
                (batch * heads, 1, source),
            )
            mask = kpm if mask is None else F.add(mask, kpm)
        dropout_p = self.dropout if self.training else 0.0
        out, weights = attend(q, k, v, mask, heads, dropout_p, need_weights, causal_hint)
        out = F.reshape(F.transpose(out, 0, 1), (length * batch, embed))
        out = F.reshape(self.out_proj(out), (length, batch, embed))
        if weights is not None and average_attn_weights:
            weights = F.mean(weights, 1)
        if not batched:
            out = F.squeeze(out, 1)
            weights = None if weights is None else F.squeeze(weights, 0)
        elif self.batch_first:
            out = F.transpose(out, 0, 1)
        return out, weights

    def _check_attn_mask(self, mask: Tensor, length: int, source: int, batch: int) -> Tensor:
        if mask.ndim == 2:
            if tuple(mask.shape) != (length, source):
                raise AgradShapeError(
                    f"The shape of the 2D attn_mask is {list(mask.shape)}, but should be "
                    f"{(length, source)}."
                )
            return F.unsqueeze(mask, 0)
        if mask.ndim == 3:
            want = (batch * self.num_heads, length, source)
            if tuple(mask.shape) != want:
                raise AgradShapeError(
                    f"The shape of the 3D attn_mask is {list(mask.shape)}, but should be {want}."
                )
            return mask
        raise AgradShapeError(f"attn_mask's dimension {mask.ndim} is not supported")

    @staticmethod
    def _check_shapes(query, key, value, key_padding_mask, attn_mask, batched) -> None:
        dims = 3 if batched else 2
        if query.ndim not in (2, 3):
            raise AttentionShapeError(
                f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
                "query tensor"
            )
        if key.ndim != dims or value.ndim != dims:
            raise AttentionShapeError(
                f"For {'batched' if batched else 'unbatched'} (query.dim() == {dims}) query, "
                f"expected `key` and `value` to be {dims}-D but found {key.ndim}-D and "
                f"{value.ndim}-D tensors respectively"
            )
        if key_padding_mask is not None and first(key_padding_mask).ndim != dims - 1:
            raise AttentionShapeError(
                f"expected `key_padding_mask` to be `None` or {dims - 1}-D but found "
                f"{first(key_padding_mask).ndim}-D tensor instead"
            )
        if tuple(key.shape[:-1]) != tuple(value.shape[:-1]):
            raise AttentionShapeError(
                f"key's sequence and batch dims {tuple(key.shape[:-1])} do not match value's "
                f"{tuple(value.shape[:-1])}"
            )
