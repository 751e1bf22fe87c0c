"""Module faces of `agrad.nn.activations` (nn.ELU, nn.Hardswish, nn.PReLU, ...): each holds
its options, prints them as PyTorch's ``extra_repr`` does, and calls its function."""

from __future__ import annotations

from typing import Any

from ..engine.creation import full
from ..engine.tensor import Tensor
from . import activations as A
from .module import Module
from .modules import _Inplace  # (ReLU's base: the inplace flag and its repr)
from .parameter import Parameter


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Alpha(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class ELU(_Alpha):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.elu(input, self.alpha, self.inplace)


class CELU(_Alpha):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.selu(input, self.inplace)


class Hardswish(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.hardswish(input, self.inplace)


class Hardsigmoid(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.hardsigmoid(input, self.inplace)


class Mish(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.mish(input, self.inplace)


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.logsigmoid(input)


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.softsign(input)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.tanhshrink(input)


class Softmin(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.softshrink(input, self.lambd)


class PReLU(Module):
    """x for x > 0, a·x otherwise, with a learnt (one value, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype))

    def reset_parameters(self) -> None:
        self.weight.detach().fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return A.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


MODULES = (
    "CELU", "ELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid",
    "Mish", "PReLU", "ReLU6", "SELU", "Softmin", "Softshrink", "Softsign", "Tanhshrink",
    "Threshold",
)  # fmt: skip
