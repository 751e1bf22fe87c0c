"""Group, instance and local-response normalization (PyTorch's F.group_norm,
F.instance_norm, F.local_response_norm and their modules), composed of the op table's
``layer_norm`` and ``batch_norm`` entries on reshaped inputs, so their gradients are those
entries' gradients.

group_norm is layer_norm over each (sample, group) block; instance_norm is batch_norm of a
(1, N·C, ...) view, with running statistics averaged back over the batch, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import ones, tensor, zeros
from ..engine.grad_mode import no_grad
from ..engine.nn_public import batch_norm, layer_norm
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["group_norm", "instance_norm", "local_response_norm"]


def _per_channel(t: Any, ndim: int) -> Tensor:
    """A (C,) vector shaped to broadcast over (N, C, *spatial)."""
    return F.reshape(first(t), (-1, *([1] * (ndim - 2))))


def _affine(out: Tensor, weight: Any, bias: Any) -> Tensor:
    if weight is not None:
        out = F.mul(out, _per_channel(weight, out.ndim))
    if bias is not None:
        out = F.add(out, _per_channel(bias, out.ndim))
    return out


def group_norm(
    input: Any,  # noqa: A002
    num_groups: int,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each sample's channels in ``num_groups`` groups (biased variance), then
    scale and shift per channel."""
    x = first(input)
    if x.ndim < 2:
        raise AgradShapeError(
            f"group_norm: expected an input with at least 2 dimensions (N, C, *), got {x.shape}"
        )
    n, c = x.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise AgradShapeError(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(x.shape)} and num_groups={num_groups}"
        )
    block = (c // num_groups) * math.prod(x.shape[2:])
    grouped = F.reshape(x, (n, num_groups, block))
    out = F.reshape(layer_norm(grouped, (block,), None, None, eps), x.shape)
    return _affine(out, weight, bias)


def instance_norm(
    input: Any,  # noqa: A002
    running_mean: Any = None,
    running_var: Any = None,
    weight: Any = None,
    bias: Any = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each (sample, channel) over its spatial positions. With ``use_input_stats``
    the running statistics (if given) are updated in place with the batch's average of the
    instances' means and unbiased variances; without it they are used instead."""
    x = first(input)
    if x.ndim < 3:
        raise AgradValueError(
            f"instance_norm: expected an input of at least 3 dimensions (N, C, *), got {x.shape}"
        )
    n, c = x.shape[:2]
    flat = F.reshape(x, (1, n * c, *x.shape[2:]))
    stats: list[Any] = [None, None]
    for i, running in enumerate((running_mean, running_var)):
        if running is not None:
            stats[i] = tensor(np.tile(np.asarray(first(running).detach()), n))
    if not use_input_stats and (stats[0] is None or stats[1] is None):
        raise AgradValueError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    if use_input_stats and math.prod(x.shape[2:]) == 1:
        raise AgradValueError(
            f"Expected more than 1 spatial element when training, got input size {list(x.shape)}"
        )
    out = batch_norm(flat, stats[0], stats[1], None, None, use_input_stats, momentum, eps)
    if use_input_stats:
        with no_grad():
            for running, tiled in zip((running_mean, running_var), stats, strict=True):
                if running is not None:
                    first(running).copy_(np.asarray(tiled).reshape(n, c).mean(axis=0))
    return _affine(F.reshape(out, x.shape), weight, bias)


def local_response_norm(
    input: Any,  # noqa: A002
    size: int,
    alpha: float = 1e-4,
    beta: float = 0.75,
    k: float = 1.0,
) -> Tensor:
    """``x / (k + alpha/size · Σ x²)^beta``, the sum over ``size`` neighbouring channels
    (zero-padded: size//2 before, (size-1)//2 after), as PyTorch's."""
    x = first(input)
    if x.ndim < 3:
        raise AgradValueError(
            f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)"
        )
    if x.numel() == 0:
        return x
    c = x.shape[1]
    square = F.mul(x, x)
    before, after = size // 2, (size - 1) // 2
    padded = F.cat(
        [zeros(x.shape[0], before, *x.shape[2:], dtype=x.dtype), square]
        + [zeros(x.shape[0], after, *x.shape[2:], dtype=x.dtype)],
        1,
    )
    window = padded[:, 0:c]
    for j in range(1, size):
        window = F.add(window, padded[:, j : j + c])
    denominator = F.pow(F.add(F.mul(F.div(window, size), alpha), k), beta)
    return F.div(x, denominator)


# ---- modules -------------------------------------------------------------------------------


class GroupNorm(Module):
    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise AgradValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        self.weight = Parameter(ones(num_channels, dtype=dtype)) if affine else None
        self.bias = Parameter(zeros(num_channels, dtype=dtype)) if affine and bias else None

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(Module):
    _dims: tuple[int, int] = (2, 3)  # (unbatched, batched) input dimensions

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(zeros(num_features, dtype=dtype)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        x = first(input)
        if x.ndim not in self._dims:
            raise AgradValueError(
                f"expected {self._dims[0]}D or {self._dims[1]}D input (got {x.ndim}D input)"
            )
        feature_dim = x.ndim - self._dims[0]
        if x.shape[feature_dim] != self.num_features and self.affine:
            raise AgradValueError(
                f"expected input's size at dim={feature_dim} to match num_features"
                f" ({self.num_features}), but got: {x.shape[feature_dim]}."
            )
        unbatched = x.ndim == self._dims[0]
        out = instance_norm(
            F.unsqueeze(x, 0) if unbatched else x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return F.squeeze(out, 0) if unbatched else out

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or unbatched (C, L) inputs."""

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or unbatched (C, H, W) inputs."""

    _dims = (3, 4)


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
