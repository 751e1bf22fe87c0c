"""nn.ConvTranspose1d and nn.ConvTranspose2d, PyTorch's: weight (in, out/groups, *kernel)
with Conv's initialisation (kaiming_uniform_(a=√5), fan_in from this weight's shape),
output_padding or forward's output_size, and PyTorch's repr."""

from __future__ import annotations

from typing import Any

from ..engine.creation import empty
from ..engine.ops.windows import ints
from ..engine.tensor import Tensor
from ..errors import AgradValueError
from .conv_transpose import conv_transpose1d, conv_transpose2d
from .layers import _ConvNd
from .parameter import Parameter


class _ConvTransposeNd(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise AgradValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
        if isinstance(padding, str):
            raise AgradValueError(f"{type(self).__name__}: padding must be ints, not {padding!r}")
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, device, dtype,
        )  # fmt: skip
        d = self._dims
        self.output_padding = ints(output_padding, d, f"{type(self).__name__}: output_padding")
        self.transposed = True
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dtype))
        self.reset_parameters()  # (fan_in from this weight's shape, as PyTorch's)

    def _output_padding(self, x: Tensor, output_size: Any) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        d = self._dims
        wanted = [int(v) for v in output_size][-d:]
        spatial = x.shape[-d:]
        padding = []
        for i in range(d):
            smallest = (
                (spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel_size[i] - 1) + 1
            )  # fmt: skip
            extra = wanted[i] - smallest
            if not 0 <= extra < self.stride[i]:
                raise AgradValueError(
                    f"requested an output size of {wanted}, but valid sizes range from "
                    f"{smallest} to {smallest + self.stride[i] - 1} (for an input of "
                    f"{list(spatial)})"
                )
            padding.append(extra)
        return tuple(padding)

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
        if self.output_padding != (0,) * d:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution; weight (in, out/groups, k)."""

    _dims = 1

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return conv_transpose1d(
            input, self.weight, self.bias, self.stride, self.padding,
            self._output_padding(input, output_size), self.groups, self.dilation,
        )  # fmt: skip


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution; weight (in, out/groups, kh, kw)."""

    _dims = 2

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return conv_transpose2d(
            input, self.weight, self.bias, self.stride, self.padding,
            self._output_padding(input, output_size), self.groups, self.dilation,
        )  # fmt: skip
