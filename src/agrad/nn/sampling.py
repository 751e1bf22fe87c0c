"""1-D pooling, channel dropout and pixel (un)shuffle (PyTorch's functional forms), composed
of the op table's entries: the 1-D poolings are the 2-D entries on a unit axis, pixel
(un)shuffle reshapes and permutes. (Interpolation is in `interpolate`.)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import rand
from ..engine.nn_public import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError
from .activations import SELU_ALPHA, SELU_SCALE

__all__ = [
    "adaptive_avg_pool1d",
    "alpha_dropout",
    "avg_pool1d",
    "dropout1d",
    "dropout2d",
    "max_pool1d",
    "pixel_shuffle",
    "pixel_unshuffle",
]


def _one(value: Any, name: str) -> int:
    v = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(v) != 1:
        raise AgradValueError(f"{name} must be an int or a 1-tuple, got {value}")
    return int(v[0])


def _same_dtype(out: Tensor, x: Tensor) -> Tensor:
    """The result in the input's dtype: the 2-D average-pooling entries return float64 for
    float32 inputs (PyTorch keeps float32)."""
    return out if out.dtype == x.dtype else F.astype(out, x.dtype)


def _on_unit_axis(x: Tensor, name: str) -> Tensor:
    if x.ndim not in (2, 3):
        raise AgradShapeError(f"{name}: expected 2D or 3D input (got {x.ndim}D input)")
    return F.unsqueeze(x, -2)


def max_pool1d(
    input: Any,  # noqa: A002
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    x = first(input)
    k = _one(kernel_size, "max_pool1d: kernel_size")
    s = k if stride is None or stride == [] else _one(stride, "max_pool1d: stride")
    p, d = _one(padding, "max_pool1d: padding"), _one(dilation, "max_pool1d: dilation")
    out = max_pool2d(
        _on_unit_axis(x, "max_pool1d"), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices
    )
    if return_indices:
        return F.squeeze(out[0], -2), F.squeeze(out[1], -2)
    return F.squeeze(out, -2)


def avg_pool1d(
    input: Any,  # noqa: A002
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    x = first(input)
    k = _one(kernel_size, "avg_pool1d: kernel_size")
    s = k if stride is None or stride == [] else _one(stride, "avg_pool1d: stride")
    p = _one(padding, "avg_pool1d: padding")
    out = avg_pool2d(
        _on_unit_axis(x, "avg_pool1d"), (1, k), (1, s), (0, p), ceil_mode, count_include_pad
    )
    return _same_dtype(F.squeeze(out, -2), x)


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Tensor:  # noqa: A002
    x = first(input)
    n = _one(output_size, "adaptive_avg_pool1d: output_size")
    out = adaptive_avg_pool2d(_on_unit_axis(x, "adaptive_avg_pool1d"), (1, n))
    return _same_dtype(F.squeeze(out, -2), x)


# ---- dropout of whole channels ---------------------------------------------------------------


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise AgradValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _channel_dropout(x: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return x
    lead = x.shape[:2] if batched else x.shape[:1]
    shape = (*lead, *([1] * (x.ndim - len(lead))))
    keep = np.asarray(rand(*shape, dtype=x.dtype)) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0).astype(x.dtype)
    return x.mul_(scale) if inplace else F.mul(x, scale)


def dropout1d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p``."""
    x = first(input)
    if x.ndim not in (2, 3):
        raise AgradShapeError(
            f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _channel_dropout(x, p, training, inplace, x.ndim == 3)


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, H, W) inputs with probability ``p``; a 3-D input is
    taken as (N, C, L), as PyTorch does (with its warning)."""
    x = first(input)
    if x.ndim not in (3, 4):
        raise AgradShapeError(
            f"dropout2d: Expected 3D or 4D input, but received a {x.ndim}D input."
        )
    return _channel_dropout(x, p, training, inplace, True)


def alpha_dropout(
    input: Any, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:  # noqa: A002
    """SELU's dropout: dropped values set to -αλ, then an affine map that keeps a zero mean
    and unit variance (PyTorch's formula; the mask from agrad's generator)."""
    _check_p(p)
    x = first(input)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        out = F.mul(x, np.zeros((), dtype=x.dtype))
        return x.copy_(out) if inplace else out
    alpha = SELU_ALPHA * SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1.0) * (1.0 - p))
    keep = (np.asarray(rand(*x.shape, dtype=x.dtype)) >= p).astype(x.dtype)
    shift = ((keep - 1.0) * (alpha * a) + alpha * a * p).astype(x.dtype)
    out = F.add(F.mul(x, (keep * a).astype(x.dtype)), shift)
    return x.copy_(out) if inplace else out


# ---- pixel shuffle -------------------------------------------------------------------------


def pixel_shuffle(input: Any, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C·r², H, W) -> (*, C, H·r, W·r)."""
    x, r = first(input), int(upscale_factor)
    if x.ndim < 3:
        raise AgradShapeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    *lead, c, h, w = x.shape
    if r <= 0 or c % (r * r):
        raise AgradShapeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    y = F.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = F.permute(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return F.reshape(y, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H·r, W·r) -> (*, C·r², H, W), the inverse of pixel_shuffle."""
    x, r = first(input), int(downscale_factor)
    if x.ndim < 3:
        raise AgradShapeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    *lead, c, h, w = x.shape
    if r <= 0 or h % r or w % r:
        raise AgradShapeError(
            "pixel_unshuffle expects height and width to be divisible by downscale_factor, "
            f"but got {h} and {w} with downscale_factor={r}"
        )
    n = len(lead)
    y = F.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = F.permute(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return F.reshape(y, (*lead, c * r * r, h // r, w // r))
