"""The public functions (agrad.exp, agrad.sum, ...): argument handling, then the op table.

Names follow NumPy and PyTorch both: ``dim``/``axis``, ``keepdim``/``keepdims``.
This module is also the array namespace VJP rules use under ``create_graph=True``
(see `kernels.NAMESPACE`), so those names keep NumPy's meaning here.
"""

from __future__ import annotations

import numbers
from collections import namedtuple
from typing import Any

import numpy as np

from ..errors import AgradShapeError, AgradValueError
from .dtypes import get_default_dtype, to_dtype
from .ops import TABLE, apply
from .tensor import Tensor, _autograd_error, _to_data, wrap

# What `agrad` re-exports (agrad.exp, agrad.sum, ...).
PUBLIC = (
    "add", "sub", "mul", "div", "pow", "rsub", "square", "maximum", "minimum", "where", "clip",
    "clamp", "softplus", "neg", "negative", "exp", "log", "log1p", "expm1", "sqrt", "abs",
    "sign", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "sigmoid", "relu", "reciprocal", "clone", "lt", "le", "gt", "ge", "eq",
    "ne", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "sum", "mean", "var", "std",
    "cumsum", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "any",
    "all", "softmax", "log_softmax", "norm", "matmul", "dot", "mm", "mv", "outer", "reshape",
    "view", "flatten", "permute", "transpose", "swapaxes", "t", "expand", "broadcast_to",
    "unsqueeze", "squeeze", "concat", "cat", "concatenate", "stack", "astype", "unbind",
)  # fmt: skip
__all__ = list(PUBLIC)

OP = TABLE  # short alias used below: OP["mul"]
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])
_SCALAR = (numbers.Number, np.generic)


def as_tensor(value: Any, dtype: Any = None) -> Tensor:
    """A Tensor from a tensor, array, number or nested list (floats get the default dtype)."""
    if isinstance(value, Tensor):
        return value if dtype is None else astype(value, dtype)
    data = np.asarray(_to_data(value))
    if dtype is not None:
        data = data.astype(to_dtype(dtype), copy=False)
    elif (
        data.dtype.kind == "f"
        and data.dtype != get_default_dtype()
        and not isinstance(value, np.ndarray)
    ):
        data = data.astype(get_default_dtype())
    elif data.dtype.kind in "OUS":
        raise AgradValueError(f"cannot make a tensor from {type(value).__name__} {value!r}")
    return wrap(data)


_PASS_THROUGH = (Tensor, *_SCALAR)


def _operand(x: Any) -> Any:
    """Tensors pass through; Python/NumPy scalars stay raw (weak dtype, as PyTorch's)."""
    if isinstance(x, _PASS_THROUGH):
        return x
    return as_tensor(x)


def _first(a: Any) -> Tensor:
    return a if isinstance(a, Tensor) else as_tensor(a)


def _pair(a: Any, b: Any) -> tuple[Tensor, Any]:
    """Operands of a binary op, promoted as PyTorch does: a 0-d float tensor takes the
    dtype of a dimensioned float operand (NumPy would widen to the 0-d one's dtype)."""
    a, b = _first(a), _operand(b)
    if isinstance(b, Tensor) and a.data.dtype != b.data.dtype:
        if b.ndim == 0 and a.ndim and a.dtype.kind == b.dtype.kind == "f":
            b = astype(b, a.dtype)
        elif a.ndim == 0 and b.ndim and a.dtype.kind == b.dtype.kind == "f":
            a = astype(a, b.dtype)
    return a, b


# ---- elementwise ------------------------------------------------------------------------


def _binary(name: str):
    op = OP[name]

    scalable = name in ("add", "sub")  # PyTorch's alpha: a + alpha * b

    def fn(a: Any, b: Any, *, alpha: Any = 1) -> Tensor:
        if alpha != 1:
            if not scalable:
                raise TypeError(f"{name}() got an unexpected keyword argument 'alpha'")
            b = mul(b, alpha) if isinstance(b, Tensor) else b * alpha
        if type(a) is Tensor:  # the common cases skip the promotion rules
            kind = type(b)
            if kind is float or kind is int or (kind is Tensor and b.data.dtype == a.data.dtype):
                return apply(op, a, b)
        return apply(op, *_pair(a, b))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting (grad_fn {op.grad_fn})."
    return fn


add, sub, mul, div = (_binary(n) for n in ("add", "sub", "mul", "div"))


def pow(a: Any, b: Any) -> Tensor:  # noqa: A001 - PyTorch's name
    if isinstance(b, _SCALAR):
        return apply(OP["pow_scalar"], _first(a), exponent=b)
    if isinstance(a, _SCALAR):
        return apply(OP["rpow"], _first(b), base=a)
    return apply(OP["pow"], *_pair(a, b))


