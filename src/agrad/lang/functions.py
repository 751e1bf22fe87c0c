"""The language's function table: the only namespace a program's calls resolve in.

Each entry names its parameters (for keyword arguments, arity errors and
--help), converts the language's values (float tensors, lists, booleans) to
what `agrad.engine` takes, and, where a call can allocate more than its inputs
hold, estimates the output's size so the runtime can refuse it beforehand.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine import creation as C
from ..engine import functions as F
from ..engine.dtypes import get_default_dtype
from ..engine.ops.core import broadcast_shape
from ..engine.ops.linalg import matmul_shape
from ..engine.tensor import Tensor
from ..errors import AgradValueError


class LangList(list):
    """A bracket literal before it is needed: a list argument or a tensor literal."""


def to_tensor(value: Any, where: str = "", keep_bool: bool = False) -> Tensor:
    """A language value as a tensor; list literals stack (differentiably) their elements.

    A comparison's result is a boolean mask: it indexes as a mask (``x[x > 0]``) and,
    anywhere else, counts as 0/1 floats of the default dtype.
    """
    if isinstance(value, LangList):
        value = _stack_literal(value, where)
    if isinstance(value, Tensor):
        if value.data.dtype == bool and not keep_bool:
            return F.astype(value, get_default_dtype())
        return value
    if isinstance(value, bool):
        return F.as_tensor(float(value))
    return F.as_tensor(value)


def _stack_literal(items: LangList, where: str) -> Tensor:
    if not items:
        return F.as_tensor(np.zeros((0,)))
    if all(isinstance(v, bool) for v in items):  # [true, false, true]: a mask
        return F.as_tensor(np.array(items, dtype=bool))
    parts = [to_tensor(v, where) for v in items]
    shapes = {p.shape for p in parts}
    if len(shapes) > 1:
        a, b = sorted(shapes, key=len)[:2]
        raise AgradValueError(
            f"tensor literal: its elements have different shapes, {a} and {b}; every row must "
            "have the same length"
        )
    if not any(p.requires_grad for p in parts):  # constants: one array, no graph
        return F.as_tensor(np.stack([p.data for p in parts]))
    return F.stack(parts)


def as_int(value: Any, fn: str, param: str) -> int:
    """A whole number from a scalar value (every literal is a float)."""
    v = to_tensor(value)
    if v.data.size != 1:
        raise AgradValueError(f"{fn}: {param} must be a number, got a tensor of shape {v.shape}")
    number = float(v.data.reshape(-1)[0])
    if not number.is_integer():
        raise AgradValueError(f"{fn}: {param} must be a whole number, got {number:g}")
    return int(number)


def as_ints(value: Any, fn: str, param: str) -> tuple[int, ...] | int:
    v = to_tensor(value)
    if v.ndim == 0:
        return as_int(v, fn, param)
    return tuple(as_int(x, fn, param) for x in v.data.reshape(-1))


def as_float(value: Any, fn: str, param: str) -> float:
    v = to_tensor(value)
    if v.data.size != 1:
        raise AgradValueError(f"{fn}: {param} must be a number, got a tensor of shape {v.shape}")
    return float(v.data.reshape(-1)[0])


def as_bool(value: Any, fn: str, param: str) -> bool:
    if isinstance(value, bool):
        return value
    return bool(as_float(value, fn, param))


def _shape_of(args: tuple) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (LangList, Tensor)) and to_tensor(args[0]).ndim:
        dims = as_ints(args[0], "shape", "shape")
        return dims if isinstance(dims, tuple) else (dims,)
    return tuple(as_int(a, "shape", "size") for a in args)


@dataclass(frozen=True)
class Function:
    """One language function: its parameters, implementation and size estimate."""

    name: str
    impl: Callable[..., Any]
    params: tuple[str, ...]
    defaults: dict[str, Any] = field(default_factory=dict)
    variadic: bool = False  # zeros(2, 3): any number of positional sizes
    size: Callable[..., int] | None = None  # elements of the result, before computing it
    doc: str = ""

    def signature(self) -> str:
        parts = [f"{p}={_show(self.defaults[p])}" if p in self.defaults else p for p in self.params]
        if self.variadic:  # zeros(2, 3) or zeros([2, 3])
            parts.append("size, ...")
        return f"{self.name}({', '.join(parts)})"


def _show(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "none", True: "true", False: "false"}[value]
    return f"{value:g}" if isinstance(value, float) else str(value)


def _t(x: Any) -> Tensor:
    return to_tensor(x)


def _axis(value: Any, fn: str) -> Any:
    return None if value is None else as_ints(value, fn, "axis")


def _reduction(name: str, engine: Callable) -> Function:
    def impl(x, axis=None, keepdims=False):
        return engine(_t(x), axis=_axis(axis, name), keepdims=as_bool(keepdims, name, "keepdims"))

    return Function(
        name,
        impl,
        ("x", "axis", "keepdims"),
        {"axis": None, "keepdims": False},
        doc=f"{name} over axis (all axes by default)",
    )


def _unary(name: str) -> Function:
    engine = getattr(F, name)
    return Function(name, lambda x: engine(_t(x)), ("x",), doc=f"elementwise {name}")


def _broadcast_size(*xs: Any) -> int:
    return math.prod(broadcast_shape(*(to_tensor(x).shape for x in xs)))


def _matmul_size(a: Any, b: Any) -> int:
    return math.prod(matmul_shape(to_tensor(a).shape, to_tensor(b).shape))


def _creation(name: str, maker: Callable) -> Function:
    def impl(*size):
        return maker(*_shape_of(size))

    return Function(
        name,
        impl,
        (),
        variadic=True,
        size=lambda *a: math.prod(_shape_of(a)),
        doc=f"a tensor of the given shape filled by {name}",
    )


def _tensor(value, requires_grad=False):
    t = to_tensor(value).detach()
    t = F.astype(t, t.dtype if t.dtype.kind == "f" else np.float64)
    return C.tensor(t.data, requires_grad=as_bool(requires_grad, "tensor", "requires_grad"))


def _clip(x, min=None, max=None):  # noqa: A002 - the language's keyword names
    lo = None if min is None else as_float(min, "clip", "min")
    hi = None if max is None else as_float(max, "clip", "max")
    return F.clip(_t(x), lo, hi)


def _elementwise_pair(name: str, engine: Callable, doc: str) -> Function:
    return Function(name, lambda a, b: engine(_t(a), _t(b)), ("a", "b"), size=_broadcast_size,
                    doc=doc)  # fmt: skip


def _spread_function(name: str, engine: Callable, doc: str) -> Function:
    def impl(x, axis=None, keepdims=False, correction=1.0):
        return engine(_t(x), axis=_axis(axis, name), keepdims=as_bool(keepdims, name, "keepdims"),
                      correction=as_int(correction, name, "correction"))  # fmt: skip

    params = ("x", "axis", "keepdims", "correction")
    return Function(name, impl, params, {"axis": None, "keepdims": False, "correction": 1.0},
                    doc=doc)  # fmt: skip


def _softmax(engine: Callable, name: str) -> Callable:
    return lambda x, axis=-1: engine(_t(x), axis=as_int(axis, name, "axis"))


def _norm(x, ord=2.0, axis=None, keepdims=False):
    return F.norm(
        _t(x),
        ord=as_float(ord, "norm", "ord"),
        axis=_axis(axis, "norm"),
        keepdims=as_bool(keepdims, "norm", "keepdims"),
    )


def _transpose(x, axes=None):
    return F.transpose(_t(x), axes=None if axes is None else as_ints(axes, "transpose", "axes"))


def _reshape(x, shape):
    dims = as_ints(shape, "reshape", "shape")
    return F.reshape(_t(x), dims if isinstance(dims, tuple) else (dims,))


def _tensors(items: Any, fn: str) -> list[Tensor]:
    if not isinstance(items, LangList):
        raise AgradValueError(f"{fn}: expects a list of tensors in brackets, e.g. {fn}([a, b])")
    return [to_tensor(v) for v in items]


def _full(shape, value):
    return C.full(_shape_of((shape,)), as_float(value, "full", "value"))


def _arange_bounds(start, stop, step) -> tuple[float, float, float]:
    lo = as_float(start, "arange", "start")
    if stop is None:  # arange(n): 0, 1, ..., n-1
        return 0.0, lo, as_float(step, "arange", "step")
    return lo, as_float(stop, "arange", "stop"), as_float(step, "arange", "step")


def _arange(start, stop=None, step=1.0):
    lo, hi, st = _arange_bounds(start, stop, step)
    if st == 0:
        raise AgradValueError("arange: step must not be zero")
    return F.as_tensor(np.arange(lo, hi, st))


def _arange_size(start, stop=None, step=1.0):
    lo, hi, st = _arange_bounds(start, stop, step)
    return max(0, math.ceil((hi - lo) / st)) if st else 0


def _linspace(start, stop, num=50):
    return C.linspace(
        as_float(start, "linspace", "start"),
        as_float(stop, "linspace", "stop"),
        as_int(num, "linspace", "num"),
    )


def _eye(n, m=None):
    return C.eye(as_int(n, "eye", "n"), None if m is None else as_int(m, "eye", "m"))


def _eye_size(n, m=None):
    rows = as_int(n, "eye", "n")
    return rows * (rows if m is None else as_int(m, "eye", "m"))


UNARY = (
    "exp", "log", "log1p", "expm1", "sqrt", "abs", "sign", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "sigmoid", "relu", "square",
    "reciprocal",
)  # fmt: skip

TABLE: dict[str, Function] = {
    f.name: f
    for f in [
        Function(
            "tensor",
            _tensor,
            ("value", "requires_grad"),
            {"requires_grad": False},
            doc="a leaf tensor; requires_grad=true makes it a variable to differentiate",
        ),
        *(_unary(n) for n in UNARY),
        Function(
            "softplus",
            lambda x, beta=1.0, threshold=20.0: F.softplus(
                _t(x),
                as_float(beta, "softplus", "beta"),
                as_float(threshold, "softplus", "threshold"),
            ),
            ("x", "beta", "threshold"),
            {"beta": 1.0, "threshold": 20.0},
            doc="log(1 + exp(beta*x))/beta, linear above threshold",
        ),
        _elementwise_pair(
            "maximum", F.maximum, "elementwise maximum (the gradient is shared at ties)"
        ),
        _elementwise_pair(
            "minimum", F.minimum, "elementwise minimum (the gradient is shared at ties)"
        ),
        Function(
            "clip",
            _clip,
            ("x", "min", "max"),
            {"min": None, "max": None},
            doc="x limited to [min, max]",
        ),
        Function(
            "where",
            lambda c, a, b: F.where(_t(c), _t(a), _t(b)),
            ("cond", "a", "b"),
            size=_broadcast_size,
            doc="a where cond is nonzero, else b",
        ),
        _reduction("sum", F.sum),
        _reduction("mean", F.mean),
        _reduction("prod", F.prod),
        _reduction("max", F.amax),
        _reduction("min", F.amin),
        _reduction("logsumexp", F.logsumexp),
        _spread_function("var", F.var, "variance over axis, divided by n - correction"),
        _spread_function("std", F.std, "standard deviation over axis, divided by n - correction"),
        Function(
            "cumsum",
            lambda x, axis=0: F.cumsum(_t(x), axis=as_int(axis, "cumsum", "axis")),
            ("x", "axis"),
            {"axis": 0.0},
            doc="cumulative sum along axis",
        ),
        Function(
            "softmax",
            _softmax(F.softmax, "softmax"),
            ("x", "axis"),
            {"axis": -1},
            doc="exp(x) normalised to sum 1 along axis",
        ),
        Function(
            "log_softmax",
            _softmax(F.log_softmax, "log_softmax"),
            ("x", "axis"),
            {"axis": -1},
            doc="log of softmax along axis",
        ),
        Function(
            "norm",
            _norm,
            ("x", "ord", "axis", "keepdims"),
            {"ord": 2.0, "axis": None, "keepdims": False},
            doc="vector p-norm (ord 2 by default) over axis",
        ),
        Function(
            "dot", lambda a, b: F.dot(_t(a), _t(b)), ("a", "b"), doc="inner product of two vectors"
        ),
        Function(
            "matmul",
            lambda a, b: F.matmul(_t(a), _t(b)),
            ("a", "b"),
            size=_matmul_size,
            doc="matrix product (also @), 1-D, 2-D or batched",
        ),
        Function(
            "outer",
            lambda a, b: F.outer(_t(a), _t(b)),
            ("a", "b"),
            size=lambda a, b: to_tensor(a).data.size * to_tensor(b).data.size,
            doc="outer product of two vectors",
        ),
        Function(
            "transpose",
            _transpose,
            ("x", "axes"),
            {"axes": None},
            doc="axes reversed, or permuted by axes",
        ),
        Function(
            "reshape",
            _reshape,
            ("x", "shape"),
            doc="the same elements in a new shape (one size may be -1)",
        ),
        Function(
            "concat",
            lambda xs, axis=0: F.concat(
                _tensors(xs, "concat"), axis=as_int(axis, "concat", "axis")
            ),
            ("tensors", "axis"),
            {"axis": 0},
            doc="tensors joined along an existing axis",
        ),
        Function(
            "stack",
            lambda xs, axis=0: F.stack(_tensors(xs, "stack"), axis=as_int(axis, "stack", "axis")),
            ("tensors", "axis"),
            {"axis": 0},
            doc="tensors joined along a new axis",
        ),
        _creation("zeros", C.zeros),
        _creation("ones", C.ones),
        _creation("randn", C.randn),
        _creation("rand", C.rand),
        Function(
            "full",
            _full,
            ("shape", "value"),
            size=lambda shape, value: math.prod(_shape_of((shape,))),
            doc="a tensor of the given shape filled with value",
        ),
        Function("eye", _eye, ("n", "m"), {"m": None}, size=_eye_size, doc="the n x m identity"),
        Function(
            "arange",
            _arange,
            ("start", "stop", "step"),
            {"stop": None, "step": 1.0},
            size=_arange_size,
            doc="start, start + step, ... below stop",
        ),
        Function(
            "linspace",
            _linspace,
            ("start", "stop", "num"),
            {"num": 50.0},
            size=lambda start, stop, num=50.0: as_int(num, "linspace", "num"),
            doc="num evenly spaced numbers from start to stop",
        ),
    ]
}

CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}
