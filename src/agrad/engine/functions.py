"""The public functions (agrad.exp, agrad.sum, ...), all of them reaching the op table.

Most are generated from the table's entries (`public`); the functions here are the
custom entries' (``pow`` picks one of three ops, ``max`` returns indices) and the
composites of several ops (``square``, ``dot``, ``outer``). Names follow NumPy and
PyTorch both: ``dim``/``axis``, ``keepdim``/``keepdims``. This module is the whole
namespace: it ends by generating the rest and re-exporting the shape functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AgradDtypeError, AgradShapeError, AgradValueError
from . import (  # noqa: F401 - they register their functions
    arranging,
    composites,
    linalg_public,
    nn_public,
    numeric,
    shaping,
    statistics,
)
from . import public as _public
from .args import (  # noqa: F401
    SCALAR,
    as_tensor,
    astype,
    axis_of,
    first,
    floated,
    keep_of,
    number,
    operand,
    pair,
    promoted,
    reduced_axes,
)
from .escapes import read_values
from .numeric import clamp_tensor
from .ops import TABLE, apply
from .public import API, public
from .return_types import RESULTS
from .shaping import index, setitem  # noqa: F401 - Tensor indexing (not agrad.* names)
from .tensor import Tensor, _autograd_error, wrap

_F64 = np.dtype(np.float64)  # (an identity test first: the common dtype)
OP = TABLE  # short alias used below: OP["mul"]
NEGATIVE_POWER = "Integers to negative integer powers are not allowed."  # (PyTorch's words)

# ---- elementwise ------------------------------------------------------------------------


def _scaled(name: str):
    op, boolean = OP[name], name == "sub"  # (PyTorch refuses a bool in a subtraction)

    def fn(a: Any, b: Any, *, alpha: Any = 1) -> Tensor:
        if alpha != 1:  # PyTorch's alpha: a + alpha * b
            b = mul(b, alpha) if isinstance(b, Tensor) else b * alpha
        if type(a) is Tensor:  # the common cases skip the promotion rules
            kind = type(b)
            if (
                (kind is float and (a._array.dtype is _F64 or a._array.dtype.kind in "fc"))
                or kind is int
                or (kind is Tensor and b._array.dtype == a._array.dtype)
            ) and not (boolean and a._array.dtype.kind == "b"):
                return apply(op, a, b)
        if boolean:
            _no_bool_subtraction(a, b)
        return apply(op, *pair(a, b))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting, ``b`` scaled by ``alpha`` first."
    return public()(fn)


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_)) or getattr(value, "dtype", None) == np.bool_


def _no_bool_subtraction(a: Any, b: Any) -> None:
    """PyTorch's refusal of ``a - b`` with a bool operand (a tensor or a Python bool)."""
    if _is_bool(a) and _is_bool(b):
        raise AgradDtypeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(a) or _is_bool(b):
        raise AgradDtypeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


add, sub = _scaled("add"), _scaled("sub")


def mul(a: Any, b: Any) -> Tensor:
    return API["mul"](a, b)  # generated (binary family); named here for the composites


@public()
def pow(a: Any, b: Any) -> Tensor:  # noqa: A001 - PyTorch's name
    """``a ** b``: a scalar exponent, a scalar base, or two tensors (three ops)."""
    kind = type(b)
    if (kind is int or kind is float) and type(a) is Tensor:  # (x ** 2: no ABC check)
        if a._array.dtype.kind in "biu":
            if kind is int:
                return _integer_power(a, b)
            a = floated(a)  # int ** 2.5: the default float dtype
        return apply(OP["pow_scalar"], a, exponent=b)
    if isinstance(b, SCALAR):
        if isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_)):
            return _integer_power(first(a), int(b))
        x = first(a)
        if isinstance(b, (float, np.floating)) and not isinstance(b, (bool, np.bool_)):
            x = floated(x)
        return apply(OP["pow_scalar"], x, exponent=b.item() if isinstance(b, np.generic) else b)
    if isinstance(a, SCALAR):
        x = first(b)
        if isinstance(a, (float, np.floating)):
            x = floated(x)  # 2.5 ** int: the default float dtype
        return apply(OP["rpow"], x, base=a.item() if isinstance(a, np.generic) else a)
    return apply(OP["pow"], *pair(a, b))


