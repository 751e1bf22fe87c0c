"""agrad.nn.init: PyTorch's initialisations, with its gains and fan rules.

Every function fills its tensor in place under ``no_grad`` (so it works on parameters)
from agrad's generator (``agrad.manual_seed``: seeded, but not PyTorch's numbers), and
returns it. ``fan_in`` is ``size(1) · prod(size()[2:])``, ``fan_out`` ``size(0) · ...``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.grad_mode import no_grad
from ..engine.tensor import Tensor
from ..errors import AgradValueError
from .parameter import assign

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain of a nonlinearity (1 for linear and sigmoid, √2 for relu, ...)."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise AgradValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise AgradValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise AgradValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise AgradValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return assign(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    return assign(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return assign(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    if tensor.dim() != 2:
        raise AgradValueError("Only tensors with 2 dimensions are supported")
    return assign(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    if 0 in tensor.shape:
        return 0.0
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """U(-b, b) with b = gain·√(3/fan) (He et al., 2015)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """N(0, std²) with std = gain/√fan (He et al., 2015)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """N(mean, std²) restricted to [a, b] (by redrawing the values outside)."""
    if not a < b:
        raise AgradValueError(f"trunc_normal_: needs a < b, got a={a}, b={b}")
    with no_grad():
        drawn = np.array(tensor.detach().clone().normal_(mean, std))
        outside = (drawn < a) | (drawn > b)
        for _ in range(1000):  # each pass redraws only the values still outside
            if not outside.any():
                return assign(tensor, drawn)
            fresh = np.asarray(tensor.detach().clone().normal_(mean, std))
            drawn[outside] = fresh[outside]
            outside = (drawn < a) | (drawn > b)
    raise AgradValueError(f"trunc_normal_: [{a}, {b}] holds too little of N({mean}, {std}²)")


__all__ = [
    "calculate_gain",
    "constant_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]
