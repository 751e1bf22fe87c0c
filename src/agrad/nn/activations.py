"""The rest of torch.nn.functional's activations, composed of the op table's entries:
hardtanh, relu6, elu, selu, celu, hardswish, hardsigmoid, logsigmoid, softsign, mish,
tanhshrink, softmin, glu, threshold, hardshrink, softshrink, prelu.

Piecewise functions are ``where`` of their pieces with the masks PyTorch's backward kernels
use, so the gradient at a breakpoint (x = 0, ±3, ±lambd) and at nan is PyTorch's, not
whichever side a composite happens to take; a piece that overflows or is nan off its side
(elu's exp, hardswish's product) is evaluated at a clamped input, so no 0·inf or 0·nan
reaches the gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.args import first, number
from ..engine.escapes import decided_by
from ..engine.tensor import Tensor
from ..errors import AgradShapeError

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _data(x: Tensor) -> np.ndarray:
    # (the library's own read, for a mask: not a value leaving the graph, but a constant of
    # it made from the values, which a replay at other values must not hold fixed)
    decided_by(x)
    return x._array


def _source(x: Tensor, inplace: bool) -> Tensor:
    """What a function that saves its input computes from: a copy when it is to write into
    ``x`` (the saved value must not be the one overwritten)."""
    return x.clone() if inplace else x


def _out(x: Tensor, result: Tensor, inplace: bool) -> Tensor:
    return x.copy_(result) if inplace else result


def hardtanh(
    input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:  # noqa: A002, E501
    """x clamped to [min_val, max_val]; gradient 1 strictly inside, 0 elsewhere (PyTorch's)."""
    x = first(input)
    min_val, max_val = (
        number(min_val, "hardtanh", "min_val"),
        number(max_val, "hardtanh", "max_val"),
    )
    a = _data(x)
    passes = ~((a <= min_val) | (a >= max_val))  # (a nan passes, as in PyTorch's kernel)
    return _out(x, F.where(passes, x, np.clip(a, min_val, max_val)), inplace)


def relu6(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    return hardtanh(input, 0.0, 6.0, inplace)


def _negative_part(x: Tensor, positive: np.ndarray) -> Tensor:
    """x where x <= 0, else 0: the input of a piece used only on the negative side."""
    return F.where(positive, 0.0, x)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x for x > 0, alpha·(exp(x) - 1) otherwise (the negative side's gradient at 0)."""
    x = first(input)
    positive = ~(_data(x) <= 0)
    negative = F.mul(F.expm1(_negative_part(x, positive)), alpha)
    return _out(x, F.where(positive, x, negative), inplace)


def selu(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    x = first(input)
    return _out(x, F.mul(elu(x, SELU_ALPHA), SELU_SCALE), inplace)


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x for x > 0, alpha·(exp(x/alpha) - 1) otherwise."""
    x = first(input)
    positive = ~(_data(x) <= 0)
    negative = F.mul(F.expm1(F.div(_negative_part(x, positive), alpha)), alpha)
    return _out(x, F.where(positive, x, negative), inplace)


def hardswish(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    """x·relu6(x + 3)/6; PyTorch's gradient: 0 up to -3, x/3 + 1/2 strictly inside, 1 from
    3 on (and at nan)."""
    x = first(input)
    a, src = _data(x), _source(x, inplace)
    inside = (a > -3.0) & (a < 3.0)
    s = F.where(inside, src, 0.0)  # (so no 0·nan reaches src from the unused piece)
    middle = F.div(F.mul(s, F.add(s, 3.0)), 6.0)
    result = F.where(a <= -3.0, 0.0, F.where(inside, middle, src))
    return _out(x, result, inplace)


def hardsigmoid(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3)/6; gradient 1/6 strictly inside (-3, 3), else 0."""
    x = first(input)
    a = _data(x)
    inside = (a > -3.0) & (a < 3.0)
    result = F.where(inside, F.add(F.div(x, 6.0), 0.5), np.clip(a / 6.0 + 0.5, 0.0, 1.0))
    return _out(x, result, inplace)


def logsigmoid(input: Any) -> Tensor:  # noqa: A002
    """log σ(x) = min(x, 0) - log1p(exp(-|x|)), stable on both sides."""
    x = first(input)
    negative = _data(x) < 0
    low = F.sub(x, F.log1p(F.exp(F.where(negative, x, 0.0))))
    high = F.neg(F.log1p(F.exp(F.neg(F.where(negative, 0.0, x)))))
    return F.where(negative, low, high)


def softsign(input: Any) -> Tensor:  # noqa: A002
    x = first(input)
    return F.div(x, F.add(F.abs(x), 1.0))


def mish(input: Any, inplace: bool = False) -> Tensor:  # noqa: A002
    x = first(input)
    src = _source(x, inplace)
    return _out(x, F.mul(src, F.tanh(F.softplus(src))), inplace)


def tanhshrink(input: Any) -> Tensor:  # noqa: A002
    x = first(input)
    return F.sub(x, F.tanh(x))


def softmin(input: Any, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    x = first(input) if dtype is None else F.astype(input, dtype)
    if dim is None:  # PyTorch's legacy rule, as softmax's
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return F.softmax(F.neg(x), dim)


def glu(input: Any, dim: int = -1) -> Tensor:  # noqa: A002
    """a·σ(b), where a and b are the two halves of ``input`` along ``dim``."""
    x = first(input)
    if x.ndim == 0:
        raise AgradShapeError("glu does not support scalars because halving size must be even")
    d = dim % x.ndim
    n = x.shape[d]
    if n % 2:
        raise AgradShapeError(
            f"Halving dimension must be even, but dimension {d} is size {n}",
        )
    a, b = x.split(n // 2, d)
    return F.mul(a, F.sigmoid(b))


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > threshold, else value (no gradient there)."""
    x = first(input)
    return _out(x, F.where(~(_data(x) <= threshold), x, value), inplace)


def hardshrink(input: Any, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x outside [-lambd, lambd], 0 inside (its edges included)."""
    x = first(input)
    lambd = number(lambd, "hardshrink", "lambd")
    a = _data(x)
    return F.where(~((a >= -lambd) & (a <= lambd)), x, 0.0)


def softshrink(input: Any, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x - lambd above lambd, x + lambd below -lambd, 0 in between (edges included)."""
    x = first(input)
    lambd = number(lambd, "softshrink", "lambd")
    a = _data(x)
    passes = ~((a >= -lambd) & (a <= lambd))
    return F.where(passes, F.where(a < -lambd, F.add(x, lambd), F.sub(x, lambd)), 0.0)


def prelu(input: Any, weight: Any) -> Tensor:  # noqa: A002
    """x for x > 0, weight·x otherwise; weight has one value or one per channel (dim 1)."""
    x, w = first(input), first(weight)
    if w.ndim > 1 or (w.numel() != 1 and (x.ndim < 2 or x.shape[1] != w.numel())):
        channels = x.shape[1] if x.ndim >= 2 else 1
        raise AgradShapeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
            f"= {w.numel()} and channel size = {channels}."
        )
    if w.numel() != 1:
        w = w.reshape((1, -1) + (1,) * (x.ndim - 2))
    elif w.ndim:
        w = w.reshape(())
    return F.where(_data(x) > 0, x, F.mul(w, x))


__all__ = [
    "celu", "elu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
    "mish", "prelu", "relu6", "selu", "softmin", "softshrink", "softsign", "tanhshrink",
    "threshold",
]  # fmt: skip
