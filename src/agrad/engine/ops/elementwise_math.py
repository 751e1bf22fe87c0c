"""Elementwise functions beyond the basic set, as PyTorch has them: the inverse hyperbolics,
logit, exp2, frac and nan_to_num; atan2, hypot, logaddexp(2), xlogy and fmod; clamp with
tensor bounds. Their gradients at the edges (0/0, infinities, nan) follow PyTorch's
formulas, which the generated special-value tests compare against PyTorch itself.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels import Array, complex_sqrt
from ..node import Node
from .core import (
    BINARY,
    BINARY_CASES,
    INPUTS_AND_OUTPUT,
    NOTHING,
    OUTPUT,
    Case,
    Op,
    broadcast_shape,
    raw,
    register,
    special,
)
from .elementwise import floating_binary, floating_unary, unary
from .rounding import check_integer_divisor

_LN2 = math.log(2.0)


def _asinh_vjp(ns, g, out, x, **_):
    return (g / ns.sqrt(x * x + 1.0),)


def _acosh_vjp(ns, g, out, x, **_):
    return (g / ns.sqrt(x * x - 1.0),)


def _atanh_vjp(ns, g, out, x, **_):
    return (g / (1.0 - x * x),)


def _exp2_vjp(ns, g, out, x, **_):
    return (g * out * _LN2,)


def _logit_forward(x: Array, eps: float | None = None) -> Array:
    z = x if eps is None else np.clip(x, eps, 1.0 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(z / (1.0 - z))


def _logit_vjp(ns, g, out, x, eps=None, **_):
    # As PyTorch: without eps, nan outside [0, 1] (where the value is nan); with it, no
    # gradient where the input was clamped (a nan input stays nan: no comparison holds).
    slope, a = g / (x * (1.0 - x)), raw(x)
    if eps is None:
        return (ns.where((a < 0.0) | (a > 1.0), np.nan, slope),)
    return (ns.where((a < eps) | (a > 1.0 - eps), 0.0, slope),)


def _identity_vjp(ns, g, out, x, **_):
    return (g,)


def _frac(x: Array) -> Array:
    return x - np.trunc(x)


def _nan_to_num_forward(
    x: Array, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Array:
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_vjp(ns, g, out, x, **_):
    # PyTorch's rule: the gradient passes where the input was finite, 0 where it was replaced.
    return (ns.where(np.isfinite(raw(x)), g, 0.0),)


def _atan2_vjp(ns, g, out, a, b, **_):
    # d/da = b/(a²+b²), d/db = -a/(a²+b²); PyTorch gives 0 at a = b = 0 (not 0/0).
    d = a * a + b * b
    zero = raw(d) == 0
    safe = ns.where(zero, 1.0, d)
    return ns.where(zero, 0.0, g * b / safe), ns.where(zero, 0.0, -g * a / safe)


def _hypot_vjp(ns, g, out, a, b, **_):
    return g * a / out, g * b / out  # 0/0 = nan at the origin, as PyTorch's


def _logaddexp_vjp(ns, g, out, a, b, **_):
    # PyTorch's form, g / (1 + exp(b - a)): exact at ±inf operands (nan where both are).
    return g / (1.0 + ns.exp(b - a)), g / (1.0 + ns.exp(a - b))


def _logaddexp2_vjp(ns, g, out, a, b, **_):
    return g / (1.0 + ns.exp2(b - a)), g / (1.0 + ns.exp2(a - b))


def _xlogy_forward(x: Array, y: Array) -> Array:
    # 0·log(y) is 0 unless y is nan (PyTorch's xlogy), so 0·log(0) = 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        value = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), 0.0, value)


def _xlogy_vjp(ns, g, out, x, y, **_):
    # PyTorch's: xlogy(g, y) for x, but 0 where x = 0 and y <= 0; g·x/y for y.
    skip = (raw(x) == 0) & (raw(y) <= 0)
    return ns.where(skip, 0.0, ns.xlogy(g, y)), g * x / y


def _fmod_vjp(ns, g, out, a, b, **_):
    # fmod(a, b) = a - trunc(a/b)·b: piecewise linear in both.
    return g, -g * np.trunc(raw(a) / raw(b))


def _clamp_forward(x: Array, *limits: Array, bounds: str = "both", name: str = "") -> Array:
    # PyTorch's clamp.Tensor: min(max(x, low), high), so high wins where low > high; a nan
    # anywhere is nan. The operands are the bounds given, as ``bounds`` says.
    if bounds == "min":
        return np.maximum(x, limits[0])
    if bounds == "max":
        return np.minimum(x, limits[0])
    return np.minimum(np.maximum(x, limits[0]), limits[1])


def _clamp_vjp(ns, g, out, x, *limits, bounds="both", name="", needs=(True, True, True)):
    # PyTorch's clamp_backward and clamp_backward_min_max: x keeps the gradient where it is
    # within the bounds (so at a bound), a bound takes it where x is beyond it; where
    # low > high the result is high, whose gradient it is.
    a, bound = raw(x), raw(limits[0])
    if bounds == "min":
        return ns.where(a >= bound, g, 0.0), ns.where(a < bound, g, 0.0) if needs[1] else None
    if bounds == "max":
        return ns.where(a <= bound, g, 0.0), ns.where(a > bound, g, 0.0) if needs[1] else None
    lo, hi = bound, raw(limits[1])
    gx = ns.where((a >= lo) & (a <= hi), g, 0.0) if needs[0] else None
    glo = ns.where((a < lo) & (lo < hi), g, 0.0) if needs[1] else None
    ghi = ns.where((a > hi) | (hi < lo), g, 0.0) if needs[2] else None
    return gx, glo, ghi


# PyTorch's names: clamp(x, min=t, max=t) (and clip), clamp_min(x, t), clamp_max(x, t).
_CLAMP_NAMES = {"": "ClampBackward0", "clamp_min": "ClampMinBackward1",
                "clamp_max": "ClampMaxBackward1"}  # fmt: skip


def _clamp_name(node: Node) -> str:
    return _CLAMP_NAMES[node.params.get("name", "")]


# Forwards the checker's complex step can run (f'(x) = Im f(x + ih)/h): holomorphic
# extensions, with branches chosen by the real parts.


def _atan2_complex(a: Array, b: Array) -> Array:
    ra, rb = np.real(a), np.real(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        base = np.arctan(a / b)
    return base + np.where(rb < 0, np.where(ra >= 0, math.pi, -math.pi), 0.0)


def _hypot_complex(a: Array, b: Array) -> Array:
    return complex_sqrt(a * a + b * b)  # hypot(0, 0) is a kink


def _logaddexp_complex(exp, log):
    def forward(a: Array, b: Array) -> Array:
        top = np.maximum(np.real(a), np.real(b))
        return top + log(exp(a - top) + exp(b - top))

    return forward


def _nan_to_num_complex(x, nan=0.0, posinf=None, neginf=None):
    real = np.real(x)
    return np.where(np.isfinite(real), x, _nan_to_num_forward(real, nan, posinf, neginf))


def _fmod_forward(a: Array, b: Array) -> Array:
    check_integer_divisor(a, b)  # PyTorch's ZeroDivisionError, not NumPy's 0
    return np.fmod(a, b)


def _fmod_name(node: Node) -> str:
    # PyTorch: FmodBackward0 with a number as divisor, FmodBackward1 with a tensor.
    return "FmodBackward1" if hasattr(node.inputs[1], "shape") else "FmodBackward0"


_POSITIVE = ((0.5, 2.0), (0.5, 2.0))

register(
    floating_unary("asinh", "AsinhBackward0", np.arcsinh, _asinh_vjp,
                   "d asinh(a)/da = 1/sqrt(a²+1)", aliases=("arcsinh",)),
    floating_unary("acosh", "AcoshBackward0", np.arccosh, _acosh_vjp,
                   "d acosh(a)/da = 1/sqrt(a²-1)", domain=(1.2, 3.0), aliases=("arccosh",)),
    floating_unary("atanh", "AtanhBackward0", np.arctanh, _atanh_vjp, "d atanh(a)/da = 1/(1-a²)",
                   domain=(-0.8, 0.8), aliases=("arctanh",)),
    floating_unary("exp2", "Exp2Backward0", np.exp2, _exp2_vjp,
                   "d 2**a/da = 2**a·log(2)", saves=OUTPUT),
    floating_unary("logit", "LogitBackward0", _logit_forward, _logit_vjp,
                   "d logit(a)/da = 1/(a(1-a)) (0 where eps clamps a)", domain=(0.1, 0.9),
                   kink=True,  # where eps clamps
                   cases=(Case(((3,),)), Case(((2, 3),)), Case(((2, 3),), {"eps": 0.25})),
                   special=(special([0.0, 0.5, 1.0], at_kink=True),
                   special([0.05, 0.5, 0.95], eps=0.1))),
    unary("frac", "FracBackward0", _frac, _identity_vjp, "d frac(a)/da = 1", saves=NOTHING,
          kink=True, jumps=True),
    unary("nan_to_num", "NanToNumBackward0", _nan_to_num_forward, _nan_to_num_vjp,
          "d nan_to_num(a)/da = 1 where a is finite, else 0", language=False,
          complex_forward=_nan_to_num_complex,
          special=(special([np.nan, np.inf, -np.inf, 1.5], at_kink=True),
                   special([np.nan, np.inf, 2.0], nan=1.0, posinf=5.0, neginf=-5.0,
                           at_kink=True))),
    floating_binary("atan2", "Atan2Backward0", np.arctan2, _atan2_vjp,
                    "d atan2(a,b)/da = b/(a²+b²), /db = -a/(a²+b²)", language=True,
                    aliases=("arctan2",), doc="the angle of the point (b, a), in (-π, π]",
                    complex_forward=_atan2_complex,
                    special=(special([0.0, 1.0, 0.0], [0.0, 0.0, -1.0], at_kink=True),)),
    floating_binary("hypot", "HypotBackward0", np.hypot, _hypot_vjp,
                    "d hypot(a,b)/da = a/hypot(a,b)", saves=INPUTS_AND_OUTPUT, language=True,
                    doc="sqrt(a² + b²) without overflow", complex_forward=_hypot_complex),
    floating_binary("logaddexp", "LogaddexpBackward0", np.logaddexp, _logaddexp_vjp,
                    "d logaddexp(a,b)/da = 1/(1+exp(b-a))", language=True,
                    doc="log(exp(a) + exp(b)) without overflow",
                    complex_forward=_logaddexp_complex(np.exp, np.log),
                    special=(special([np.inf, -np.inf, 800.0], [1.0, 2.0, 800.0], at_kink=True),)),
    floating_binary("logaddexp2", "Logaddexp2Backward0", np.logaddexp2, _logaddexp2_vjp,
                    "d logaddexp2(a,b)/da = 1/(1+2**(b-a))",
                    doc="log2(2**a + 2**b) without overflow",
                    complex_forward=_logaddexp_complex(np.exp2, np.log2)),
    floating_binary("xlogy", "XlogyBackward0", _xlogy_forward, _xlogy_vjp,
                    "d x·log(y)/dx = log(y) (0 where x = 0), /dy = x/y",
                    domain=((-2.0, 2.0), (0.5, 2.0)),
                    doc="x·log(y), 0 where x = 0 (unless y is nan)",
                    special=(special([0.0, 0.0, 1.5], [0.0, 2.0, 0.5], at_kink=True),)),
    Op("fmod", _fmod_name, _fmod_forward, _fmod_vjp, broadcast_shape, arity=2, family=BINARY,
       explain="d fmod(a,b)/da = 1, /db = -trunc(a/b)", kink=True, jumps=True, domain=_POSITIVE,
       cases=BINARY_CASES, doc="the remainder of a/b with the sign of a (C's fmod)"),
    # Reached through clip/clamp/clamp_min/clamp_max with a tensor bound (`functions.clip`);
    # with number bounds they are `clip`, whose bounds are parameters, not operands.
    Op("clamp_tensor", _clamp_name, _clamp_forward, _clamp_vjp, broadcast_shape, arity=-1,
       explain="d clamp(a, lo, hi)/da = 1 where lo <= a <= hi; /dlo = 1 where a < lo; "
       "/dhi = 1 where a > hi (or hi < lo)", kink=True, needs_mask=True, public=False,
       method=False, domain=((-2.0, 2.0), (-1.5, 0.0), (0.0, 1.5)),
       cases=(Case(((2, 3), (2, 3), (2, 3))), Case(((2, 3), (3,), ())),
              Case(((1, 3), (2, 1), (2, 3))), Case(((3,), (3,)), {"bounds": "min"}),
              Case(((2, 3), ()), {"bounds": "min", "name": "clamp_min"}),
              Case(((3,), (2, 3)), {"bounds": "max", "name": "clamp_max"})),
       special=(special([0.5, -1.0, 2.0, 0.3], [0.5, 0.0, 0.0, 0.8], [1.0, 1.0, 1.0, 0.2],
                        at_kink=True),)),
)  # fmt: skip
