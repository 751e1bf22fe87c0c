"""Indexing (basic and advanced), indexed assignment (CopySlices), concat and stack.

VJPs address axes from the end, so that a cotangent with leading batch
dimensions (a block of Jacobian rows) flows through unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import AgradIndexError, AgradShapeError, AgradValueError
from .. import batching, kernels
from .core import NOTHING, Case, Op, batch_of, normalize_axis, register


def normalize_index(index: Any, ndim: int) -> tuple[tuple, bool]:
    """An index as a full tuple (no Ellipsis, every dimension named) and whether it is
    advanced (arrays). Full tuples let a batch prefix `...` address the right axes."""
    if not isinstance(index, tuple):
        index = (index,)
    items: list[Any] = []
    advanced = False
    for item in index:
        if hasattr(item, "grad_fn"):  # a Tensor used as an index
            item = item._array
        if isinstance(item, list):
            item = np.asarray(item)
        if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype != bool:
            item = item.item()
        if isinstance(item, np.ndarray):
            if item.dtype == bool:
                items.extend(np.nonzero(item))
                advanced = True
                continue
            if not np.issubdtype(item.dtype, np.integer):
                if item.size and not np.all(item == np.round(item)):
                    raise AgradValueError("index: indices must be integers")
                item = item.astype(np.intp)
            advanced = True
        elif isinstance(item, (float, np.floating)):
            if item != int(item):
                raise AgradValueError(f"index: {item} is not an integer index")
            item = int(item)
        items.append(item)
    consumed = sum(0 if (it is None or it is Ellipsis) else 1 for it in items)
    if consumed > ndim:
        raise AgradIndexError(
            f"index: too many indices ({consumed}) for a tensor with {ndim} dimension(s)",
            torch=f"too many indices for tensor of dimension {ndim}",
        )
    fill = (slice(None),) * (ndim - consumed)
    at = next((i for i, it in enumerate(items) if it is Ellipsis), None)
    if at is not None:
        items[at : at + 1] = fill
    else:
        items.extend(fill)
    return tuple(items), advanced


def _index_name(node):
    index = node.params["index"]
    if node.params["advanced"]:
        return "IndexBackward0"
    # PyTorch applies a basic index step by step; its grad_fn is the last step that does
    # something (a full slice does nothing): x[0, :3] is SliceBackward0, x[:3, 0] Select.
    name = "AliasBackward0"
    for i in index:
        if i is None:
            name = "UnsqueezeBackward0"
        elif isinstance(i, (int, np.integer)):
            name = "SelectBackward0"
        elif isinstance(i, slice) and i != slice(None):
            name = "SliceBackward0"
    return name


def _index_forward(x, index, advanced):
    # A trailing Ellipsis makes an all-integer index give a 0-d view, not a NumPy scalar.
    return x[index] if advanced else x[(*index, Ellipsis)]


def _index_vjp(ns, g, out, x, index, advanced):
    return (ns.index_backward(g, batch_of(g, out.ndim) + tuple(x.shape), index, advanced),)


def _index_shape(shape, index, advanced):
    if advanced:
        return _advanced_shape(tuple(shape), index)
    probe = np.broadcast_to(np.empty((), dtype=np.int8), shape)  # a view: nothing allocated
    try:
        return probe[index].shape
    except IndexError as exc:
        raise AgradIndexError(
            f"index: {exc} (tensor of shape {tuple(shape)})",
            torch=str(exc).replace(" for axis ", " for dimension "),
        ) from None


def _advanced_shape(shape: tuple, index: tuple) -> tuple:
    """NumPy's result shape for a full index with integer arrays, without indexing anything
    (so the element limit is checked before a huge gather). Integers count as 0-d arrays
    there; the arrays' broadcast dimensions take the place of the first of them, or lead
    when a slice or None separates them."""
    out: list[int] = []
    arrays: list[tuple] = []
    first = None
    gap = separated = False
    dim = 0
    for item in index:
        if item is None or isinstance(item, slice):
            if item is None:
                out.append(1)
            else:
                out.append(len(range(*item.indices(shape[dim]))))
                dim += 1
            gap = first is not None
            continue
        n, values = shape[dim], np.asarray(item)
        if values.size and (values.min() < -n or values.max() >= n):
            bad = values.max() if values.max() >= n else values.min()
            raise AgradIndexError(
                f"index: index {bad} is out of bounds for axis {dim} with size {n} "
                f"(tensor of shape {shape})",
                # (PyTorch names the dimension of its gather kernel: the same only at 0)
                torch=f"index {bad} is out of bounds for dimension 0 with size {n}"
                if dim == 0
                else None,
            )
        separated = separated or gap
        first = len(out) if first is None else first
        arrays.append(values.shape)
        dim += 1
    try:
        block = tuple(np.broadcast_shapes(*arrays))
    except ValueError:
        raise AgradIndexError(
            "index: the index arrays cannot be broadcast together: shapes "
            + ", ".join(str(a) for a in arrays),
            torch="shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(a)) for a in arrays),
        ) from None
    if separated:
        return block + tuple(out)
    at = first or 0
    return tuple(out[:at]) + block + tuple(out[at:])


def _index_backward_vjp(ns, g, out, x, shape, index, advanced):
    batch = g.ndim - len(shape)
    return (kernels.batch_before_advanced(g[(Ellipsis, *index)], index, batch, ns),)


def _index_backward_shape(in_shape, shape, index, advanced):
    return tuple(shape)


def _setitem_shape(old, value, index, advanced):
    target = _index_shape(old, index, advanced)
    value = tuple(value)
    while len(value) > len(target) and value[0] == 1:  # NumPy drops leading 1s on assignment
        value = value[1:]
    try:
        np.broadcast_to(np.empty(value, dtype=np.int8), target)
    except ValueError:
        raise AgradShapeError(
            f"setitem: a value of shape {tuple(value)} cannot be assigned to a selection of "
            f"shape {tuple(target)}"
        ) from None
    return tuple(old)


def _setitem_forward(old, value, index, advanced):
    old[index] = value  # in place, as PyTorch's CopySlices
    return old


def _setitem_vjp(ns, g, out, old, value, index, advanced):
    keep = np.ones(out.shape, dtype=bool)
    keep[index] = False
    # (0 where overwritten, even for an inf or nan cotangent there: PyTorch zeroes the slice)
    return ns.where(keep, g, 0.0), g[(Ellipsis, *index)]


def _as_strided_forward(x, ids):
    return np.reshape(x, -1)[ids]


def _as_strided_vjp(ns, g, out, x, ids):
    lead = batch_of(g, out.ndim)
    flat = ns.index_backward(g, lead + (math.prod(x.shape),), (ids,), True)
    return (flat.reshape(lead + tuple(x.shape)),)


def _as_strided_shape(shape, ids):
    return np.shape(ids)


def _copy_slices_forward(base, value, ids):
    np.put(base, ids, np.broadcast_to(value, np.shape(ids)))  # in place, into the storage
    return base


def _copy_slices_vjp(ns, g, out, base, value, ids):
    n = math.prod(out.shape)
    keep = np.ones(n, dtype=bool)
    keep[np.ravel(ids)] = False
    lead = batch_of(g, out.ndim)
    old = ns.where(keep.reshape(out.shape), g, 0.0)  # (0 where overwritten, as setitem's)
    return old, g.reshape(lead + (n,))[(Ellipsis, ids)]


def _copy_slices_shape(base, value, ids):
    try:
        np.broadcast_shapes(tuple(value), np.shape(ids))
    except ValueError:
        raise AgradShapeError(
            f"copy_: a value of shape {tuple(value)} cannot be written into a view of shape "
            f"{np.shape(ids)}"
        ) from None
    return tuple(base)


def _concat_forward(*xs, axis=0):
    return np.concatenate(xs, axis=axis)


def _concat_vjp(ns, g, out, *xs, axis=0):
    n = out.ndim
    ax = normalize_axis(axis, n, "concat")
    grads, start = [], 0
    tail = (slice(None),) * (n - 1 - ax)
    for x in xs:
        stop = start + x.shape[ax]
        grads.append(g[(Ellipsis, slice(start, stop), *tail)])
        start = stop
    return tuple(grads)


def _torch_concat_text(shapes, ax):
    first = shapes[0]
    for n, s in enumerate(shapes[1:], 1):
        if len(s) != len(first):
            return None  # (PyTorch's text differs by case: rank mismatch)
        for i, (a, b) in enumerate(zip(first, s, strict=True)):
            if i != ax and a != b:
                return (
                    f"Sizes of tensors must match except in dimension {ax}. Expected size {a} "
                    f"but got size {b} for tensor number {n} in the list."
                )
    return None


def _concat_shape(*shapes, axis=0):
    first = shapes[0]
    if any(len(s) == 0 for s in shapes):
        raise AgradShapeError(
            "concat: zero-dimensional tensors cannot be concatenated; use "
            "stack([a, b]) to make a vector of them"
        )
    ax = normalize_axis(axis, len(first), "concat")
    for s in shapes[1:]:
        if len(s) != len(first) or any(
            a != b for i, (a, b) in enumerate(zip(s, first, strict=True)) if i != ax
        ):
            raise AgradShapeError(
                f"concat: shapes {tuple(first)} and {tuple(s)} differ outside axis {axis}; "
                "all inputs must match except along the concatenation axis",
                torch=_torch_concat_text(shapes, ax),
            )
    return first[:ax] + (sum(s[ax] for s in shapes),) + first[ax + 1 :]


def _stack_forward(*xs, axis=0):
    return np.stack(xs, axis=axis)


def _stack_vjp(ns, g, out, *xs, axis=0):
    n = out.ndim
    ax = normalize_axis(axis, n, "stack")
    tail = (slice(None),) * (n - 1 - ax)
    return tuple(g[(Ellipsis, i, *tail)] for i in range(len(xs)))


def _stack_shape(*shapes, axis=0):
    first = shapes[0]
    ax = normalize_axis(axis, len(first) + 1, "stack")  # (the dim first, as PyTorch)
    for s in shapes[1:]:
        if tuple(s) != tuple(first):
            raise AgradShapeError(
                f"stack: all inputs must have the same shape, got {tuple(first)} and {tuple(s)}",
                torch=f"stack expects each tensor to be equal size, but got {list(first)} at "
                f"entry 0 and {list(s)} at entry {shapes.index(s)}",
            )
    return first[:ax] + (len(shapes),) + first[ax:]


register(
    Op("index", _index_name, _index_forward, _index_vjp, _index_shape, view=True, saves=NOTHING,
       explain="scatter the gradient into zeros at the index", batch=batching.index,
       grows=True, public=False, method=False,
       cases=(Case(((2, 3),), {"index": (0, slice(None)), "advanced": False}),
              Case(((2, 3),), {"index": (slice(None), slice(1, 3)), "advanced": False}),
              Case(((4,),), {"index": (np.array([0, 2, 2]),), "advanced": True}),
              Case(((2, 3, 2),), {"index": (np.array([0, 1]), slice(None), np.array([1, 0])),
                                  "advanced": True}))),
    Op("unbind", "UnbindBackward0", _index_forward, _index_vjp, _index_shape, view=True,
       saves=NOTHING, explain="scatter the gradient into zeros at the index",
       batch=batching.index, method=False,
       cases=(Case(((2, 3),), {"index": (1, slice(None)), "advanced": False}),)),
    Op("index_backward", "IndexBackwardBackward0", kernels.index_backward, _index_backward_vjp,
       _index_backward_shape, explain="index the gradient", saves=NOTHING, grows=True,
       public=False, method=False,
       cases=(Case(((3,),), {"shape": (2, 3), "index": (1, slice(None)), "advanced": False}),)),
    Op("setitem", "CopySlices", _setitem_forward, _setitem_vjp, _setitem_shape, arity=2,
       explain="the old value gets g outside the slice; the new value gets g inside it",
       saves=NOTHING, mutates=True, batch=batching.setitem, public=False, method=False,
       cases=(Case(((2, 3), (3,)), {"index": (0, slice(None)), "advanced": False}),
              Case(((2, 3), ()), {"index": (1, 2), "advanced": False}))),
    # Views after an in-place write (`engine.views`): ids are flat positions in the base.
    Op("as_strided", "AsStridedBackward0", _as_strided_forward, _as_strided_vjp,
       _as_strided_shape, saves=NOTHING, explain="scatter the gradient into the base's positions",
       batch=batching.as_strided, public=False, method=False,
       cases=(Case(((2, 3),), {"ids": np.array([[1, 4], [2, 5]])}),)),
    Op("copy_slices", "CopySlices", _copy_slices_forward, _copy_slices_vjp, _copy_slices_shape,
       arity=2, saves=NOTHING, mutates=True, batch=batching.copy_slices, public=False,
       method=False, explain="the old base gets g outside the view; the view's value inside it",
       cases=(Case(((2, 3), (2,)), {"ids": np.array([1, 4])}),
              Case(((2, 3), (2, 2)), {"ids": np.array([[0, 1], [3, 4]])}))),
    Op("concat", "CatBackward0", _concat_forward, _concat_vjp, _concat_shape, arity=-1,
       explain="split the gradient along the axis", saves=NOTHING, batch=batching.concat,
       grows=True, aliases=("cat", "concatenate"), method=False,
       cases=(Case(((2, 3), (1, 3)), {"axis": 0}), Case(((2, 3), (2, 2)), {"axis": 1}))),
    Op("stack", "StackBackward0", _stack_forward, _stack_vjp, _stack_shape, arity=-1,
       explain="select each input's slice of the gradient", saves=NOTHING,
       batch=batching.stack, grows=True, method=False,
       cases=(Case(((2, 3), (2, 3)), {"axis": 0}), Case(((3,), (3,), (3,)), {"axis": 1}))),
)  # fmt: skip
