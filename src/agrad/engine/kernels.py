"""NumPy kernels: op forwards, and the array namespace VJP rules use in NumPy mode.

VJP rules are written once against a namespace ``ns``: this module when the
backward pass runs on plain arrays (fast), or `agrad.engine.graph_namespace` when
``create_graph=True`` (each call records a node, so higher derivatives work).
Both define every name in `NAMESPACE`, with NumPy's signatures (a test compares them);
any other op of the table is reached by its name too (see `namespaces`).

The annotations of forwards (`Array`, `Axis`, ``int``, ``float``, ``bool``) are the
argument kinds the language converts its values to.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from ..errors import AgradIndexError
from .shape_rules import normalize_axis

Array: TypeAlias = np.ndarray  # a tensor operand
Axis: TypeAlias = int | tuple[int, ...] | None  # one axis, several, or all of them (None)
Sizes: TypeAlias = tuple[int, ...]  # a shape given as a parameter (reshape's target)

NAMESPACE = (
    "exp", "log", "log1p", "sin", "cos", "sinh", "cosh", "sqrt", "abs", "sign", "sigmoid",
    "where", "sum", "prod", "amax", "broadcast_to", "swapaxes", "matmul", "sum_to",
    "index_backward", "astype", "permute", "cumsum",
)  # fmt: skip

exp = np.exp
log = np.log
log1p = np.log1p
sin = np.sin
cos = np.cos
sinh = np.sinh
cosh = np.cosh
sqrt = np.sqrt
abs = np.abs  # noqa: A001 - mirrors numpy's name on purpose
sign = np.sign
where = np.where
# Below this many elements a broadcast gradient is copied out rather than viewed: NumPy's
# broadcast_to costs several microseconds of Python (more than copying a small array).
SMALL_BROADCAST = 4096


def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    """``array`` broadcast to ``shape`` (NumPy's signature): a read-only view, or for a
    small result a fresh copy of the same values."""
    if type(array) is np.ndarray and type(shape) is tuple and math.prod(shape) < SMALL_BROADCAST:
        out = np.empty(shape, dtype=array.dtype)
        # (raises for shapes that do not broadcast, as broadcast_to; not np.copyto, whose
        # Python-level dispatch costs more than this copy)
        out[...] = array
        return out
    return np.broadcast_to(array, shape, subok=subok)


matmul = np.matmul


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    # (the method: np.swapaxes's Python dispatch costs more than the swap at small sizes)
    return a.swapaxes(axis1, axis2) if type(a) is np.ndarray else np.swapaxes(a, axis1, axis2)


def sum(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001 - numpy's name
    if type(x) is np.ndarray:  # (np.sum's own reduction, without its Python-level dispatch)
        return np.add.reduce(x, axis=axis, keepdims=keepdims)  # type: ignore[call-overload]
    return np.sum(x, axis=axis, keepdims=keepdims)


def prod(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
    return np.prod(x, axis=axis, keepdims=keepdims)


def amax(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
    nonempty(x, axis, "amax")
    return np.amax(x, axis=axis, keepdims=keepdims)


def amin(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
    nonempty(x, axis, "amin")
    return np.amin(x, axis=axis, keepdims=keepdims)


def nonempty(x: Any, axis: Any, op: str) -> None:
    """A reduction without an identity (max, min, argmax) over no elements is PyTorch's
    IndexError, not NumPy's ValueError."""
    if np.size(x):
        return
    shape = np.shape(x)
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    if axis is None or any(shape[a] == 0 for a in axes):
        raise AgradIndexError(
            f"{op}(): expected a reduction over a non-zero number of elements, got shape "
            f"{tuple(shape)}"
        )


def argmax(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
    nonempty(x, axis, "argmax")
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
    nonempty(x, axis, "argmin")
    return np.argmin(x, axis=axis, keepdims=keepdims)


def cumsum(x: Array, axis: int = 0) -> Array:
    if np.ndim(x) == 0:  # NumPy's is 1-d; PyTorch's cumsum of a scalar is itself
        normalize_axis(axis, 0, "cumsum")  # (it still takes only dim 0 or -1)
        return np.array(x, copy=True)
    return np.cumsum(x, axis=axis)


def astype(x: Any, dtype: Any) -> np.ndarray:
    return np.asarray(x).astype(dtype, copy=False)


def permute(x: Any, axes: tuple) -> np.ndarray:
    return np.transpose(x, axes)


def reciprocal(x: Array) -> Array:
    """1/x; of integers or bools a float array, as PyTorch's (NumPy's integer 1/2 is 0)."""
    return np.reciprocal(x) if np.result_type(x).kind in "fc" else np.divide(1.0, x)


def sigmoid(x: Array) -> Array:
    # Two branches so that neither exp overflows.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def sigmoid_complex(x: Any) -> np.ndarray:
    """The logistic function, holomorphic on complex arrays (the branch by the real part)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x.real >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))


def softplus_complex(x: Array, beta: float = 1.0, threshold: float = 20.0) -> Array:
    bx = x * beta
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(bx.real > threshold, x, np.log1p(np.exp(bx)) / beta)


def softplus(x: Array, beta: float = 1.0, threshold: float = 20.0) -> Array:
    bx = x * beta
    return np.where(bx > threshold, x, np.logaddexp(0.0, bx) / beta)


def sum_to(x: Any, shape: tuple) -> Any:
    """Sum a broadcast result back down to ``shape`` (the inverse of broadcasting)."""
    shape = tuple(shape)
    have = x.shape
    if have == shape:
        return x
    lead = len(have) - len(shape)
    # (np.add.reduce: np.sum's own reduction, without its Python-level dispatch)
    if lead == 1 and shape and have[1:] == shape:  # a bias's gradient: one axis summed
        return np.add.reduce(x, axis=0)
    inner = tuple([lead + i for i, n in enumerate(shape) if n == 1 and have[lead + i] != 1])
    if shape and not inner:  # only leading axes: the reduction gives the shape, same sums
        return np.add.reduce(x, axis=tuple(range(lead)))
    out = np.add.reduce(x, axis=tuple(range(lead)) + inner, keepdims=True)
    return out.reshape(shape) if lead else out  # (an array, also for shape ())


def logsumexp(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
    # (initial: an empty group's logsumexp is log 0 = -inf, as PyTorch's)
    m = np.amax(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else _squeeze(out, axis, x.ndim)


def softmax(x: Array, axis: int = -1) -> Array:
    e = np.exp(x - np.amax(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Array, axis: int = -1) -> Array:
    lse = logsumexp(x, axis=axis, keepdims=True)
    # A slice holding +inf is nan throughout, as its softmax is (and PyTorch's log_softmax).
    return np.where(lse == np.inf, np.nan, x - lse)


def _squeeze(out, axis, ndim):
    if axis is None:
        return out.reshape(())
    return np.squeeze(out, axis=axis)


def index_backward(g: Any, shape: tuple, index: tuple, advanced: bool = False) -> np.ndarray:
    """Scatter ``g`` into zeros of ``shape`` at ``index`` (the adjoint of indexing).

    ``shape`` may carry leading batch dimensions that ``index`` does not name.
    """
    z = np.zeros(shape, dtype=np.result_type(g))
    key = (Ellipsis, *index)
    if advanced:
        g = batch_after_advanced(g, index, len(shape) - indexed_ndim(index))
        np.add.at(z, key, g)  # repeated indices must add up
    else:
        z[key] = g
    return z


def indexed_ndim(index: tuple) -> int:
    """How many dimensions a full (normalized) index addresses."""
    return len([item for item in index if item is not None])


def separated_advanced(index: tuple) -> int:
    """The broadcast ndim of the index arrays when they are separated by a slice (NumPy
    then puts their dimensions first, ahead of any batch axes), else 0."""
    at = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    if not at or at[-1] - at[0] + 1 == len(at):
        return 0
    return np.broadcast_shapes(*(index[i].shape for i in at)).__len__()


def batch_after_advanced(g: Any, index: tuple, batch: int) -> Any:
    """A batched cotangent laid out as NumPy lays out ``z[..., *index]`` when the index
    arrays are separated: their dimensions first, then the batch axes."""
    k = separated_advanced(index)
    if not (k and batch):
        return g
    return moveaxis(g, tuple(range(batch)), tuple(range(k, k + batch)))


def batch_before_advanced(g: Any, index: tuple, batch: int, ns: Any = None) -> Any:
    """The inverse of `batch_after_advanced`: batch axes back in front (``ns`` is the
    array namespace, for a graph-recording permute under create_graph)."""
    k = separated_advanced(index)
    if not (k and batch):
        return g
    return moveaxis(g, tuple(range(k, k + batch)), tuple(range(batch)), ns)


def moveaxis(g: Any, source: tuple, destination: tuple, ns: Any = None) -> Any:
    axes = [a for a in range(g.ndim) if a not in source]
    for dst, src in sorted(zip(destination, source, strict=True)):
        axes.insert(dst, src)
    return (ns.permute if ns is not None else permute)(g, tuple(axes))


def clone(a: Any) -> np.ndarray:
    """A copy laid out as PyTorch's clone (preserve_format, ``infer_dense_strides``): the
    dimensions ordered by stride (a transpose stays transposed), those of stride 0 (an
    expand) left in place, the result dense."""
    a = np.asarray(a)
    strides, shape = a.strides, a.shape
    perm = list(range(a.ndim))[::-1]  # fastest first

    def swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, a.ndim):  # (PyTorch's stable insertion sort)
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    slowest = perm[::-1]
    out = np.empty([shape[d] for d in slowest], dtype=a.dtype).transpose(np.argsort(slowest))
    out[...] = a
    return out


# The complex step (the checker's f'(x) = Im f(x + ih)/h) holds only where each op's
# complex extension is holomorphic around the real point. sqrt, log and fractional powers
# have a branch point at 0: sqrt(sum(v**2)) at v = 0 sees sqrt(-h²) = ih and returns the
# one-sided slope 1 with full confidence, std at a constant vector likewise. So on complex
# arrays these give nan wherever the argument is not safely inside the real domain (real
# and >= 0, or a real part far above the imaginary one): the checker then falls back to
# finite differences there, which see the kink.
_BRANCH_MARGIN = 1e6


def branch_guarded(fn: Callable[..., Array], shift: float = 0.0) -> Callable[..., Array]:
    """``fn`` (a branch point at ``-shift``), nan on complex arguments off its safe side."""

    def guarded(z: Array, *args: Any, **kwargs: Any) -> Array:
        return _off_branch(z + shift, fn(z, *args, **kwargs))

    return guarded


def complex_sqrt(z: Array) -> Array:
    """sqrt for the complex step (sqrt, std, hypot): nan off its safe side."""
    return _off_branch(z, np.sqrt(z))


def complex_power(x: Array, exponent: float) -> Array:
    """x**exponent on complex arrays; a fractional power has sqrt's branch point at 0."""
    out = x**exponent
    return out if float(exponent).is_integer() else _off_branch(x, out)


def _off_branch(w: Array, out: Array) -> Array:
    if not np.iscomplexobj(w):
        return out
    safe = ((w.imag == 0) & (w.real >= 0)) | (w.real > _BRANCH_MARGIN * np.abs(w.imag))
    if safe.all():
        return out
    return np.where(np.broadcast_to(safe, np.shape(out)), out, np.nan)
