"""agrad.nn.functional: PyTorch's torch.nn.functional, on agrad's op table.

Convolution, pooling, normalization, nll_loss and gelu are op-table entries (see
`agrad.engine.nn_public`); the rest is composed of ops (linear is a matmul and an add,
cross_entropy is log_softmax then nll_loss), with PyTorch's formulas and reductions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first, number
from ..engine.creation import full, rand, tensor
from ..engine.nn_public import (
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv1d,
    conv2d,
    gelu,
    layer_norm,
    legacy_reduction,
    max_pool2d,
    nll_loss,
)
from ..engine.ops import TABLE, apply
from ..engine.ops.windows import ints, out_sizes, pairs
from ..engine.promotion import check_addmm
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError
from .activations import *  # noqa: F403 - elu, hardswish, glu, ...
from .activations import __all__ as _ACTIVATIONS
from .attention import scaled_dot_product_attention
from .conv_transpose import conv_transpose1d, conv_transpose2d
from .interpolate import interpolate, upsample
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from .losses_more import *  # noqa: F403 - kl_div, huber_loss, cosine_similarity, ...
from .losses_more import __all__ as _LOSSES_MORE
from .norms import group_norm, instance_norm, local_response_norm
from .pooling_more import adaptive_max_pool1d, adaptive_max_pool2d, lp_pool1d, lp_pool2d
from .sampling import *  # noqa: F403 - max_pool1d, dropout2d, pixel_shuffle, ...
from .sampling import __all__ as _SAMPLING

# ---- linear layers -------------------------------------------------------------------------


def linear(input: Any, weight: Any, bias: Any = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``; operands of two dtypes are PyTorch's RuntimeError."""
    x, w = first(input), first(weight)
    if bias is not None and w.ndim == 2:  # PyTorch's addmm, and its checks
        check_addmm(first(bias), x, w)
    out = F.matmul(x, F.transpose(w, 0, 1) if w.ndim == 2 else w)
    return out if bias is None else F.add(out, bias)


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Tensor:
    """``y[n, o] = Σ_ij input1[n, i] · weight[o, i, j] · input2[n, j] + bias[o]``."""
    x1, x2, w = first(input1), first(input2), first(weight)
    o, i, j = w.shape
    mixed = F.matmul(x1, F.reshape(F.permute(w, (1, 0, 2)), (i, o * j)))  # (..., O·J)
    out = F.sum(F.mul(F.reshape(mixed, (*x1.shape[:-1], o, j)), F.unsqueeze(x2, -2)), dim=-1)
    return out if bias is None else F.add(out, bias)


