"""index_add (PyTorch's index_add / index_add_): ``out = x`` with ``alpha·source`` added
into the slices ``index`` along ``dim`` (repeated indices add up).

``index`` is a parameter (integer positions, like an index), so the rule is linear in both
operands: x gets the cotangent as it is, source gets the cotangent's slices at ``index``
times ``alpha`` — written with indexing, so the same rule records itself under
create_graph and carries batch axes.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradIndexError, AgradShapeError
from .core import Case, Op, Saves, batch_of, normalize_axis, register
from .windows import checked, each_point


def _positions(index):
    return np.asarray(index).reshape(-1)


def _slot(ndim_before: int, index):
    return (slice(None),) * ndim_before + (_positions(index),)


def _index_add_forward(x, source, dim, index, alpha=1):
    out = np.array(x, dtype=np.result_type(x, source), copy=True)
    d = dim % max(out.ndim, 1)
    if out.ndim == 0:  # a 0-d x: index [0] adds the one value
        return out + alpha * np.asarray(source).reshape(()) * _positions(index).size
    np.add.at(
        out, _slot(d, index), alpha * np.asarray(source).reshape(_source_shape(out, d, index))
    )
    return out


def _source_shape(x, d, index):
    shape = list(x.shape)
    shape[d] = _positions(index).size
    return tuple(shape)


def _index_add_vjp(ns, g, out, x, source, dim, index, alpha=1):
    lead = batch_of(g, out.ndim)
    if out.ndim == 0:
        picked = g * _positions(index).size
    else:
        picked = g[_slot(len(lead) + dim % out.ndim, index)]
    return g, (picked * alpha).reshape(lead + tuple(np.shape(source)))


def _index_add_shape(shape, source, dim, index, alpha=1):
    n = len(shape)
    d = normalize_axis(dim, n, "index_add")  # PyTorch's IndexError out of range
    idx = np.asarray(index)
    if idx.ndim > 1:
        raise AgradIndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with "
            f"size: {list(idx.shape)}"
        )
    if idx.dtype.kind not in "iu":
        raise AgradShapeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {idx.dtype}"
        )
    size = shape[d] if n else 1  # (a 0-d tensor has the one slot 0)
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise AgradShapeError(
            f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {size}"
        )
    shape, source = tuple(shape), tuple(source)
    given = (source[d] if len(source) > d else 1) if n else math.prod(source)
    if given != (idx.size if n else 1):
        raise AgradShapeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to "
            f"source.size(dim): ({given}), for dim: {dim}"
        )
    if n and source != shape[:d] + (idx.size,) + shape[d + 1 :]:
        raise AgradShapeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(shape)} source.shape = {list(source)}"
        )
    return tuple(shape)


register(
    Op("index_add", "IndexAddBackward0", _index_add_forward, _index_add_vjp, _index_add_shape,
       # The rule reads neither value, but PyTorch saves source (its rule expands to
       # source's shape), so a write into it refuses backward there: the same here.
       arity=2, saves=Saves(inputs=(1,)), prepare=checked(_index_add_shape),
       explain="x gets g; source gets alpha times g's slices at index along dim",
       batch=each_point, public=False, method=False,
       cases=(Case(((3, 4), (2, 4)), {"dim": 0, "index": np.array([0, 2])}),
              Case(((3, 4), (3, 3)), {"dim": 1, "index": np.array([3, 0, 3]), "alpha": -1.5}),
              Case(((4,), (3,)), {"dim": 0, "index": np.array([1, 1, 2])}))),
)  # fmt: skip