def rsub(a: Any, b: Any) -> Tensor:
    """``b - a`` for a Python scalar ``b`` (PyTorch's RsubBackward1)."""
    return apply(OP["rsub"], _first(a), other=b)


def rdiv(a: Any, b: Any) -> Tensor:
    """``b / a`` for a scalar ``b``: reciprocal then multiply, as PyTorch records it."""
    return apply(OP["mul"], apply(OP["reciprocal"], _first(a)), b)


def square(x: Any) -> Tensor:
    return apply(OP["pow_scalar"], _first(x), exponent=2.0)


def maximum(a: Any, b: Any) -> Tensor:
    return apply(OP["maximum"], *_pair(a, b))


def minimum(a: Any, b: Any) -> Tensor:
    return apply(OP["minimum"], *_pair(a, b))


def where(cond: Any, a: Any, b: Any) -> Tensor:
    return apply(OP["where"], _first(cond), _operand(a), _operand(b))


def clip(x: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    if min is None and max is None:
        raise AgradValueError("clip: give at least one of min and max")
    lo = min.item() if isinstance(min, Tensor) else min
    hi = max.item() if isinstance(max, Tensor) else max
    return apply(OP["clip"], _first(x), lo=lo, hi=hi)


clamp = clip


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return apply(OP["softplus"], _first(x), beta=beta, threshold=threshold)


def _unary(name: str):
    op = OP[name]

    def fn(x: Any) -> Tensor:
        return apply(op, x if isinstance(x, Tensor) else as_tensor(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (grad_fn {op.grad_fn})."
    return fn


neg = negative = _unary("neg")
exp, log, log1p, expm1, sqrt = (_unary(n) for n in ("exp", "log", "log1p", "expm1", "sqrt"))
abs, sign, sin, cos, tan = (_unary(n) for n in ("abs", "sign", "sin", "cos", "tan"))  # noqa: A001
arcsin, arccos, arctan = (_unary(n) for n in ("arcsin", "arccos", "arctan"))
asin, acos, atan = arcsin, arccos, arctan
sinh, cosh, tanh, sigmoid, relu = (_unary(n) for n in ("sinh", "cosh", "tanh", "sigmoid", "relu"))
reciprocal, clone = _unary("reciprocal"), _unary("clone")


def _compare(name: str):
    op = OP[name]

    def fn(a: Any, b: Any) -> Tensor:
        return apply(op, _first(a), _operand(b))

    fn.__name__ = fn.__qualname__ = name
    return fn


lt, le, gt, ge, eq, ne = (_compare(n) for n in ("lt", "le", "gt", "ge", "eq", "ne"))
less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne


def equal(a: Any, b: Any) -> bool:
    """True when both have the same shape and elements (torch.equal: a Python bool)."""
    a, b = _first(a), _first(b)
    return a.shape == b.shape and bool(np.array_equal(a.data, b.data))


logical_and, logical_or, logical_xor = (
    _compare(n) for n in ("logical_and", "logical_or", "logical_xor")
)


def logical_not(x: Any) -> Tensor:
    return wrap(np.logical_not(_first(x).data))


# ---- reductions -------------------------------------------------------------------------


def _axis(dim: Any, axis: Any) -> Any:
    value = axis if dim is None else dim
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, Tensor):
        value = int(value.item())
    if isinstance(value, float):
        value = int(value)
    return value


def _keep(keepdim: Any, keepdims: Any) -> bool:
    return bool(keepdims if keepdim is None else keepdim)


def _reduce(name: str, float_only: bool = False):
    op = OP[name]

    def fn(
        x: Any,
        dim: Any = None,
        keepdim: Any = None,
        *,
        axis: Any = None,
        keepdims: Any = None,
        dtype: Any = None,
    ) -> Tensor:
        x = _first(x)
        if dtype is not None:
            x = astype(x, dtype)
        elif float_only and x.dtype.kind not in "fc":  # PyTorch will not guess a float dtype
            raise _autograd_error(
                f"{name}(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {x.dtype.name}"
            )
        return apply(op, x, axis=_axis(dim, axis), keepdims=_keep(keepdim, keepdims))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} over ``dim``/``axis`` (all by default), keeping dims if asked."
    return fn


sum = _reduce("sum")  # noqa: A001
prod, amax, amin, logsumexp = (_reduce(n) for n in ("prod", "amax", "amin", "logsumexp"))
mean = _reduce("mean", float_only=True)


def _spread(name: str, what: str):
    op = OP[name]

    def fn(
        x: Any,
        dim: Any = None,
        keepdim: Any = None,
        *,
        axis: Any = None,
        keepdims: Any = None,
        correction: int = 1,
        unbiased: bool | None = None,
    ) -> Tensor:
        c = correction if unbiased is None else int(unbiased)
        return apply(op, _first(x), axis=_axis(dim, axis), keepdims=_keep(keepdim, keepdims),
                     correction=c)  # fmt: skip

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} over ``dim``/``axis``, divided by n - correction (1, as PyTorch)."
    return fn


