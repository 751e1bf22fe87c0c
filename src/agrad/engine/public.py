"""The public face of the op table: the ``agrad.*`` functions and the Tensor methods.

An entry of a generated family (unary, binary, reduction, along-axis) gets its function
made here, with PyTorch's argument names and NumPy's both; a custom entry's function is
written by hand (in `functions` or `shaping`) and registered with `@public`, as are the
composites built from several ops (``square``, ``dot``, ``view``). `generate` then adds
every entry's aliases and Tensor methods, so nothing is listed twice.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .args import as_tensor, astype, axis_of, first, floated, keep_of, pair, reduced_axes
from .ops.core import ALONG_AXIS, BINARY, CUSTOM, REDUCTION, TABLE, UNARY, Op, apply
from .promotion import matmul_dtype_error, mixed_floats
from .tensor import Tensor

_F64 = np.dtype(np.float64)  # (an identity test first: the common dtype)
API: dict[str, Callable[..., Any]] = {}  # agrad.<name>
METHODS: dict[str, Callable[..., Any]] = {}  # Tensor.<name>: the same functions


def public(*aliases: str, method: bool = False) -> Callable[[Callable], Callable]:
    """Register a hand-written public function (and ``aliases``; with ``method``, as
    Tensor methods too). A custom entry's Tensor method and aliases come from its entry."""

    def register(fn: Callable) -> Callable:
        for name in (fn.__name__, *aliases):
            API[name] = fn
            if method:
                METHODS[name] = fn
        return fn

    return register


def _unary(op: Op) -> Callable[..., Tensor]:
    params = _parameters(op)
    if params:  # softplus(x, beta=1.0, threshold=20.0): the forward's keywords, by name
        return _unary_with(op, params)
    if op.floating:

        def floating(x: Any) -> Tensor:
            if type(x) is Tensor and (x._array.dtype is _F64 or x._array.dtype.kind in "fc"):
                return apply(op, x)
            return apply(op, floated(x))  # sqrt(int): the default float dtype

        return floating

    def fn(x: Any) -> Tensor:
        return apply(op, x if isinstance(x, Tensor) else as_tensor(x))

    return fn


def _unary_with(op: Op, params: list[inspect.Parameter]) -> Callable[..., Tensor]:
    signature = inspect.Signature(
        [inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD), *params]
    )
    operand = floated if op.floating else first

    def fn(*args: Any, **kwargs: Any) -> Tensor:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        x = bound.arguments.pop("x")
        return apply(op, operand(x), **bound.arguments)

    fn.__signature__ = signature  # type: ignore[attr-defined]
    return fn


def _parameters(op: Op) -> list[inspect.Parameter]:
    """A unary entry's parameters beyond its operand, from its forward's signature."""
    if isinstance(op.forward, np.ufunc):
        return []
    return list(inspect.signature(op.forward).parameters.values())[1:]


def _binary(op: Op) -> Callable[..., Tensor]:
    if op.same_dtype:
        return _same_dtype(op)
    if op.floating:
        return _floating_binary(op)

    def fn(a: Any, b: Any) -> Tensor:
        if type(a) is Tensor:  # the common cases skip the promotion rules
            kind = type(b)
            if (
                (kind is float and (a._array.dtype is _F64 or a._array.dtype.kind in "fc"))
                or kind is int
                or (kind is Tensor and b._array.dtype == a._array.dtype)
            ):
                return apply(op, a, b)
        return apply(op, *pair(a, b))

    return fn


def _floating_binary(op: Op) -> Callable[..., Tensor]:
    """The face of a binary entry that computes in floats (``/``, atan2)."""

    def fn(a: Any, b: Any) -> Tensor:
        if type(a) is Tensor and a._array.dtype.kind in "fc":  # the common cases: no rules
            kind = type(b)
            if (
                kind is float
                or kind is int
                or (kind is Tensor and b._array.dtype == a._array.dtype)
            ):
                return apply(op, a, b)
        return apply(op, *pair(a, b, floating=True))

    return fn


def _same_dtype(op: Op) -> Callable[..., Tensor]:
    """The face of an entry whose operands must share a dtype (matmul): PyTorch's
    RuntimeError for two, no promotion."""

    def fn(a: Any, b: Any) -> Tensor:
        if type(a) is not Tensor or type(b) is not Tensor:
            a, b = first(a), first(b)
        da, db = a._array.dtype, b._array.dtype  # (mixed: PyTorch's refusal, but see mixed_floats)
        if da != db and a.ndim and b.ndim and not mixed_floats(da, db):
            raise matmul_dtype_error(da, db, (a.ndim, b.ndim))
        return apply(op, a, b)

    return fn


def _reduction(op: Op) -> Callable[..., Tensor]:
    def fn(
        x: Any,
        dim: Any = None,
        keepdim: Any = None,
        *,
        axis: Any = None,
        keepdims: Any = None,
        dtype: Any = None,
    ) -> Tensor:
        if (
            type(x) is Tensor
            and dim is None
            and axis is None
            and dtype is None
            and (keepdim is None and keepdims is None)
        ):  # x.sum(): everything reduced, without the argument rules' calls
            return apply(op, x, axis=None, keepdims=False)
        x = first(x) if dtype is None else astype(x, dtype)
        return apply(op, x, axis=reduced_axes(dim, axis), keepdims=keep_of(keepdim, keepdims))

    return fn


def _along_axis(op: Op) -> Callable[..., Tensor]:
    default = inspect.signature(op.forward).parameters["axis"].default

    def fn(x: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
        ax = axis_of(dim, axis)
        return apply(op, first(x), axis=default if ax is None else ax)

    return fn


_MAKERS = {UNARY: _unary, BINARY: _binary, REDUCTION: _reduction, ALONG_AXIS: _along_axis}
_DOCS = {
    UNARY: "Elementwise {name} (grad_fn {grad_fn}).",
    BINARY: "Elementwise {name} with broadcasting (grad_fn {grad_fn}).",
    REDUCTION: "{name} over ``dim``/``axis`` (all by default), keeping dims if asked.",
    ALONG_AXIS: "{name} along ``dim``/``axis`` (default {default}).",
}


def generate() -> None:
    """Make the generated families' functions and add every entry's aliases and methods
    (run once, after the hand-written functions registered)."""
    for op in TABLE.values():
        name = op.api_name
        if name is None:
            continue
        if op.family != CUSTOM and name not in API:
            API[name] = _made(op, name)
        fn = API.get(name)
        if fn is None:  # a custom entry's function was not written: test_op_faces says so
            continue
        for alias in op.aliases:
            API[alias] = fn
        if op.method_name is not None:
            METHODS[op.method_name] = fn
            for alias in op.aliases:
                METHODS[alias] = fn


def _made(op: Op, name: str) -> Callable[..., Tensor]:
    fn = _MAKERS[op.family](op)
    fn.__name__ = fn.__qualname__ = name
    default = ""
    if op.family == ALONG_AXIS:
        default = inspect.signature(op.forward).parameters["axis"].default
    grad_fn = op.grad_fn if isinstance(op.grad_fn, str) and op.vjp else "none"
    fn.__doc__ = op.doc or _DOCS[op.family].format(name=name, grad_fn=grad_fn, default=default)
    return fn
