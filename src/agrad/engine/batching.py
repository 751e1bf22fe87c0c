"""Batching rules: run an op's forward on inputs that carry a leading batch axis.

Finite differences evaluate one function at many perturbed points; stacking the
points along a new leading axis turns thousands of small NumPy calls into a few
large ones. Each rule says how an op's parameters and operands change when
some operands have that extra axis (JAX's vmap, for the op table's forwards).
An entry names its rule (`Op.batch`), or gets the default for its shape rule
(`DEFAULTS`); an op without one raises `Unbatchable`, and the caller falls back
to one evaluation per point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import kernels, shape_rules


class Unbatchable(Exception):
    """This op (or this use of it) has no batching rule."""


Value = tuple[Any, bool]  # (array, carries the batch axis)


def apply_batched(op: Any, values: list[Value], params: dict, size: int) -> Value:
    """``op.forward`` on ``values``; returns (result, batched)."""
    if not any(b for _, b in values):
        return op.forward(*(v for v, _ in values), **params), False
    if op.batch is None:
        raise Unbatchable(op.name)
    return op.batch(op, values, params, size), True


def _nd(value: Value) -> int:
    array, batched = value
    return np.ndim(array) - (1 if batched else 0)


def _aligned(value: Value, ndim: int) -> Any:
    """A batched operand with singleton axes after the batch axis, so that NumPy's
    right-aligned broadcasting pairs its own axes with the other operands'."""
    array, batched = value
    if not batched:
        return array
    missing = ndim - (array.ndim - 1)
    return array.reshape(array.shape[:1] + (1,) * missing + array.shape[1:]) if missing else array


def _full(value: Value, size: int) -> np.ndarray:
    array, batched = value
    return array if batched else np.broadcast_to(array, (size, *np.shape(array)))


def _axis(axis: Any, ndim: int) -> Any:
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, tuple):
        return tuple(a % ndim + 1 for a in axis)
    return axis % max(ndim, 1) + 1


def elementwise(op, values, params, size):
    ndim = max(_nd(v) for v in values)
    return op.forward(*(_aligned(v, ndim) for v in values), **params)


def reduction(op, values, params, size):
    (value,) = values
    if _nd(value) == 0 and params.get("axis") is not None:
        # An axis of a 0-d value (NumPy allows 0 for some reductions and refuses it for
        # others): point by point, so the replay accepts and refuses exactly what eval does.
        return np.stack([np.asarray(op.forward(v, **params)) for v in value[0]])
    return op.forward(value[0], **{**params, "axis": _axis(params.get("axis"), _nd(value))})


def along_axis(op, values, params, size):
    (value,) = values
    if _nd(value) == 0:  # a 0-d value is its own axis (PyTorch: cumsum of a scalar is itself)
        column = np.reshape(value[0], (size, 1))
        return np.reshape(op.forward(column, **{**params, "axis": 1}), (size,))
    return op.forward(value[0], **{**params, "axis": _axis(params["axis"], _nd(value))})


def reshape(op, values, params, size):
    return op.forward(values[0][0], shape=(size, *params["shape"]))


def permute(op, values, params, size):
    nd = _nd(values[0])
    return op.forward(values[0][0], axes=(0, *(a % nd + 1 for a in params["axes"])))


def transpose(op, values, params, size):
    nd = _nd(values[0])
    if nd == 0:
        return values[0][0]
    return op.forward(values[0][0], dim0=params["dim0"] % nd + 1, dim1=params["dim1"] % nd + 1)


def expand(op, values, params, size):
    target = tuple(params["shape"])
    return np.broadcast_to(_aligned(values[0], len(target)), (size, *target))


def _key(index: tuple) -> tuple:
    return (slice(None), *index)


def index(op, values, params, size):
    index = params["index"]
    # Index arrays separated by a slice put their axes first, ahead of the batch axis.
    return kernels.batch_before_advanced(values[0][0][_key(index)], index, 1)


def setitem(op, values, params, size):
    old, value = values
    base = _full(old, size)
    target = np.array(base, dtype=np.result_type(base, value[0]), copy=True)
    index = params["index"]
    key = _key(index)
    selected = np.ndim(target[key]) - 1
    written = _aligned(value, selected)
    if value[1]:
        written = kernels.batch_after_advanced(written, index, 1)
    target[key] = written
    return target


def as_strided(op, values, params, size):
    return values[0][0].reshape(size, -1)[:, params["ids"]]


def copy_slices(op, values, params, size):
    old, value = values
    base = _full(old, size)
    target = np.array(base, dtype=np.result_type(base, value[0]), copy=True)
    ids = params["ids"]
    target.reshape(size, -1)[:, ids] = _aligned(value, np.ndim(ids))
    return target


def concat(op, values, params, size):
    nd = _nd(values[0])
    return np.concatenate([_full(v, size) for v in values], axis=params["axis"] % nd + 1)


def stack(op, values, params, size):
    nd = _nd(values[0]) + 1
    return np.stack([_full(v, size) for v in values], axis=params["axis"] % nd + 1)


def matmul(op, values, params, size):
    (a, ba), (b, bb) = values
    nda, ndb = _nd(values[0]), _nd(values[1])
    squeeze = []
    if nda == 1:  # vectors as 1-row matrices (batched or not), squeezed again at the end
        a, nda = a[..., None, :], 2
        squeeze.append(-2)
    if ndb == 1:  # vectors as 1-column matrices
        b, ndb = b[..., None], 2
        squeeze.append(-1)
    ndim = max(nda, ndb)  # batched operands pad their matrix-batch axes after the batch axis
    out = np.matmul(_aligned((a, ba), ndim), _aligned((b, bb), ndim))
    return np.squeeze(out, axis=tuple(squeeze)) if squeeze else out


# The rule an entry gets from its shape rule when it names none.
DEFAULTS: dict[Callable[..., Any], Callable[..., Any]] = {
    shape_rules.same_shape: elementwise,
    shape_rules.broadcast_shape: elementwise,
    shape_rules.reduce_shape: reduction,
    shape_rules.along_axis_shape: along_axis,
}
