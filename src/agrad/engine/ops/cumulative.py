"""Cumulative sums and products along an axis (cumsum, cumprod).

Both keep the shape; PyTorch's cumulative op of a 0-d value is the value itself (NumPy's
would be 1-d), and its gradient passes the cotangent through.
"""

from __future__ import annotations

import numpy as np

from ...errors import AgradValueError
from .. import kernels
from ..kernels import Array
from ..tensor import Tensor
from .core import INPUTS_AND_OUTPUT, NOTHING, Case, normalize_axis, raw, register, special
from .reduction import along_axis


def _cumsum_vjp(ns, g, out, x, axis=0):
    # d/dx_j of sum_i g_i * cumsum(x)_i = sum of g_i for i >= j: a reversed cumsum of g.
    if x.ndim == 0:
        return (g,)
    return (_reverse_cumsum(ns, g, normalize_axis(axis, x.ndim, "cumsum") - x.ndim),)


def _reverse_cumsum(ns, t, ax):
    """Sums from each position to the end of axis ``ax`` (counted from the end)."""
    flip = (Ellipsis, slice(None, None, -1)) + (slice(None),) * (-ax - 1)
    return ns.cumsum(t[flip], axis=ax)[flip]


register(
    along_axis("cumsum", "CumsumBackward0", kernels.cumsum, _cumsum_vjp,
               "d cumsum(a)/da: each element gets the sum of the gradients at or after it",
               saves=NOTHING, doc="cumulative sum along axis",
               cases=(Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": -1}),
                      Case(((4,),), {"axis": 0}), Case(((),), {"axis": -1}))),
)  # fmt: skip


# ---- cumulative product: a zero-safe VJP ----------------------------------------------


def _cumprod_forward(x: Array, axis: int = 0) -> Array:
    if np.ndim(x) == 0:  # NumPy's is 1-d; PyTorch's cumprod of a scalar is itself
        normalize_axis(axis, 0, "cumprod")  # (it still takes only dim 0 or -1)
        return np.array(x, copy=True)
    return np.cumprod(x, axis=axis)


def _cumprod_vjp(ns, g, out, x, axis=0):
    # d/dx_j of sum_i g_i y_i (y = cumprod x) = sum over i >= j of g_i prod_{k <= i, k != j}.
    # Without zeros: a reversed cumsum of g*y, over x_j. With zeros (PyTorch's rule): that
    # before a slice's first zero; at it, the same with the zero replaced by 1; after, 0.
    if x.ndim == 0 or x.size == 1:  # d x/dx = 1, even at inf or nan (as PyTorch)
        return (g * 1.0,)
    ax = normalize_axis(axis, x.ndim, "cumprod") - x.ndim
    zero = raw(x) == 0
    if not zero.any():
        return (_reverse_cumsum(ns, g * out, ax) / x,)
    if isinstance(x, Tensor):  # recording a graph (create_graph): exact at zeros
        return (_cumprod_grad_exact(ns, g, x, ax),)
    seen = np.cumsum(zero, axis=ax)
    before, first = seen == 0, zero & (seen == 1)
    a = _reverse_cumsum(ns, g * out, ax) / ns.where(before, x, 1.0)
    b = _reverse_cumsum(ns, g * ns.cumprod(ns.where(first, 1.0, x), axis=ax), ax)
    return (ns.where(before, a, 0.0) + ns.where(first, b, 0.0),)


def _cumprod_grad_exact(ns, g, x, ax):
    """The same gradient as a differentiable expression that stays right at zeros (so
    second derivatives are too): row j holds x with x_j replaced by 1, its cumprod summed
    against g from j on. Quadratic in the axis length: for a recorded graph at zeros only."""
    n, nd, nb = x.shape[ax], x.ndim, g.ndim - x.ndim
    if n > 4096:
        raise AgradValueError("cumprod: second derivatives at zeros are supported along an "
                              "axis of up to 4,096 elements")  # fmt: skip
    order = tuple(i for i in range(nd) if i != nd + ax) + (nd + ax,)  # the axis moved last
    rows = ns.where(np.eye(n, dtype=bool), 1.0, ns.permute(x, order)[..., None, :])
    later = np.triu(np.ones((n, n), dtype=bool))  # [j, i]: i >= j
    g_order = tuple(range(nb)) + tuple(nb + i for i in order)
    terms = ns.permute(g, g_order)[..., None, :] * ns.where(later, ns.cumprod(rows, axis=-1), 0.0)
    return ns.permute(ns.sum(terms, axis=-1), tuple(int(i) for i in np.argsort(g_order)))


register(
    along_axis("cumprod", "CumprodBackward0", _cumprod_forward, _cumprod_vjp,
               "d cumprod(a)_i/da_j = product of the a_k for k ≤ i, k ≠ j (when i ≥ j)",
               saves=INPUTS_AND_OUTPUT, doc="cumulative product along axis",
               cases=(Case(((2, 3),), {"axis": 0}), Case(((2, 3),), {"axis": -1}),
                      Case(((4,),), {"axis": 0}), Case(((),), {"axis": 0})),
               special=(special([2.0, 0.0, 3.0, 0.0, 4.0], axis=0),
                        special([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], axis=1),
                        special([[0.0, 2.0], [3.0, 0.0]], axis=0))),
)  # fmt: skip
