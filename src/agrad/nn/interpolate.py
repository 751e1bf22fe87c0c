"""F.interpolate (and nn.Upsample's work), PyTorch's: nearest, nearest-exact, linear,
bilinear (align_corners either way) and area, on 1-D (N, C, L) and 2-D (N, C, H, W) inputs.

Each spatial axis is resampled in turn by indexing (nearest) or by a weighted sum of two
indexed copies (linear), so the gradient is indexing's scatter-add; the source positions
are PyTorch's kernels' (nearest's computed in float32, as its kernel does).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first
from ..engine.nn_public import adaptive_avg_pool2d
from ..engine.tensor import Tensor
from ..errors import AgradValueError

__all__ = ["interpolate", "upsample"]

_LINEAR = {"linear": 3, "bilinear": 4}


def _take(x: Tensor, axis: int, index: np.ndarray) -> Tensor:
    return x[(slice(None),) * axis + (index,)]


def _nearest(x: Tensor, axis: int, size: int, scale: float | None, exact: bool) -> Tensor:
    n = x.shape[axis]
    ratio = np.float32(n / size if scale is None else 1.0 / scale)
    dst = np.arange(size, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    src = np.minimum(np.floor(dst * ratio).astype(np.int64), n - 1)
    return _take(x, axis, src)


def _linear(x: Tensor, axis: int, size: int, scale: float | None, align_corners: bool) -> Tensor:
    n = x.shape[axis]
    dst = np.arange(size, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (size - 1) if size > 1 else 0.0)
    else:
        ratio = n / size if scale is None else 1.0 / scale
        src = np.maximum(ratio * (dst + 0.5) - 0.5, 0.0)
    lo = src.astype(np.int64)
    hi = lo + (lo < n - 1)
    upper = src - lo
    shape = [1] * x.ndim
    shape[axis] = size
    w_hi = upper.reshape(shape).astype(x.dtype)
    w_lo = (1.0 - upper).reshape(shape).astype(x.dtype)
    return F.add(F.mul(_take(x, axis, lo), w_lo), F.mul(_take(x, axis, hi), w_hi))


def _sizes(x: Tensor, size: Any, scale_factor: Any, dims: int) -> tuple[list[int], list[Any]]:
    if size is not None and scale_factor is not None:
        raise AgradValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (tuple, list)) else [size] * dims
        if len(sizes) != dims:
            raise AgradValueError(
                f"Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(x.shape[2:])} and output size of "
                f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "output size in (o1, o2, ...,oK) format."
            )
        return [int(s) for s in sizes], [None] * dims
    if scale_factor is None:
        raise AgradValueError("either size or scale_factor should be defined")
    scales = (
        list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * dims
    )
    if len(scales) != dims:
        raise AgradValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(x.shape[2:])} and scale_factor of "
            f"shape {scale_factor}."
        )
    sizes = [math.floor(n * float(s)) for n, s in zip(x.shape[2:], scales, strict=True)]
    return sizes, [float(s) for s in scales]


def interpolate(
    input: Any,  # noqa: A002
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dimensions of (N, C, L) or (N, C, H, W) to ``size`` or by
    ``scale_factor``."""
    x = first(input)
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by agrad")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise AgradValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if x.ndim not in (3, 4):
        raise NotImplementedError(
            f"interpolate: agrad supports 3D (N, C, L) and 4D (N, C, H, W) inputs, got "
            f"{x.ndim}D (mode={mode})"
        )
    if mode in _LINEAR and _LINEAR[mode] != x.ndim:
        raise NotImplementedError(
            f"Got {x.ndim}D input, but {mode} mode needs {_LINEAR[mode]}D input"
        )
    if mode not in ("nearest", "nearest-exact", "area", *_LINEAR):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported by agrad")
    dims = x.ndim - 2
    sizes, scales = _sizes(x, size, scale_factor, dims)
    if recompute_scale_factor:
        scales = [None] * dims
    if mode == "area":
        flat = x if dims == 2 else F.unsqueeze(x, -2)
        pooled = adaptive_avg_pool2d(flat, tuple(sizes if dims == 2 else [1, *sizes]))
        pooled = pooled if dims == 2 else F.squeeze(pooled, -2)
        # (the entry returns float64 for float32 input; PyTorch keeps float32)
        return pooled if pooled.dtype == x.dtype else F.astype(pooled, x.dtype)
    out = x
    for i, (n, s) in enumerate(zip(sizes, scales, strict=True)):
        if mode in _LINEAR:
            out = _linear(out, 2 + i, n, s, bool(align_corners))
        else:
            out = _nearest(out, 2 + i, n, s, mode == "nearest-exact")
    return out


def upsample(
    input: Any,  # noqa: A002
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """The deprecated name of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)
