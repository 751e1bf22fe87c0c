"""Elementwise ops: unary functions, arithmetic with broadcasting, comparisons.

Each VJP returns gradients in the output's shape; the backward loop sums them
back to each input's shape. ``ns`` is the array namespace (see `kernels`).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import kernels
from ..kernels import Array
from .core import (
    BINARY,
    BINARY_CASES,
    INPUTS_AND_OUTPUT,
    NOTHING,
    OUTPUT,
    PRODUCT,
    UNARY,
    Case,
    Op,
    Saves,
    broadcast_shape,
    raw,
    register,
    same_shape,
    special,
)

# ---- unary ------------------------------------------------------------------------------


def _neg_vjp(ns, g, out, x, **_):
    return (-g,)


def _exp_vjp(ns, g, out, x, **_):
    return (g * out,)


def _log_vjp(ns, g, out, x, **_):
    return (g / x,)


def _log1p_vjp(ns, g, out, x, **_):
    return (g / (1.0 + x),)


def _expm1_vjp(ns, g, out, x, **_):
    return (g * (out + 1.0),)


def _sqrt_vjp(ns, g, out, x, **_):
    return (g / (2.0 * out),)


def _abs_vjp(ns, g, out, x, **_):
    return (g * ns.where(np.isnan(raw(x)), 0.0, ns.sign(x)),)  # (PyTorch's sgn(nan) is 0)


def _sign(x: Array) -> Array:
    # PyTorch's sign of nan is 0 (NumPy's is nan).
    s = np.sign(x)
    return np.where(np.isnan(x), 0.0, s) if s.dtype.kind == "f" and np.isnan(s).any() else s


def _zero_vjp(ns, g, out, x, **_):
    # Zero even for a nan or inf cotangent (g * 0 would be nan there), as PyTorch's zeros.
    return (ns.where(np.zeros(raw(g).shape, dtype=bool), g, 0.0),)


def _sin_vjp(ns, g, out, x, **_):
    return (g * ns.cos(x),)


def _cos_vjp(ns, g, out, x, **_):
    return (-g * ns.sin(x),)


def _tan_vjp(ns, g, out, x, **_):
    return (g * (1.0 + out * out),)


def _arcsin_vjp(ns, g, out, x, **_):
    return (g / ns.sqrt(1.0 - x * x),)


def _arccos_vjp(ns, g, out, x, **_):
    return (-g / ns.sqrt(1.0 - x * x),)


def _arctan_vjp(ns, g, out, x, **_):
    return (g / (1.0 + x * x),)


def _sinh_vjp(ns, g, out, x, **_):
    return (g * ns.cosh(x),)


def _cosh_vjp(ns, g, out, x, **_):
    return (g * ns.sinh(x),)


def _tanh_vjp(ns, g, out, x, **_):
    # (Computing it into one buffer with out= ufuncs measured more page faults in a fresh
    # process, 1,283 against 992 an iteration of bench_dense, not less time: left as is.)
    return (g * (1.0 - out * out),)


def _sigmoid_vjp(ns, g, out, x, **_):
    return (g * out * (1.0 - out),)


def _relu_vjp(ns, g, out, x, **_):
    # From the output, as PyTorch's threshold_backward: zero where out <= 0 (so at 0), and
    # the gradient passes at a nan (nan <= 0 is false).
    # (A where, not a product: a nan or inf cotangent gives 0 where masked, as PyTorch's.)
    return (ns.where(raw(out) <= 0, 0.0, g),)


def _softplus_vjp(ns, g, out, x, beta=1.0, threshold=20.0):
    bx = x * beta
    return (ns.where(bx > threshold, g, g * ns.sigmoid(bx)),)


def _reciprocal_vjp(ns, g, out, x, **_):
    return (-g * out * out,)


def _identity_vjp(ns, g, out, x, **_):
    return (g,)


def _clip_vjp(ns, g, out, x, min=None, max=None):  # noqa: A002 - NumPy's and the language's
    # PyTorch's clamp passes the gradient where min <= x <= max (boundaries included).
    data = raw(x)
    keep = np.ones(data.shape, dtype=bool)
    if min is not None:
        keep &= data >= min
    if max is not None:
        keep &= data <= max
    return (ns.where(keep, g, 0.0),)  # (0 where clamped, even for a nan cotangent)


def _clip_forward(x: Array, min: float | None = None, max: float | None = None) -> Array:  # noqa: A002
    if min is None and max is None:
        return np.array(x, copy=True)
    return np.clip(x, min, max)


def _pow_scalar_vjp(ns, g, out, x, exponent):
    if exponent == 0:
        return (g * 0.0,)
    if exponent == 2 and isinstance(x, np.ndarray):  # (x**1 is x: one array op fewer)
        return (g * (2.0 * x),)
    p = exponent - 1
    lower = _pow_scalar_forward(x, p) if isinstance(x, np.ndarray) else x**p  # (as the forward)
    return (g * (exponent * lower),)


def _pow_scalar_forward(x, exponent):
    if exponent == -0.5:  # PyTorch's rsqrt: nan at -inf, where NumPy's power gives 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 / np.sqrt(x)
    return x**exponent  # the operator takes NumPy's fast paths for 2, 0.5, -1


def _rpow_vjp(ns, g, out, x, base):
    if base == 0:  # PyTorch: zero where the exponent is >= 0 (0**x is flat there)
        return (g * np.where(raw(x) >= 0, 0.0, np.where(np.isnan(raw(x)), np.nan, -np.inf)),)
    return (g * out * np.log(base),)


def _rsub_vjp(ns, g, out, x, other):
    return (-g,)


def _rpow_forward(x, base):
    return np.power(base, x)


def _rsub_forward(x, other):
    return np.subtract(other, x)


def _relu(x: Array) -> Array:
    return np.maximum(x, 0.0).astype(np.result_type(x), copy=False)


def unary(name: str, grad_fn: str, forward, vjp, explain: str, **facts) -> Op:
    """An entry of the unary family: ``agrad.name(x)``, ``x.name()``, ``name(x)``."""
    return Op(name, grad_fn, forward, vjp, same_shape, explain=explain, family=UNARY,
              language=facts.pop("language", True), **facts)  # fmt: skip


def binary(name: str, grad_fn: str, forward, vjp, explain: str, **facts) -> Op:
    """An entry of the binary family (broadcasting): ``agrad.name(a, b)``, ``a.name(b)``."""
    return Op(name, grad_fn, forward, vjp, broadcast_shape, explain=explain, arity=2,
              family=BINARY, **facts)  # fmt: skip


# Entries that compute in floats: an integer or bool operand gives the default float dtype
# (PyTorch's sqrt of an int64 tensor, int / int), not NumPy's float64 or float16.
floating_unary = functools.partial(unary, floating=True)
floating_binary = functools.partial(binary, floating=True)


register(
    unary("neg", "NegBackward0", np.negative, _neg_vjp, "d(-a)/da = -1", saves=NOTHING,
          aliases=("negative",), language=False),
    floating_unary("exp", "ExpBackward0", np.exp, _exp_vjp, "d exp(a)/da = exp(a)", saves=OUTPUT),
    floating_unary("log", "LogBackward0", np.log, _log_vjp, "d log(a)/da = 1/a", domain=(0.2, 3.0),
                   complex_forward=kernels.branch_guarded(np.log)),
    floating_unary("log1p", "Log1PBackward0", np.log1p, _log1p_vjp, "d log(1+a)/da = 1/(1+a)",
                   domain=(-0.5, 2.0), complex_forward=kernels.branch_guarded(np.log1p, 1.0)),
    floating_unary("expm1", "Expm1Backward0", np.expm1, _expm1_vjp, "d (exp(a)-1)/da = exp(a)",
                   saves=OUTPUT),
    floating_unary("sqrt", "SqrtBackward0", np.sqrt, _sqrt_vjp, "d sqrt(a)/da = 1/(2·sqrt(a))",
                   saves=OUTPUT, domain=(0.2, 3.0), complex_forward=kernels.complex_sqrt),
    unary("abs", "AbsBackward0", np.abs, _abs_vjp, "d |a|/da = sign(a)", kink=True,
          special=(special([-1.0, 0.0, 2.0], at_kink=True),)),
    unary("sign", "SignBackward0", _sign, _zero_vjp, "d sign(a)/da = 0", saves=NOTHING,
          aliases=("sgn",),  # PyTorch's sgn of a real tensor (its grad_fn: SgnBackward0)
          kink=True, jumps=True),
    unary("floor", "FloorBackward0", np.floor, _zero_vjp, "d floor(a)/da = 0 (a step function)",
          saves=NOTHING, kink=True, jumps=True, special=(special([-1.5, 0.0, 2.0], at_kink=True),)),
    floating_unary("sin", "SinBackward0", np.sin, _sin_vjp, "d sin(a)/da = cos(a)"),
    floating_unary("cos", "CosBackward0", np.cos, _cos_vjp, "d cos(a)/da = -sin(a)"),
    floating_unary("tan", "TanBackward0", np.tan, _tan_vjp,
                   "d tan(a)/da = 1 + tan²(a)", saves=OUTPUT, domain=(-1.2, 1.2)),
    floating_unary("arcsin", "AsinBackward0", np.arcsin, _arcsin_vjp,
                   "d arcsin(a)/da = 1/sqrt(1-a²)", domain=(-0.9, 0.9), aliases=("asin",)),
    floating_unary("arccos", "AcosBackward0", np.arccos, _arccos_vjp,
                   "d arccos(a)/da = -1/sqrt(1-a²)", domain=(-0.9, 0.9), aliases=("acos",)),
    floating_unary("arctan", "AtanBackward0", np.arctan, _arctan_vjp, "d arctan(a)/da = 1/(1+a²)",
                   aliases=("atan",)),
    floating_unary("sinh", "SinhBackward0", np.sinh, _sinh_vjp, "d sinh(a)/da = cosh(a)"),
    floating_unary("cosh", "CoshBackward0", np.cosh, _cosh_vjp, "d cosh(a)/da = sinh(a)"),
    floating_unary("tanh", "TanhBackward0", np.tanh, _tanh_vjp, "d tanh(a)/da = 1 - tanh²(a)",
                   saves=OUTPUT),
    floating_unary("sigmoid", "SigmoidBackward0", kernels.sigmoid, _sigmoid_vjp,
                   "d σ(a)/da = σ(a)·(1-σ(a))", saves=OUTPUT,
                   complex_forward=kernels.sigmoid_complex),
    unary("relu", "ReluBackward0", _relu, _relu_vjp, "d relu(a)/da = 1 where a > 0, else 0",
          saves=OUTPUT, kink=True, special=(special([-1.0, 0.0, 2.0], at_kink=True),)),
    floating_unary("reciprocal", "ReciprocalBackward0", kernels.reciprocal, _reciprocal_vjp,
                   "d(1/a)/da = -1/a²", saves=OUTPUT, domain=(0.5, 2.0)),
    unary("clone", "CloneBackward0", kernels.clone, _identity_vjp, "d a/da = 1", saves=NOTHING,
          language=False),
    floating_unary("softplus", "SoftplusBackward0", kernels.softplus, _softplus_vjp,
                   "d softplus(a)/da = σ(β·a)",
                   doc="log(1 + exp(beta*x))/beta, linear above threshold",
                   complex_forward=kernels.softplus_complex, kink=True,  # (above the threshold)
                   cases=(Case(((),)), Case(((3,),)), Case(((2, 3),)),
                          Case(((2, 3),), {"beta": 2.0, "threshold": 3.0}))),
    Op("clip", "ClampBackward1", _clip_forward, _clip_vjp, same_shape,
       explain="d clip(a)/da = 1 inside [min, max], else 0", kink=True, aliases=("clamp",),
       language=True, doc="x limited to [min, max]",
       cases=(Case(((2, 3),), {"min": -0.5, "max": 0.5}), Case(((3,),), {"min": -0.5}),
              Case(((3,),), {"max": 0.5})),
       special=(special([-0.5, 0.5, 0.2], min=-0.5, max=0.5, at_kink=True),)),
    Op("pow_scalar", "PowBackward0", _pow_scalar_forward, _pow_scalar_vjp, same_shape,
       explain="d(a**p)/da = p·a**(p-1)", public="pow", domain=(0.5, 2.0),
       complex_forward=kernels.complex_power, cases=(*(Case(((2, 3),), {"exponent": p})
           for p in (2.0, 3.0, 0.5, -1.0, -2.5, 0.0)), Case(((),), {"exponent": 2.0})),
       special=(special([0.0, 1.0, -2.0], exponent=2.0), special([0.0, 1.0], exponent=0.0),
                special([0.0, -1.0], exponent=1.0))),
    Op("rpow", "PowBackward2", _rpow_forward, _rpow_vjp, same_shape,
       explain="d(c**a)/da = c**a·log(c)", saves=INPUTS_AND_OUTPUT, public="pow",
       cases=(Case(((2, 3),), {"base": 2.0}), Case(((),), {"base": 0.5})),
       special=(special([-1.0, 0.5, 2.0], base=0.0, at_kink=True),)),
    Op("rsub", "RsubBackward1", _rsub_forward, _rsub_vjp, same_shape, explain="d(c-a)/da = -1",
       saves=NOTHING, method=False, cases=(Case(((2, 3),), {"other": 1.0}),)),
)  # fmt: skip

# ---- binary, with broadcasting ----------------------------------------------------------


def _add_vjp(ns, g, out, a, b, **_):
    return g, g


def _sub_vjp(ns, g, out, a, b, needs=(True, True), **_):
    return g, (-g if needs[1] else None)


def _mul_vjp(ns, g, out, a, b, needs=(True, True), **_):
    # (An operand that wants no gradient gets none computed: x * 1.0001, W @ ... * mask.)
    return (g * b if needs[0] else None), (g * a if needs[1] else None)


def _div_vjp(ns, g, out, a, b, **_):
    ga = g / b
    return ga, -ga * a / b  # from the inputs, as PyTorch saves them (not the output)


def _pow_forward(a: Array, b: Array) -> Array:
    out = np.power(a, b)
    if np.iscomplexobj(out):  # (the checker's complex step: holomorphic as NumPy's)
        return out
    below = np.isneginf(a)
    if np.any(below):  # C's pow (PyTorch's): (-inf)**y is +inf or +0 for y not an integer
        b = np.broadcast_to(b, np.shape(out))
        odd = np.broadcast_to(below, np.shape(out)) & (b != np.round(b)) & ~np.isnan(b)
        out = np.where(odd, np.where(b > 0, np.inf, 0.0), out)
    return out


def _power(ns, a, b):
    return _pow_forward(a, b) if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) else a**b


def _pow_vjp(ns, g, out, a, b, **_):
    # As PyTorch: 0**0 has a zero gradient for the base (not 0·0**-1 = nan), and where
    # base == 0 and exponent >= 0 the exponent gets none either.
    # (A zero exponent gives the base no gradient at all, even at a nan or inf base.)
    base_zero, zero_exponent = raw(a) == 0, raw(b) == 0
    base = ns.where(base_zero & zero_exponent, 1.0, a)
    ga = g * ns.where(zero_exponent, 0.0, b * _power(ns, base, b - 1.0))
    # At base 0 with a negative exponent, out·log(a) is inf·(-inf) = -inf, as PyTorch has it
    # (log(0) written as -inf: np.log(0) would warn, and 1.0 in its place gave inf·0 = nan).
    log_a = ns.where(
        base_zero,
        ns.where(raw(b) >= 0, 0.0, -np.inf),
        ns.log(ns.where(base_zero, 1.0, a)),
    )
    return ga, g * out * log_a


def _tie_masks(a, b, first_wins_on):
    # PyTorch's rule: each side gets the gradient unless the other wins (halved on ties), so
    # with a nan on either side (no comparison holds) both get all of it.
    da, db = raw(a), raw(b)
    share = np.where(da == db, 0.5, 1.0)
    return np.where(first_wins_on(db, da), 0.0, share), np.where(first_wins_on(da, db), 0.0, share)


def _maximum_vjp(ns, g, out, a, b, **_):
    # PyTorch splits the gradient evenly where a == b.
    ma, mb = _tie_masks(a, b, np.greater)
    return _masked(ns, g, ma), _masked(ns, g, mb)


def _minimum_vjp(ns, g, out, a, b, **_):
    ma, mb = _tie_masks(a, b, np.less)
    return _masked(ns, g, ma), _masked(ns, g, mb)


def _masked(ns, g, share):
    """g times a share of 0, ½ or 1: exactly 0 where the share is 0, for any cotangent."""
    return ns.where(share == 0, 0.0, g * share)


def _where_vjp(ns, g, out, cond, a, b, **_):
    c = raw(cond).astype(bool)
    return None, ns.where(c, g, 0.0), ns.where(c, 0.0, g)


def _where_forward(cond: Array, a: Array, b: Array) -> Array:
    return np.where(np.asarray(cond).astype(bool, copy=False), a, b)


TIES = (special([1.0, 2.0, -1.0], [1.0, 0.5, -1.0], at_kink=True),)

register(
    Op("add", "AddBackward0", np.add, _add_vjp, broadcast_shape, arity=2, saves=NOTHING,
       explain="d(a+b)/da = 1, d(a+b)/db = 1", cases=BINARY_CASES),
    Op("sub", "SubBackward0", np.subtract, _sub_vjp, broadcast_shape, arity=2, saves=NOTHING,
       explain="d(a-b)/da = 1, d(a-b)/db = -1", cases=BINARY_CASES, needs_mask=True),
    binary("mul", "MulBackward0", np.multiply, _mul_vjp, "d(a*b)/da = b, d(a*b)/db = a",
           saves=PRODUCT, needs_mask=True),
    floating_binary("div", "DivBackward0", np.true_divide, _div_vjp,
                    "d(a/b)/da = 1/b, d(a/b)/db = -a/b²",
                    domain=((-2.0, 2.0), (0.5, 2.0)), saves=Saves(None, False, for_others=(0,))),
    Op("pow", "PowBackward1", _pow_forward, _pow_vjp, broadcast_shape, arity=2,
       explain="d(a**b)/da = b·a**(b-1), d(a**b)/db = a**b·log(a)", saves=INPUTS_AND_OUTPUT,
       domain=((0.5, 2.0), (-2.0, 2.0)), cases=BINARY_CASES,
       special=(special([0.0, 0.0, 0.0, 2.0], [0.0, 1.0, 2.0, 0.0], at_kink=True),)),
    binary("maximum", "MaximumBackward0", np.maximum, _maximum_vjp,
           "d max(a,b)/da = 1 where a > b (½ on ties)", kink=True, special=TIES,
           language=True, doc="elementwise maximum (the gradient is shared at ties)"),
    binary("minimum", "MinimumBackward0", np.minimum, _minimum_vjp,
           "d min(a,b)/da = 1 where a < b (½ on ties)", kink=True, special=TIES,
           language=True, doc="elementwise minimum (the gradient is shared at ties)"),
    Op("where", "WhereBackward0", _where_forward, _where_vjp, broadcast_shape, arity=3,
       explain="d where(c,a,b)/da = c, /db = 1-c", saves=Saves(inputs=(0,)), nondiff=(0,),
       method=False, language=True, doc="a where cond is nonzero, else b",
       domain=((-1.0, 1.0), (-2.0, 2.0), (-2.0, 2.0)),
       cases=(Case(((2, 3), (2, 3), (2, 3))), Case(((2, 3), (3,), ())))),
)  # fmt: skip
