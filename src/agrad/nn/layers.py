"""Layers with weights or shapes: Identity, Flatten, Unflatten, Linear, Bilinear, Embedding,
Conv1d, Conv2d — with PyTorch's parameter names, shapes, initialisations and reprs."""

from __future__ import annotations

import math
from typing import Any

from ..engine import functions as F
from ..engine.creation import empty
from ..engine.ops.windows import ints
from ..engine.tensor import Tensor
from ..errors import AgradValueError
from . import functional as NF
from . import init
from .module import Module
from .parameter import Parameter, assign, values


class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        d = self.dim % input.ndim
        return F.reshape(input, (*input.shape[:d], *self.unflattened_size, *input.shape[d + 1 :]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _bias_bound(weight: Tensor) -> float:
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0


class Linear(Module):
    """``y = x Wᵀ + b``; W (out, in) and b from U(-1/√in, 1/√in), as PyTorch's."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype))
        self.bias = Parameter(empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = _bias_bound(self.weight)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return NF.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1ᵀ A x2 + b``; A (out, in1, in2) and b from U(-1/√in1, 1/√in1)."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype))
        self.bias = Parameter(empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return NF.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Embedding(Module):
    """A table of ``num_embeddings`` vectors, from N(0, 1) (the padding row zeroed)."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Any = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AgradValueError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(
                empty(num_embeddings, embedding_dim, dtype=dtype), requires_grad=not _freeze
            )
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            rows = values(self.weight).copy()
            rows[self.padding_idx] = 0.0
            assign(self.weight, rows)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return NF.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


class _ConvNd(Module):
    _dims = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        d, name = self._dims, type(self).__name__
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise AgradValueError(
                f"{name}: in_channels and out_channels must be divisible by groups ({groups})"
            )
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise AgradValueError(
                f"{name}: padding_mode must be 'zeros', 'reflect', "
                f"'replicate' or 'circular', got {padding_mode!r}"
            )
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ints(kernel_size, d, f"{name}: kernel_size")
        self.stride = ints(stride, d, f"{name}: stride")
        self.dilation = ints(dilation, d, f"{name}: dilation")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise AgradValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise AgradValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = ints(padding, d, f"{name}: padding")
        self.padding_mode = padding_mode
        self.output_padding, self.transposed = (0,) * d, False
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dtype))
        self.bias = Parameter(empty(out_channels, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = _bias_bound(self.weight)
            init.uniform_(self.bias, -bound, bound)

    def _conv(self, x: Tensor, fn: Any) -> Tensor:
        if self.padding_mode == "zeros" or isinstance(self.padding, str):
            return fn(
                x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
            )
        widths = [w for p in reversed(self.padding) for w in (p, p)]
        x = NF.pad(x, widths, mode=self.padding_mode)
        return fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)

    def extra_repr(self) -> str:
        d = self._dims
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * d:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * d:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) (or (C, L)); weight (out, in/groups, k)."""

    _dims = 1

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv(input, NF.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) (or (C, H, W)); weight (out, in/groups, kh, kw)."""

    _dims = 2

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv(input, NF.conv2d)