def _integer_power(a: Tensor, b: int) -> Tensor:
    """``a ** b`` for an integer ``b``, as PyTorch's: refused for an integer or bool ``a`` and
    a negative ``b``; a bool ``a`` computes in int64 (NumPy's bool ** 2 is int8)."""
    if b < 0 and a._array.dtype.kind in "biu":
        raise AgradDtypeError(NEGATIVE_POWER)
    if a._array.dtype.kind == "b":
        a = astype(a, np.int64)
    return apply(OP["pow_scalar"], a, exponent=b)


@public()
def rsub(a: Any, b: Any) -> Tensor:
    """``b - a``: for a Python scalar ``b`` PyTorch's RsubBackward1; for a tensor ``b``,
    whose gradient must flow, a subtraction (SubBackward0 where PyTorch has RsubBackward0)."""
    x = first(a)
    if type(b) is bool or isinstance(b, np.bool_) or x._array.dtype.kind == "b":
        _no_bool_subtraction(x, b)
    if isinstance(b, Tensor):
        return sub(b, x)
    if x._array.dtype.kind not in "fc":  # 1.5 - int: the default float dtype
        x = pair(x, b)[0]
    return apply(OP["rsub"], x, other=b)


def rdiv(a: Any, b: Any) -> Tensor:
    """``b / a`` for a scalar ``b``: reciprocal then multiply, as PyTorch records it."""
    return apply(OP["mul"], apply(OP["reciprocal"], floated(a)), b)


@public(method=True)
def square(x: Any) -> Tensor:
    return apply(OP["pow_scalar"], first(x), exponent=2.0)


