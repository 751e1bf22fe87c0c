"""erf and GELU (exact, and PyTorch's tanh approximation).

NumPy has no erf, so it is computed here: its Taylor series for |x| <= 2.5 (enough terms
for double precision; the worst cancellation costs about two digits, leaving errors
below 1e-14), and the continued fraction of erfc above. Both are plain arithmetic, so
the same code is holomorphic on complex inputs (the checker's complex step), with the
branch chosen by the real part. GELU's VJP is written with the array namespace, erf
included, so ``create_graph=True`` works through it.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradValueError
from .. import batching
from .core import UNARY, UNARY_CASES, Case, Op, register, same_shape, special
from .windows import checked

SQRT_PI = math.sqrt(math.pi)
SQRT_2 = math.sqrt(2.0)
TANH_SCALE = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715


def _series(z: np.ndarray, terms: int) -> np.ndarray:
    """erf(z) = 2/√π Σ (-1)^n z^(2n+1) / (n! (2n+1))."""
    q = -z * z
    term, total = z, z
    for n in range(1, terms):
        term = term * q / n
        total = total + term / (2 * n + 1)
    return total * (2.0 / SQRT_PI)


def _continued_fraction(z: np.ndarray) -> np.ndarray:
    """erf(z) = 1 - exp(-z²)/√π / (z + (1/2)/(z + 1/(z + (3/2)/(z + ...)))), Re z > 2.5."""
    f = z
    for k in range(50, 0, -1):
        f = z + (k / 2.0) / f
    return 1.0 - np.exp(-z * z) / (SQRT_PI * f)


def erf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    negative = x.real < 0
    z = np.where(negative, -x, x)
    out = np.empty_like(z, dtype=np.result_type(z, np.float32))
    near = np.abs(z.real) <= 1.0
    mid = ~near & (z.real <= 2.5)
    far = ~near & ~mid
    out[near] = _series(z[near], 22)
    out[mid] = _series(z[mid], 48)
    out[far] = _continued_fraction(z[far])
    return np.where(negative, -out, out)


def _erf_vjp(ns, g, out, x, **_):
    return (g * ((2.0 / SQRT_PI) * ns.exp(-(x * x))),)


def _gelu_forward(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(TANH_SCALE * (x + CUBIC * x * x * x)))
    return 0.5 * x * (1.0 + erf(x / SQRT_2))


def _gelu_vjp(ns, g, out, x, approximate="none"):
    if approximate == "tanh":
        t = ns.tanh(TANH_SCALE * (x + CUBIC * x * x * x))
        slope = TANH_SCALE * (1.0 + 3.0 * CUBIC * x * x)
        return (g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * slope),)
    cdf = 0.5 * (1.0 + ns.erf(x / SQRT_2))
    pdf = ns.exp(-0.5 * (x * x)) / math.sqrt(2.0 * math.pi)
    return (g * (cdf + x * pdf),)


def _gelu_shape(shape, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise AgradValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return tuple(shape)


register(
    Op("erf", "ErfBackward0", erf, _erf_vjp, same_shape, explain="d erf(a)/da = 2/√π·exp(-a²)",
       family=UNARY, floating=True, language=True, domain=(-3.0, 3.0),
       special=(special([-3.5, 0.7, 2.4, -1.2]),)),
    Op("gelu", "GeluBackward0", _gelu_forward, _gelu_vjp, _gelu_shape, prepare=checked(_gelu_shape),
       explain="d gelu(a)/da = Φ(a) + a·φ(a) (or the tanh approximation's derivative)",
       method=False, batch=batching.elementwise,
       doc="x·Φ(x), Φ the standard normal CDF (approximate='tanh' as PyTorch)",
       cases=UNARY_CASES + (Case(((2, 3),), {"approximate": "tanh"}),), domain=(-3.0, 3.0)),
)  # fmt: skip