var, std = _spread("var", "Variance"), _spread("std", "Standard deviation")


def cumsum(x: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    """Cumulative sum along ``dim``/``axis`` (PyTorch requires one; NumPy's default is 0 here)."""
    ax = _axis(dim, axis)
    return apply(OP["cumsum"], _first(x), axis=0 if ax is None else ax)


def _extreme(name: str, pair_op: str, pick: Any, elementwise: Any):
    def fn(
        x: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None
    ) -> Any:
        if isinstance(dim, Tensor):
            return elementwise(x, dim)  # max(a, b): the elementwise maximum
        ax, keep = _axis(dim, axis), _keep(keepdim, keepdims)
        x = _first(x)
        if ax is None:
            return apply(OP["a" + name], x, axis=None, keepdims=keep)
        if dim is None:  # the language's max(x, axis=0): a plain reduction
            return apply(OP["a" + name], x, axis=ax, keepdims=keep)
        values = apply(OP[pair_op], x, axis=ax, keepdims=keep)
        indices = wrap(pick(x.data, axis=ax, keepdims=keep).astype(np.int64))
        return ValuesIndices(values, indices)

    fn.__name__ = fn.__qualname__ = name
    return fn


max = _extreme("max", "max_dim", np.argmax, maximum)  # noqa: A001
min = _extreme("min", "min_dim", np.argmin, minimum)  # noqa: A001


def any(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether any element is nonzero (over ``dim``): a boolean tensor, no gradient."""
    return wrap(np.asarray(np.any(_first(x).data, axis=dim, keepdims=keepdim)))


def all(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether every element is nonzero (over ``dim``): a boolean tensor, no gradient."""
    return wrap(np.asarray(np.all(_first(x).data, axis=dim, keepdims=keepdim)))


def argmax(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return wrap(np.asarray(np.argmax(_first(x).data, axis=dim, keepdims=keepdim)))


def argmin(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return wrap(np.asarray(np.argmin(_first(x).data, axis=dim, keepdims=keepdim)))


def softmax(x: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    ax = _axis(dim, axis)
    return apply(OP["softmax"], _first(x), axis=-1 if ax is None else ax)


def log_softmax(x: Any, dim: Any = None, *, axis: Any = None) -> Tensor:
    ax = _axis(dim, axis)
    return apply(OP["log_softmax"], _first(x), axis=-1 if ax is None else ax)


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
    order = float(p if ord is None else ord)
    if not order > 0:
        raise AgradValueError(f"norm: ord must be positive (1, 2, inf, ...), got {order}")
    return apply(
        OP["norm"], _first(x), ord=order, axis=_axis(dim, axis), keepdims=_keep(keepdim, keepdims)
    )


# ---- linear algebra ---------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Tensor:
    return apply(OP["matmul"], _first(a), _first(b))


def dot(a: Any, b: Any) -> Tensor:
    a, b = _first(a), _first(b)
    if a.ndim != 1 or b.ndim != 1:
        raise AgradShapeError(
            f"dot: expects two 1-D tensors, got shapes {a.shape} and {b.shape}; "
            "use matmul for matrices"
        )
    return matmul(a, b)


def mm(a: Any, b: Any) -> Tensor:
    a, b = _first(a), _first(b)
    if a.ndim != 2 or b.ndim != 2:
        raise AgradShapeError(f"mm: expects two 2-D tensors, got shapes {a.shape} and {b.shape}")
    return matmul(a, b)


def mv(a: Any, b: Any) -> Tensor:
    return matmul(a, b)


def outer(a: Any, b: Any) -> Tensor:
    """Outer product of two 1-D tensors, recorded as PyTorch does (a view times b)."""
    a, b = _first(a), _first(b)
    if a.ndim != 1 or b.ndim != 1:
        raise AgradShapeError(f"outer: expects two 1-D tensors, got shapes {a.shape} and {b.shape}")
    return mul(reshape(a, (-1, 1)), b)


# Shape functions live in `shaping`; re-exported here (agrad.reshape, and the VJP namespace).
from .shaping import (  # noqa: E402, F401 - re-exports
    _shape_args,
    astype,
    broadcast_to,
    cat,
    concat,
    concatenate,
    expand,
    flatten,
    index,
    index_backward,
    permute,
    reshape,
    setitem,
    squeeze,
    stack,
    sum_to,
    swapaxes,
    t,
    transpose,
    unbind,
    unsqueeze,
    view,
)  # fmt: skip
