"""Tensor.unfold, a view as PyTorch's, and its adjoint.

``unfold(x, dimension, size, step)`` views ``x`` with ``dimension`` replaced by the number
of windows and a new last axis of ``size``: a stride-tricks view (writable when ``x`` is),
so an in-place write through it reaches ``x`` (`engine.views`; a write into overlapping
windows is refused there: PyTorch's result would depend on the order it writes in).
``dimension`` is counted from the end, so a cotangent with leading batch axes flows
through both entries unchanged; each entry is the other's VJP, which closes the pair
under differentiation.
"""

from __future__ import annotations

import numpy as np

from ...errors import AgradIndexError, AgradShapeError
from .core import NOTHING, Case, Op, register


def _unfold_shape(shape, dimension, size, step):
    n = len(shape)
    if not -n <= dimension < 0:
        raise AgradIndexError(
            f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
            f"{max(n, 1) - 1}], but got {dimension})"
        )
    d = n + dimension
    if size > shape[d]:
        raise AgradShapeError(
            f"maximum size for tensor at dimension {d} is {shape[d]} but size is {size}"
        )
    if step <= 0:
        raise AgradShapeError(f"step is {step} but must be > 0")
    count = (shape[d] - size) // step + 1
    return (*shape[:d], count, *shape[d + 1 :], size)


def _unfold_forward(x, dimension, size, step):
    x = np.asarray(x)
    d = x.ndim + dimension
    shape = _unfold_shape(x.shape, dimension, size, step)
    strides = (*x.strides[:d], x.strides[d] * step, *x.strides[d + 1 :], x.strides[d])
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)


def _unfold_vjp(ns, g, out, x, dimension, size, step):
    return (ns.unfold_backward(g, x.shape[x.ndim + dimension], dimension, size, step),)


def _backward_forward(g, length, dimension, size, step):
    """Zeros of the input's shape with each window of ``g`` added back where it came from."""
    g = np.asarray(g)
    d = g.ndim - 1 + dimension  # (the windows' axis in g)
    shape = (*g.shape[:d], length, *g.shape[d + 1 : -1])
    z = np.zeros(shape, dtype=g.dtype)
    count = g.shape[d]
    for j in range(size):  # (one strided add per offset: within one, windows never overlap)
        key = (*(slice(None),) * d, slice(j, j + step * (count - 1) + 1, step))
        z[key] += g[..., j]
    return z


def _backward_vjp(ns, g, out, gw, length, dimension, size, step):
    return (ns.unfold(g, dimension, size, step),)


def _backward_shape(shape, length, dimension, size, step):
    d = len(shape) - 1 + dimension
    return (*shape[:d], length, *shape[d + 1 : -1])


def _batch(op, values, params, size):
    (value, _), *_ = values
    return op.forward(value, **params)  # (axes from the end: the batch axis is free)


register(
    Op("unfold", "UnfoldBackward0", _unfold_forward, _unfold_vjp, _unfold_shape, view=True,
       saves=NOTHING, explain="add each window's gradient back where it came from",
       batch=_batch, grows=True, public=False, method=False,
       cases=(Case(((2, 5),), {"dimension": -1, "size": 2, "step": 1}),
              Case(((4, 3),), {"dimension": -2, "size": 2, "step": 2}))),
    Op("unfold_backward", "UnfoldBackwardBackward0", _backward_forward, _backward_vjp,
       _backward_shape, saves=NOTHING, explain="the windows of the gradient", grows=True,
       public=False, method=False,
       cases=(Case(((2, 4, 2),), {"length": 5, "dimension": -1, "size": 2, "step": 1}),)),
)  # fmt: skip
