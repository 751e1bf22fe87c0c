"""More elementwise entries PyTorch code uses: log10, log2, rsqrt, the rounding family
(ceil, round, trunc: zero gradients, as floor's), remainder (``%``), floor division
(``//``, which PyTorch does not differentiate either) and division with a rounding mode
(``div(a, b, rounding_mode='trunc' | 'floor')``: zero gradients, DivBackward2). An integer
division or remainder by zero is PyTorch's RuntimeError "ZeroDivisionError", never
NumPy's 0 and a warning."""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradValueRuntimeError
from ..kernels import Array, branch_guarded
from ..node import Node
from .core import (
    BINARY,
    BINARY_CASES,
    INPUTS,
    NOTHING,
    OUTPUT,
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
from .elementwise import _zero_vjp, floating_unary, unary

LN10, LN2 = math.log(10.0), math.log(2.0)


def _log10_vjp(ns, g, out, x, **_):
    return (g / (x * LN10),)


def _log2_vjp(ns, g, out, x, **_):
    return (g / (x * LN2),)


def _rsqrt_forward(x: Array) -> Array:
    return 1.0 / np.sqrt(x)


def _rsqrt_vjp(ns, g, out, x, **_):
    return (g * (-0.5) * out * out * out,)  # d x**-1/2 = -x**-3/2 / 2, from the output


def _round_forward(x: Array, decimals: int = 0) -> Array:
    return np.round(x, decimals)  # half to even, as PyTorch


def check_integer_divisor(a: Array, b: Array) -> None:
    """PyTorch's refusal of an integer (or boolean) division by zero."""
    if np.result_type(a, b).kind in "iub" and np.any(np.asarray(b) == 0):
        raise AgradValueRuntimeError("ZeroDivisionError")


def _floor_divide_forward(a: Array, b: Array) -> Array:
    check_integer_divisor(a, b)
    return np.floor_divide(a, b)


def _remainder_forward(a: Array, b: Array) -> Array:
    check_integer_divisor(a, b)
    return np.remainder(a, b)


def _div_rounding_forward(a: Array, b: Array, rounding_mode: str = "trunc") -> Array:
    check_integer_divisor(a, b)
    if np.result_type(a, b).kind in "iub":  # integers stay integers, rounded as asked
        q = np.floor_divide(a, b)
        if rounding_mode == "trunc":  # floor rounds a negative inexact quotient down: up by 1
            q = q + ((q < 0) & (q * b != a))
        return q
    if rounding_mode == "trunc":
        return np.trunc(np.true_divide(a, b))
    return np.floor_divide(a, b)  # (Python's floor division, as PyTorch's div_floor)


def _div_rounding_vjp(ns, g, out, a, b, **_):
    # PyTorch's zeros for both operands (zero even for a nan or inf cotangent)
    zero = ns.where(np.zeros(raw(g).shape, dtype=bool), g, 0.0)
    return zero, zero


def _remainder_vjp(ns, g, out, a, b, **_):
    # a - b·floor(a/b): d/da = 1, d/db = -floor(a/b) (PyTorch's formula).
    # (floor division, as PyTorch's: inf // 1 is nan, where floor(inf / 1) would be inf)
    return g, g * -np.floor_divide(raw(a), raw(b))


def _remainder_name(node: Node) -> str:
    # PyTorch: RemainderBackward0 with a number as divisor, RemainderBackward1 with a tensor.
    return "RemainderBackward1" if hasattr(node.inputs[1], "shape") else "RemainderBackward0"


def _round_name(node: Node) -> str:
    return "RoundBackward1" if node.params.get("decimals") else "RoundBackward0"


ROUNDING_SAMPLE = (special([-1.5, 0.5, 2.5, 0.0], at_kink=True),)

register(
    floating_unary("log10", "Log10Backward0", np.log10, _log10_vjp, "d log10(a)/da = 1/(a·ln 10)",
                   domain=(0.2, 3.0), complex_forward=branch_guarded(np.log10)),
    floating_unary("log2", "Log2Backward0", np.log2, _log2_vjp, "d log2(a)/da = 1/(a·ln 2)",
                   domain=(0.2, 3.0), complex_forward=branch_guarded(np.log2)),
    floating_unary("rsqrt", "RsqrtBackward0", _rsqrt_forward, _rsqrt_vjp,
                   "d a**(-1/2)/da = -a**(-3/2)/2", saves=OUTPUT, domain=(0.2, 3.0),
                   complex_forward=branch_guarded(_rsqrt_forward)),
    unary("ceil", "CeilBackward0", np.ceil, _zero_vjp, "d ceil(a)/da = 0 (a step function)",
          saves=NOTHING, kink=True, jumps=True, special=ROUNDING_SAMPLE),
    unary("trunc", "TruncBackward0", np.trunc, _zero_vjp, "d trunc(a)/da = 0 (a step function)",
          saves=NOTHING, kink=True, jumps=True, aliases=("fix",), special=ROUNDING_SAMPLE),
    Op("round", _round_name, _round_forward, _zero_vjp, same_shape,
       explain="d round(a)/da = 0 (a step function)", saves=NOTHING, kink=True, jumps=True,
       family=UNARY,
       language=True, special=ROUNDING_SAMPLE,
       cases=(Case(((3,),)), Case(((2, 3),), {"decimals": 1}))),
    Op("remainder", _remainder_name, _remainder_forward, _remainder_vjp, broadcast_shape, arity=2,
       family=BINARY, explain="d(a mod b)/da = 1, d(a mod b)/db = -floor(a/b)", kink=True,
       jumps=True,
       saves=Saves(inputs=None), domain=((-3.0, 3.0), (0.7, 2.0)), cases=BINARY_CASES,
       language=True, doc="a - b·floor(a/b): the remainder with the divisor's sign (Python's %)"),
    Op("floor_divide", "", _floor_divide_forward, None, broadcast_shape,
       arity=2, family=BINARY, saves=NOTHING,
       doc="floor(a/b), not differentiable (as in PyTorch)"),
    Op("div_rounding", "DivBackward2", _div_rounding_forward,
       # (its gradient reads neither operand, but PyTorch saves both: a write refuses)
       _div_rounding_vjp, broadcast_shape, arity=2, saves=INPUTS, kink=True, jumps=True,
       public=False,
       method=False, explain="d/da = d/db = 0 (a step function of a/b)",
       domain=((-3.0, 3.0), (0.7, 2.0)),
       cases=(Case(((2, 3), (2, 3)), {"rounding_mode": "trunc"}),
              Case(((2, 3), (3,)), {"rounding_mode": "floor"}),
              Case(((), (2, 3)), {"rounding_mode": "trunc"})),
       doc="a/b rounded towards zero (trunc) or down (floor)"),
)  # fmt: skip