@public()
def where(cond: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``cond`` holds, else ``b``, in their PyTorch result type."""
    if type(a) is not Tensor or type(b) is not Tensor or a._array.dtype != b._array.dtype:
        a, b = promoted(a, b)
    return apply(OP["where"], first(cond), a, b)


@public()
def clip(x: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """``x`` limited to [min, max] (either may be None, not both)."""
    if min is None and max is None:
        raise AgradValueError("clip: give at least one of min and max")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return clamp_tensor(x, min, max)
    return apply(OP["clip"], first(x), min=min, max=max)


@public()
def equal(a: Any, b: Any) -> bool:
    """True when both have the same shape and elements (torch.equal: a Python bool)."""
    a, b = first(a), first(b)
    return a.shape == b.shape and bool(np.array_equal(a._array, b._array))


# ---- reductions -------------------------------------------------------------------------


@public()
def mean(
    x: Any,
    dim: Any = None,
    keepdim: Any = None,
    *,
    axis: Any = None,
    keepdims: Any = None,
    dtype: Any = None,
) -> Tensor:
    """Mean over ``dim``/``axis`` (all by default); PyTorch will not guess a float dtype."""
    x = first(x) if dtype is None else astype(x, dtype)
    if x.dtype.kind not in "fc":
        raise _autograd_error(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {x.dtype.name}"
        )
    return apply(OP["mean"], x, axis=reduced_axes(dim, axis), keepdims=keep_of(keepdim, keepdims))


def _spread(name: str, what: str):
    op = OP[name]

    def fn(
        x: Any,
        dim: Any = None,
        *flags: Any,
        keepdim: Any = None,
        axis: Any = None,
        keepdims: Any = None,
        correction: int = 1,
        unbiased: bool | None = None,
    ) -> Tensor:
        # PyTorch's positional forms: (input, unbiased) and (input, dim, unbiased, keepdim);
        # keepdim is otherwise a keyword (std(x, 1, False) is the population std)
        if isinstance(dim, bool) and not flags:
            dim, unbiased = None, dim
        elif flags:
            if len(flags) > 2 or not isinstance(flags[0], (bool, np.bool_)):
                raise TypeError(
                    f"{name}() received an invalid combination of arguments: after dim come "
                    "unbiased (a bool) and keepdim, as in PyTorch's "
                    f"{name}(input, dim, unbiased, keepdim)"
                )
            unbiased = bool(flags[0])
            if len(flags) == 2:
                keepdim = flags[1]
        c = correction if unbiased is None else int(unbiased)
        return apply(op, first(x), axis=reduced_axes(dim, axis),
                     keepdims=keep_of(keepdim, keepdims), correction=c)  # fmt: skip

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} over ``dim``/``axis``, divided by n - correction (1, as PyTorch)."
    return public()(fn)


var, std = _spread("var", "Variance"), _spread("std", "Standard deviation")


def _extreme(name: str, pair_op: str, pick: Any, elementwise: str):
    def fn(
        x: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None
    ) -> Any:
        if isinstance(dim, Tensor):
            return API[elementwise](x, dim)  # max(a, b): the elementwise maximum
        ax, keep = axis_of(dim, axis), keep_of(keepdim, keepdims)
        x = first(x)
        if ax is None or dim is None:  # all axes, or the language's max(x, axis=0)
            return apply(OP["a" + name], x, axis=ax, keepdims=keep)
        read_values(x)  # the indices returned are a constant of the graph
        indices = pick(x._array, axis=ax, keepdims=keep).astype(np.int64)
        values = apply(OP[pair_op], x, axis=ax, keepdims=keep, indices=indices)
        return RESULTS[name](values, wrap(indices))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {name} of all elements, or (values, indices) along ``dim``."
    return public()(fn)


max = _extreme("max", "max_dim", np.argmax, "maximum")  # noqa: A001
min = _extreme("min", "min_dim", np.argmin, "minimum")  # noqa: A001


@public()
def norm(
    x: Any,
    p: Any = 2,
    dim: Any = None,
    keepdim: Any = None,
    *,
    ord: Any = None,
    axis: Any = None,
    keepdims: Any = None,
) -> Tensor:
    """Vector p-norm (2 by default; 1, inf and any p > 0) over ``dim``/``axis``."""
    given = number(p if ord is None else ord, "norm", "p" if ord is None else "ord")
    if given == "fro":  # PyTorch's Frobenius norm: the 2-norm of all the elements given
        given = 2
    if isinstance(given, str):
        raise AgradValueError(
            f"norm: p={given!r} is not supported; give a number (1, 2, inf, ...) or 'fro' "
            "(agrad has no nuclear norm)"
        )
    order = float(given)
    if not order > 0:
        raise AgradValueError(f"norm: ord must be positive (1, 2, inf, ...), got {order}")
    return apply(OP["norm"], first(x), ord=order, axis=reduced_axes(dim, axis),
                 keepdims=keep_of(keepdim, keepdims))  # fmt: skip


# ---- linear algebra ---------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Tensor:
    return API["matmul"](a, b)  # generated (binary family); named here for the composites


@public(method=True)
def dot(a: Any, b: Any) -> Tensor:
    a, b = first(a), first(b)
    if a.ndim != 1 or b.ndim != 1:
        raise AgradShapeError(
            f"dot: expects two 1-D tensors, got shapes {a.shape} and {b.shape}; "
            "use matmul for matrices",
            torch=f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors",
        )
    return matmul(a, b)


@public(method=True)
def mm(a: Any, b: Any) -> Tensor:
    a, b = first(a), first(b)
    if a.ndim != 2 or b.ndim != 2:
        raise AgradShapeError(f"mm: expects two 2-D tensors, got shapes {a.shape} and {b.shape}")
    return matmul(a, b)


@public(method=True)
def mv(a: Any, b: Any) -> Tensor:
    return matmul(a, b)


@public(method=True)
def outer(a: Any, b: Any) -> Tensor:
    """Outer product of two 1-D tensors, recorded as PyTorch does (a view times b)."""
    a, b = first(a), first(b)
    if a.ndim != 1 or b.ndim != 1:
        raise AgradShapeError(f"outer: expects two 1-D tensors, got shapes {a.shape} and {b.shape}")
    return mul(shaping.reshape(a, (-1, 1)), b)


# ---- the rest: generated from the table, and the shape functions ---------------------------

_public.generate()
globals().update(API)  # agrad.exp, ...; also agrad.reshape & co. from `shaping`

if TYPE_CHECKING:  # for type checkers: the names generate() made

    def __getattr__(name: str) -> Any: ...


PUBLIC = tuple(API)  # what `agrad` re-exports
__all__ = list(PUBLIC)
