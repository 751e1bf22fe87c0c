"""nn.TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder,
TransformerDecoder and Transformer, PyTorch's: the same submodules in the same order (so the
same parameter names and repr), post-norm or ``norm_first``, relu/gelu or a callable
activation, masks canonicalised as PyTorch does (bool: True hides), and a causal mask
recognised as the ``is_causal`` hint.

PyTorch's inference fast paths (eval mode under no_grad: a fused kernel, and nested tensors
that give 0 at padded positions of TransformerEncoder's output) are not reproduced: agrad
computes every position the way PyTorch's training path does.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import full
from ..engine.tensor import Tensor
from ..errors import AgradShapeError
from . import functional as NF
from . import init
from .attention import float_mask
from .attention_modules import MultiheadAttention
from .containers import ModuleList
from .layers import Linear
from .module import Module
from .modules import Dropout, LayerNorm


class ActivationError(AgradShapeError):
    """An activation name other than relu or gelu (PyTorch's RuntimeError)."""


def _activation(activation: Any) -> Callable:
    if callable(activation):
        return activation
    if activation == "relu":
        return NF.relu
    if activation == "gelu":
        return NF.gelu
    raise ActivationError(f"activation should be relu/gelu, not {activation}")


def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """A float (sz, sz) mask: -inf above the diagonal, 0 on and below it."""
    return F.triu(full((sz, sz), -math.inf, dtype=dtype), 1)


def _is_causal(mask: Tensor | None, is_causal: bool | None, size: int) -> bool:
    """PyTorch's _detect_is_causal_mask: the hint as given, else whether the mask is the
    square subsequent mask of this size."""
    if is_causal is not None or mask is None:
        return is_causal is True
    if tuple(mask.shape) != (size, size):
        return False
    causal = generate_square_subsequent_mask(size, dtype=mask.dtype)
    return bool(F.all(F.eq(mask, causal)))


class _Layer(Module):
    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout_ff(x)

    def _sa_block(self, x: Tensor, mask: Any, kpm: Any, is_causal: bool) -> Tensor:
        out = self.self_attn(
            x, x, x, attn_mask=mask, key_padding_mask=kpm, is_causal=is_causal, need_weights=False
        )[0]
        return self.dropout1(out)

    @property
    def dropout_ff(self) -> Module:
        return self.dropout2 if isinstance(self, TransformerEncoderLayer) else self.dropout3


class TransformerEncoderLayer(_Layer):
    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Any = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        x = first(src)
        kpm = float_mask(src_key_padding_mask, x.dtype, "src_key_padding_mask")
        mask = float_mask(src_mask, x.dtype, "src_mask")
        if self.norm_first:
            x = F.add(x, self._sa_block(self.norm1(x), mask, kpm, is_causal))
            return F.add(x, self._ff_block(self.norm2(x)))
        x = self.norm1(F.add(x, self._sa_block(x, mask, kpm, is_causal)))
        return self.norm2(F.add(x, self._ff_block(x)))


class TransformerDecoderLayer(_Layer):
    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Any = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _mha_block(self, x: Tensor, memory: Tensor, mask: Any, kpm: Any, causal: bool) -> Tensor:
        out = self.multihead_attn(
            x, memory, memory, attn_mask=mask, key_padding_mask=kpm, is_causal=causal,
            need_weights=False,
        )[0]  # fmt: skip
        return self.dropout2(out)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x, m = first(tgt), first(memory)
        masks = (tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        cross = (memory_mask, memory_key_padding_mask, memory_is_causal)
        if self.norm_first:
            x = F.add(x, self._sa_block(self.norm1(x), *masks))
            x = F.add(x, self._mha_block(self.norm2(x), m, *cross))
            return F.add(x, self._ff_block(self.norm3(x)))
        x = self.norm1(F.add(x, self._sa_block(x, *masks)))
        x = self.norm2(F.add(x, self._mha_block(x, m, *cross)))
        return self.norm3(F.add(x, self._ff_block(x)))


def _clones(module: Module, n: int) -> ModuleList:
    """n deep copies. Their parameters start without .grad, as PyTorch's (its Parameter's
    deepcopy drops the gradient; an agrad tensor's deepcopy keeps it)."""
    clones = [copy.deepcopy(module) for _ in range(n)]
    for clone in clones:
        for p in clone.parameters():
            p.grad = None
    return ModuleList(clones)


def _seq_len(x: Tensor, batch_first: bool) -> int:
    return x.shape[0] if x.ndim == 2 or not batch_first else x.shape[1]


class TransformerEncoder(Module):
    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor = enable_nested_tensor  # (no nested tensors: see above)
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        x = first(src)
        kpm = float_mask(src_key_padding_mask, x.dtype, "src_key_padding_mask")
        mask = float_mask(mask, x.dtype, "mask")
        batch_first = getattr(getattr(self.layers[0], "self_attn", None), "batch_first", False)
        causal = _is_causal(mask, is_causal, _seq_len(x, batch_first))
        for layer in self.layers:
            x = layer(x, src_mask=mask, is_causal=causal, src_key_padding_mask=kpm)
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = first(tgt)
        batch_first = getattr(getattr(self.layers[0], "self_attn", None), "batch_first", False)
        causal = _is_causal(
            None if tgt_mask is None else first(tgt_mask), tgt_is_causal, _seq_len(x, batch_first)
        )
        for layer in self.layers:
            x = layer(
                x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=causal, memory_is_causal=memory_is_causal,
            )  # fmt: skip
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Any = "relu",
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shared = (dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, *shared, bias, dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, *shared, bias, dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        src, tgt = first(src), first(tgt)
        batched = src.ndim == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and batched:
            raise AgradShapeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.shape[0] != tgt.shape[0] and batched:
            raise AgradShapeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise AgradShapeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )  # fmt: skip
        return self.decoder(
            tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal,
        )  # fmt: skip
