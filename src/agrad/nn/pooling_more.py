"""Power-average and adaptive max pooling, PyTorch's F.lp_pool1d/2d and
F.adaptive_max_pool1d/2d with their modules, composed of the op table's pooling entries:
lp_pool is PyTorch's own composition (avg_pool of x^p, sign·relu·abs, times the window
size, to the 1/p), adaptive max pooling one max_pool2d per output cell over PyTorch's
adaptive windows (so a tie goes to the first maximum, as in PyTorch's kernel)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import tensor
from ..engine.nn_public import avg_pool2d, max_pool2d
from ..engine.tensor import Tensor
from ..errors import AgradShapeError
from .module import Module

__all__ = ["adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d"]


def _lp(out: Tensor, window: int, p: float, dtype: Any) -> Tensor:
    """PyTorch's (sign(out)·relu(|out|)·window)^(1/p). Its backward gives 0 through sign and
    below relu's 0 even when the incoming gradient is inf·0 = nan (a window of zeros, p > 1):
    so sign is a constant here (its gradient is 0) and relu a where (which selects)."""
    magnitude = F.abs(out)
    positive = F.where(F.gt(magnitude, 0), magnitude, 0.0)
    signs = np.sign(out.detach().numpy())
    result = F.pow(F.mul(F.mul(positive, signs), window), 1.0 / p)
    return result if result.dtype == dtype else F.astype(result, dtype)


def lp_pool2d(
    input: Any,  # noqa: A002
    norm_type: float,
    kernel_size: Any,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    """``(Σ_window x^p)^(1/p)`` over (kh, kw) windows; p = inf is max pooling of |x|."""
    x = first(input)
    k = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
    s = k if stride is None else stride
    if norm_type == math.inf:
        return max_pool2d(F.abs(x), k, s, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return F.neg(max_pool2d(F.neg(F.abs(x)), k, s, 0, 1, ceil_mode))
    out = avg_pool2d(F.pow(x, norm_type), k, s, 0, ceil_mode)
    return _lp(out, k[0] * k[1], norm_type, x.dtype)  # (avg_pool2d promotes float32)


def lp_pool1d(
    input: Any,  # noqa: A002
    norm_type: float,
    kernel_size: int,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    x = first(input)
    if x.ndim not in (2, 3):
        raise AgradShapeError(f"lp_pool1d: expected 2D or 3D input (got {x.ndim}D input)")
    k = int(kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size)
    s = k if stride is None else int(stride[0] if isinstance(stride, (tuple, list)) else stride)
    out = lp_pool2d(F.unsqueeze(x, -2), norm_type, (1, k), (1, s), ceil_mode)
    return F.squeeze(out, -2)


def _bounds(n: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows: [floor(i·n/out), ceil((i+1)·n/out))."""
    return [((i * n) // out, -((-(i + 1) * n) // out)) for i in range(out)]


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    x = first(input)
    if x.ndim not in (3, 4):
        raise AgradShapeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got {list(x.shape)}"
        )
    size = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * 2
    h, w = x.shape[-2:]
    oh, ow = (h if size[0] is None else int(size[0])), (w if size[1] is None else int(size[1]))
    if oh < 0 or ow < 0 or h == 0 or w == 0:
        raise AgradShapeError(
            f"adaptive_max_pool2d(): output_size must be non-negative and the input's spatial "
            f"sizes positive, got output_size {(oh, ow)} for input {list(x.shape)}"
        )
    if oh == 0 or ow == 0:  # an empty output, as PyTorch's
        empty = F.reshape(x[..., :0, :0], (*x.shape[:-2], oh, ow))
        return (empty, tensor(np.zeros(empty.shape, dtype=np.int64))) if return_indices else empty
    rows, row_idx = [], []
    for h0, h1 in _bounds(h, oh):
        cells, cell_idx = [], []
        for w0, w1 in _bounds(w, ow):
            window = x[..., h0:h1, w0:w1]
            value, index = max_pool2d(window, (h1 - h0, w1 - w0), return_indices=True)
            cells.append(value)
            if return_indices:  # from the window's flat index to the input's
                local = index.numpy()
                cell_idx.append(((local // (w1 - w0)) + h0) * w + local % (w1 - w0) + w0)
        rows.append(F.cat(cells, -1))
        if return_indices:
            row_idx.append(cell_idx)
    out = F.cat(rows, -2)
    if not return_indices:
        return out
    indices = np.concatenate([np.concatenate(r, -1) for r in row_idx], -2)
    return out, tensor(indices.astype(np.int64))


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    x = first(input)
    if x.ndim not in (2, 3):
        raise AgradShapeError(
            f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {list(x.shape)}"
        )
    n = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    out = adaptive_max_pool2d(F.unsqueeze(x, -2), (1, n), return_indices)
    if return_indices:
        return F.squeeze(out[0], -2), F.squeeze(out[1], -2)
    return F.squeeze(out, -2)


# ---- modules -------------------------------------------------------------------------------


class _LPPool(Module):
    _fn: Any = None

    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPool):
    _fn = staticmethod(lp_pool1d)


class LPPool2d(_LPPool):
    _fn = staticmethod(lp_pool2d)


class _AdaptiveMaxPool(Module):
    _fn: Any = None

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    _fn = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    _fn = staticmethod(adaptive_max_pool2d)
