"""In-place fills from agrad's generator, relu_ and pow_: Tensor methods PyTorch has.

``uniform_``, ``normal_`` and ``bernoulli_`` draw from the generator ``agrad.manual_seed``
seeds (NumPy's: seeded, not PyTorch's numbers). Like ``fill_``, a fill is an in-place
write: refused on a leaf that requires grad unless under ``no_grad`` (``agrad.nn.init``
runs there), and recorded so that no gradient flows to the values it replaced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradValueError
from . import functions as F
from .generator import numpy_rng
from .inplace import fitted
from .tensor import Tensor


def _replaced(source: Tensor, values: np.ndarray) -> Tensor:
    return F.add(F.mul(source, 0), values)  # as fill_: the old values get no gradient


def _draw(t: Tensor, what: str, draw: Any) -> np.ndarray:
    if t.dtype.kind != "f":
        raise AgradValueError(f"{what}: expects a floating-point tensor, got dtype {t.dtype}")
    return np.asarray(draw(t.shape)).astype(t.dtype)


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with numbers drawn uniformly from [a, b)."""
    values = _draw(self, "uniform_", lambda shape: numpy_rng(generator).uniform(a, b, shape))
    return self._inplace(_replaced, values)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with numbers drawn from the normal distribution N(mean, std²)."""
    values = _draw(self, "normal_", lambda shape: numpy_rng(generator).normal(mean, std, shape))
    return self._inplace(_replaced, values)


def bernoulli_(self: Tensor, p: float = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 1 with probability p, else 0."""
    values = _draw(self, "bernoulli_", lambda shape: numpy_rng(generator).random(shape) < p)
    return self._inplace(_replaced, values)


def relu_(self: Tensor) -> Tensor:
    """relu in place (ReLU(inplace=True)): the result's gradient is relu's."""
    return self._inplace(F.relu)


def _pow(source: Tensor, exponent: Any) -> Tensor:
    """``source ** exponent`` if it can be written into ``source`` (`inplace.fitted`): no
    float into an integer tensor, no exponent broadcasting ``source`` to a larger shape."""
    return fitted(source, F.pow(source, exponent))


def pow_(self: Tensor, exponent: Any) -> Tensor:
    """``self ** exponent`` written into ``self`` (PowBackward0 for a number, PowBackward1
    for a tensor exponent, whose gradient is tracked)."""
    return self._inplace(_pow, exponent)


METHODS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "relu_": relu_,
           "pow_": pow_}  # fmt: skip