def embedding(
    input: Any,  # noqa: A002
    weight: Any,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` at the indices ``input``; row ``padding_idx`` gets no gradient.
    (Gradients are dense whatever ``sparse`` says.)"""
    if max_norm is not None or scale_grad_by_freq:
        raise AgradValueError("embedding: max_norm and scale_grad_by_freq are not supported")
    indices = np.asarray(input)
    if indices.dtype.kind not in "iu":
        raise AgradValueError(f"embedding: indices must be integers, got dtype {indices.dtype}")
    w = first(weight)
    rows = w[indices]
    if padding_idx is None:
        return rows
    pad = padding_idx % w.shape[0]
    frozen = tensor(np.asarray(w.detach())[indices])  # the same values, without gradient
    return F.where(tensor((indices == pad)[..., None]), frozen, rows)


def one_hot(tensor_: Any, num_classes: int = -1) -> Tensor:
    """Class indices as one-hot rows (int64), ``num_classes`` = max + 1 by default."""
    indices = np.asarray(tensor_)
    if indices.dtype.kind not in "iu":
        raise AgradValueError("one_hot is only applicable to index tensor (integers)")
    if indices.size and indices.min() < 0:
        raise AgradValueError("one_hot: class values must be non-negative")
    n = int(indices.max(initial=-1)) + 1 if num_classes == -1 else int(num_classes)
    if indices.size and indices.max() >= n:
        raise AgradValueError("one_hot: class values must be smaller than num_classes")
    return tensor((indices[..., None] == np.arange(n)).astype(np.int64))


# ---- activations ---------------------------------------------------------------------------


def relu(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    return first(input).relu_() if inplace else F.relu(input)


def relu_(input: Any) -> Tensor:  # noqa: A002
    return first(input).relu_()


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    x = first(input)
    out = F.where(F.gt(x, 0), x, F.mul(x, negative_slope))  # slope at 0 as PyTorch's
    return x.copy_(out) if inplace else out


def silu(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    x = first(input)
    out = F.mul(x, F.sigmoid(x))
    return x.copy_(out) if inplace else out


def sigmoid(input: Any) -> Tensor:  # noqa: A002
    return F.sigmoid(input)


def tanh(input: Any) -> Tensor:  # noqa: A002
    return F.tanh(input)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    return F.softplus(input, beta, threshold)


def _softmax_dim(x: Tensor, dim: Any) -> int:
    return (0 if x.ndim in (0, 1, 3) else 1) if dim is None else dim  # PyTorch's legacy rule


def softmax(input: Any, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    x = first(input) if dtype is None else F.astype(input, dtype)
    return F.softmax(x, _softmax_dim(x, dim))


def log_softmax(input: Any, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    x = first(input) if dtype is None else F.astype(input, dtype)
    return F.log_softmax(x, _softmax_dim(x, dim))


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` (agrad's generator), scale the rest by
    1/(1-p); the identity when not training."""
    p = number(p, "dropout", "p")
    if not 0.0 <= p <= 1.0:
        raise AgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = first(input)
    if not training or p == 0.0:
        return x
    keep = np.asarray(rand(*x.shape, dtype=x.dtype)) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0).astype(x.dtype)
    return x.mul_(scale) if inplace else F.mul(x, scale)


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:  # noqa: A002
    """``input / max(‖input‖_p, eps)`` along ``dim``."""
    x = first(input)
    return F.div(x, F.clip(F.norm(x, p, dim=dim, keepdim=True), min=eps))


# ---- padding, im2col -----------------------------------------------------------------------


def pad(input: Any, pad: Any, mode: str = "constant", value: Any = None) -> Tensor:  # noqa: A002
    """Pad the last len(pad)/2 dimensions: (left, right) of the last, then of the one
    before, ... Modes: constant (``value``, 0 by default), reflect, replicate, circular."""
    x = first(input)
    widths = [int(v) for v in pad]
    if len(widths) % 2 or len(widths) // 2 > x.ndim:
        raise AgradValueError(f"pad: expects pairs of widths for at most {x.ndim} dims, got {pad}")
    k = len(widths) // 2
    before = [widths[2 * (k - 1 - i)] for i in range(k)]  # first padded dim first
    after = [widths[2 * (k - 1 - i) + 1] for i in range(k)]
    lead = x.ndim - k
    if mode == "constant":
        return _pad_constant(x, lead, before, after, 0.0 if value is None else value)
    index = []
    for i, (lo, hi) in enumerate(zip(before, after, strict=True)):
        n = x.shape[lead + i]
        positions = np.arange(-lo, n + hi)
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise AgradValueError("pad: reflect padding must be smaller than the input size")
            period = 2 * (n - 1) if n > 1 else 1
            positions = np.abs((positions + period) % period)
            positions = np.where(positions > n - 1, period - positions, positions)
        elif mode == "replicate":
            positions = np.clip(positions, 0, n - 1)
        elif mode == "circular":
            positions = positions % n
        else:
            raise AgradValueError(f"pad: unknown mode {mode!r}")
        shape = [1] * k
        shape[i] = -1
        index.append(positions.reshape(shape))
    return x[(Ellipsis, *index)]


def _pad_constant(x: Tensor, lead: int, before: list, after: list, value: Any) -> Tensor:
    keep = [
        slice(max(-lo, 0), n + min(hi, 0) if hi < 0 else None)
        for lo, hi, n in zip(before, after, x.shape[lead:], strict=True)
    ]
    x = (
        x[(Ellipsis, *keep)]
        if any(lo < 0 or hi < 0 for lo, hi in zip(before, after, strict=True))
        else x
    )
    lo_ = [max(lo, 0) for lo in before]
    shape = x.shape[:lead] + tuple(
        n + lo + max(hi, 0) for n, lo, hi in zip(x.shape[lead:], lo_, after, strict=True)
    )
    out = full(shape, value, dtype=x.dtype)
    out[(Ellipsis, *(slice(lo, lo + n) for lo, n in zip(lo_, x.shape[lead:], strict=True)))] = x
    return out


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1):  # noqa: A002
    """im2col: (N, C, H, W) -> (N, C·kh·kw, L), as PyTorch's."""
    x = first(input)
    if x.ndim != 4:
        raise AgradShapeError(f"unfold: expects a 4-D (N, C, H, W) input, got {x.shape}")
    k = ints(kernel_size, 2, "unfold: kernel_size")
    win = apply(
        TABLE["windows"],
        x,
        kernel=k,
        stride=ints(stride, 2, "unfold: stride"),
        padding=pairs(padding, 2),
        dilation=ints(dilation, 2, "unfold: dilation"),
    )
    n, c, oh, ow = win.shape[:4]
    return F.reshape(F.permute(win, (0, 1, 4, 5, 2, 3)), (n, c * k[0] * k[1], oh * ow))


def fold(
    input: Any,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:  # noqa: A002
    """col2im, the adjoint of unfold: (N, C·kh·kw, L) -> (N, C, H, W), summing overlaps."""
    cols = first(input)
    k, size = ints(kernel_size, 2, "fold: kernel_size"), ints(output_size, 2, "fold: output_size")
    s, d, p = (
        ints(stride, 2, "fold: stride"),
        ints(dilation, 2, "fold: dilation"),
        pairs(padding, 2),
    )
    oh, ow = out_sizes(size, k, s, p, d, "fold")
    n, ck, length = cols.shape
    if ck % (k[0] * k[1]) or length != oh * ow:
        raise AgradShapeError(
            f"fold: input of shape {cols.shape} does not match kernel {k} "
            f"and output size {size} ({oh * ow} blocks)"
        )
    c = ck // (k[0] * k[1])
    win = F.permute(F.reshape(cols, (n, c, k[0], k[1], oh, ow)), (0, 1, 4, 5, 2, 3))
    return apply(
        TABLE["windows_backward"], win, spatial=size, kernel=k, stride=s, padding=p, dilation=d
    )


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    return F.flatten(input, start_dim, end_dim)


__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "embedding",
    "flatten",
    "fold",
    "gelu",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "legacy_reduction",
    "linear",
    "log_softmax",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "relu",
    "relu_",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "tanh",
    "unfold",
    *_ACTIVATIONS,
    *_LOSSES_MORE,
    "group_norm",
    "instance_norm",
    "local_response_norm",
    "scaled_dot_product_attention",
    "interpolate",
    "upsample",
    *_SAMPLING,
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "lp_pool1d",
    "lp_pool2d",
    "conv_transpose1d",
    "conv_transpose2d",
]
