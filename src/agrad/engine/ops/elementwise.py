"""Elementwise ops: unary functions, arithmetic with broadcasting, comparisons.

Each VJP returns gradients in the output's shape; the backward loop sums them
back to each input's shape. ``ns`` is the array namespace (see `kernels`).
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from .core import Case, Op, broadcast_shape, raw, register, same_shape

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
    return (g * ns.sign(x),)


def _sign_vjp(ns, g, out, x, **_):
    return (g * 0.0,)


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
    return (g * (1.0 - out * out),)


def _sigmoid_vjp(ns, g, out, x, **_):
    return (g * out * (1.0 - out),)


def _relu_vjp(ns, g, out, x, **_):
    return (g * (x > 0),)  # PyTorch: zero gradient at 0


def _softplus_vjp(ns, g, out, x, beta=1.0, threshold=20.0):
    bx = x * beta
    return (ns.where(bx > threshold, g, g * ns.sigmoid(bx)),)


def _reciprocal_vjp(ns, g, out, x, **_):
    return (-g * out * out,)


def _identity_vjp(ns, g, out, x, **_):
    return (g,)


def _clip_vjp(ns, g, out, x, lo=None, hi=None):
    # PyTorch's clamp passes the gradient where lo <= x <= hi (boundaries included).
    keep = np.ones(np.shape(x), dtype=bool)
    data = raw(x)
    if lo is not None:
        keep &= data >= lo
    if hi is not None:
        keep &= data <= hi
    return (g * keep,)


def _clip_forward(x, lo=None, hi=None):
    if lo is None and hi is None:
        return np.array(x, copy=True)
    return np.clip(x, lo, hi)


def _pow_scalar_vjp(ns, g, out, x, exponent):
    if exponent == 0:
        return (g * 0.0,)
    return (g * (exponent * x ** (exponent - 1)),)


def _pow_scalar_forward(x, exponent):
    return x**exponent  # the operator takes NumPy's fast paths for 2, 0.5, -1


def _rpow_vjp(ns, g, out, x, base):
    if base == 0:  # PyTorch: zero where the exponent is >= 0 (0**x is flat there)
        return (g * np.where(raw(x) >= 0, 0.0, -np.inf),)
    return (g * out * np.log(base),)


def _rsub_vjp(ns, g, out, x, other):
    return (-g,)


def _rpow_forward(x, base):
    return np.power(base, x)


def _rsub_forward(x, other):
    return np.subtract(other, x)


def _relu(x):
    return np.maximum(x, 0.0).astype(np.result_type(x), copy=False)


UNARY_CASES = (Case(((),)), Case(((3,),)), Case(((2, 3),)))

register(
    Op("neg", "NegBackward0", np.negative, _neg_vjp, same_shape, saves=False),
    Op("exp", "ExpBackward0", np.exp, _exp_vjp, same_shape, reads_inputs=False, reads_output=True),
    Op("log", "LogBackward0", np.log, _log_vjp, same_shape, domain=(0.2, 3.0)),
    Op("log1p", "Log1PBackward0", np.log1p, _log1p_vjp, same_shape, domain=(-0.5, 2.0)),
    Op("expm1", "Expm1Backward0", np.expm1, _expm1_vjp, same_shape, reads_inputs=False,
       reads_output=True),
    Op("sqrt", "SqrtBackward0", np.sqrt, _sqrt_vjp, same_shape, reads_inputs=False,
       domain=(0.2, 3.0), reads_output=True),
    Op("abs", "AbsBackward0", np.abs, _abs_vjp, same_shape, kink=True),
    Op("sign", "SignBackward0", np.sign, _sign_vjp, same_shape, saves=False, kink=True),
    Op("sin", "SinBackward0", np.sin, _sin_vjp, same_shape),
    Op("cos", "CosBackward0", np.cos, _cos_vjp, same_shape),
    Op("tan", "TanBackward0", np.tan, _tan_vjp, same_shape, reads_inputs=False,
       domain=(-1.2, 1.2), reads_output=True),
    Op("arcsin", "AsinBackward0", np.arcsin, _arcsin_vjp, same_shape, domain=(-0.9, 0.9)),
    Op("arccos", "AcosBackward0", np.arccos, _arccos_vjp, same_shape, domain=(-0.9, 0.9)),
    Op("arctan", "AtanBackward0", np.arctan, _arctan_vjp, same_shape),
    Op("sinh", "SinhBackward0", np.sinh, _sinh_vjp, same_shape),
    Op("cosh", "CoshBackward0", np.cosh, _cosh_vjp, same_shape),
    Op("tanh", "TanhBackward0", np.tanh, _tanh_vjp, same_shape, reads_inputs=False,
       reads_output=True),
    Op("sigmoid", "SigmoidBackward0", kernels.sigmoid, _sigmoid_vjp, same_shape,
       reads_inputs=False, reads_output=True, complex_forward=kernels.sigmoid_complex),
    Op("relu", "ReluBackward0", _relu, _relu_vjp, same_shape, kink=True),
    Op("softplus", "SoftplusBackward0", kernels.softplus, _softplus_vjp, same_shape,
       complex_forward=kernels.softplus_complex,
       cases=UNARY_CASES + (Case(((2, 3),), {"beta": 2.0, "threshold": 3.0}),)),
    Op("reciprocal", "ReciprocalBackward0", np.reciprocal, _reciprocal_vjp, same_shape,
       reads_inputs=False, domain=(0.5, 2.0), reads_output=True),
    Op("clone", "CloneBackward0", np.copy, _identity_vjp, same_shape, saves=False),
    Op("clip", "ClampBackward1", _clip_forward, _clip_vjp, same_shape, kink=True,
       cases=(Case(((2, 3),), {"lo": -0.5, "hi": 0.5}), Case(((3,),), {"lo": -0.5}),
              Case(((3,),), {"hi": 0.5}))),
    Op("pow_scalar", "PowBackward0", _pow_scalar_forward, _pow_scalar_vjp, same_shape,
       domain=(0.5, 2.0),
       cases=tuple(Case(((2, 3),), {"exponent": p}) for p in (2.0, 3.0, 0.5, -1.0, -2.5, 0.0))
       + (Case(((),), {"exponent": 2.0}),)),
    Op("rpow", "PowBackward2", _rpow_forward, _rpow_vjp, same_shape, reads_inputs=False,
       cases=(Case(((2, 3),), {"base": 2.0}), Case(((),), {"base": 0.5})), reads_output=True),
    Op("rsub", "RsubBackward1", _rsub_forward, _rsub_vjp, same_shape,
       saves=False, cases=(Case(((2, 3),), {"other": 1.0}),)),
)  # fmt: skip

# ---- binary, with broadcasting ----------------------------------------------------------


def _add_vjp(ns, g, out, a, b, **_):
    return g, g


def _sub_vjp(ns, g, out, a, b, **_):
    return g, -g


def _mul_vjp(ns, g, out, a, b, **_):
    return g * b, g * a


def _div_vjp(ns, g, out, a, b, **_):
    gb = g / b
    return gb, -gb * out


def _pow_vjp(ns, g, out, a, b, **_):
    # PyTorch masks the exponent's gradient where base == 0 and exponent >= 0.
    ga = g * (b * a ** (b - 1.0))
    base_zero = raw(a) == 0
    log_a = ns.where(base_zero & (raw(b) >= 0), 0.0, ns.log(ns.where(base_zero, 1.0, a)))
    return ga, g * out * log_a


def _tie_masks(a, b, first_wins_on):
    da, db = raw(a), raw(b)
    wins = first_wins_on(da, db)
    ties = da == db
    return wins * 1.0 + ties * 0.5, (~wins & ~ties) * 1.0 + ties * 0.5


def _maximum_vjp(ns, g, out, a, b, **_):
    # PyTorch splits the gradient evenly where a == b.
    ma, mb = _tie_masks(a, b, np.greater)
    return g * ma, g * mb


def _minimum_vjp(ns, g, out, a, b, **_):
    ma, mb = _tie_masks(a, b, np.less)
    return g * ma, g * mb


def _where_vjp(ns, g, out, cond, a, b, **_):
    c = raw(cond).astype(bool)
    return None, ns.where(c, g, 0.0), ns.where(c, 0.0, g)


def _where_forward(cond, a, b):
    return np.where(np.asarray(cond).astype(bool, copy=False), a, b)


BINARY_CASES = (
    Case(((2, 3), (2, 3))),
    Case(((2, 3), (3,))),
    Case(((1, 3), (2, 1))),
    Case(((), (2, 3))),
    Case(((3,), ())),
)
NONZERO = (-2.0, 2.0), (0.5, 2.0)

register(
    Op("add", "AddBackward0", np.add, _add_vjp, broadcast_shape, arity=2, saves=False,
       cases=BINARY_CASES),
    Op("sub", "SubBackward0", np.subtract, _sub_vjp, broadcast_shape, arity=2, saves=False,
       cases=BINARY_CASES),
    Op("mul", "MulBackward0", np.multiply, _mul_vjp, broadcast_shape, arity=2,
       cases=BINARY_CASES),
    Op("div", "DivBackward0", np.true_divide, _div_vjp, broadcast_shape, arity=2,
       domain=NONZERO, cases=BINARY_CASES, reads_output=True),
    Op("pow", "PowBackward1", np.power, _pow_vjp, broadcast_shape, arity=2,
       domain=((0.5, 2.0), (-2.0, 2.0)), cases=BINARY_CASES, reads_output=True),
    Op("maximum", "MaximumBackward0", np.maximum, _maximum_vjp, broadcast_shape, arity=2,
       kink=True, cases=BINARY_CASES),
    Op("minimum", "MinimumBackward0", np.minimum, _minimum_vjp, broadcast_shape, arity=2,
       kink=True, cases=BINARY_CASES),
    Op("where", "WhereBackward0", _where_forward, _where_vjp, broadcast_shape, arity=3,
       domain=((-1.0, 1.0), (-2.0, 2.0), (-2.0, 2.0)),
       cases=(Case(((2, 3), (2, 3), (2, 3))), Case(((2, 3), (3,), ())))),
)  # fmt: skip

# ---- comparisons: not differentiable, boolean results -----------------------------------

COMPARISONS = {
    "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}  # fmt: skip

register(
    *(
        Op(name, "", fn, None, broadcast_shape, arity=2, saves=False, cases=BINARY_CASES)
        for name, fn in COMPARISONS.items()
    )
)
