"""Shape ops: reshape and its aliases, permute/transpose, expand, indexing,
indexed assignment (CopySlices), concat/stack, dtype casts, sum_to.

VJPs address axes from the end, so that a cotangent with leading batch
dimensions (a block of Jacobian rows) flows through unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from .. import kernels
from .core import Case, Op, batch_of, normalize_axis, register, same_shape

# ---- reshape family ---------------------------------------------------------------------


def _reshape_forward(x, shape):
    return np.reshape(x, shape)


def _reshape_vjp(ns, g, out, x, shape):
    return (g.reshape(batch_of(g, out.ndim) + tuple(x.shape)),)


def _reshape_shape(shape, shape_to):
    size = math.prod(shape)
    target = list(shape_to)
    if target.count(-1) > 1:
        raise AgradShapeError(f"reshape: only one dimension can be -1, got {tuple(target)}")
    known = math.prod(n for n in target if n != -1)
    if -1 in target:
        if known == 0 or size % known:
            raise AgradShapeError(
                f"reshape: cannot reshape a tensor of shape {tuple(shape)} ({size} elements) "
                f"into {tuple(shape_to)}"
            )
        target[target.index(-1)] = size // known
    elif known != size:
        raise AgradShapeError(
            f"reshape: cannot reshape a tensor of shape {tuple(shape)} ({size} elements) into "
            f"{tuple(shape_to)} ({known} elements); the sizes must match"
        )
    return tuple(target)


def _reshape_rule(in_shape, shape):
    return _reshape_shape(in_shape, shape)


def _permute_forward(x, axes):
    return np.transpose(x, axes)


def _permute_vjp(ns, g, out, x, axes):
    nb = g.ndim - out.ndim
    inverse = np.argsort(axes)
    return (ns.permute(g, tuple(range(nb)) + tuple(nb + int(i) for i in inverse)),)


def _permute_shape(shape, axes):
    if sorted(a % max(len(shape), 1) for a in axes) != list(range(len(shape))):
        raise AgradShapeError(
            f"permute: axes {tuple(axes)} are not a permutation of the {len(shape)} "
            f"dimensions of a tensor of shape {tuple(shape)}"
        )
    return tuple(shape[a] for a in axes)


def _transpose_forward(x, dim0, dim1):
    return np.swapaxes(x, dim0, dim1)


def _transpose_vjp(ns, g, out, x, dim0, dim1):
    n = x.ndim
    return (ns.swapaxes(g, dim0 % n - n, dim1 % n - n),)


def _transpose_shape(shape, dim0, dim1):
    d0, d1 = (normalize_axis(d, len(shape), "transpose") for d in (dim0, dim1))
    out = list(shape)
    out[d0], out[d1] = out[d1], out[d0]
    return tuple(out)


def _expand_forward(x, shape):
    return np.broadcast_to(x, shape)


def _expand_vjp(ns, g, out, x, shape):
    return (g,)  # the backward loop sums it back to x's shape


def _expand_shape(in_shape, shape):
    target = tuple(shape)
    try:
        result = np.broadcast_shapes(in_shape, target)
    except ValueError:
        result = None
    if result != target:
        raise AgradShapeError(
            f"expand: a tensor of shape {tuple(in_shape)} cannot be broadcast to {target}"
        )
    return target


def _sum_to_shape(in_shape, shape):
    _expand_shape(tuple(shape), tuple(in_shape))
    return tuple(shape)


def _astype_forward(x, dtype):
    return np.asarray(x).astype(dtype)


def _astype_complex(x, dtype):
    # A cast to a real dtype would drop the imaginary part the complex step carries.
    return np.asarray(x).astype(np.result_type(dtype, np.complex64))


def _astype_vjp(ns, g, out, x, dtype):
    return (ns.astype(g, x.dtype),)


def _sum_to_vjp(ns, g, out, x, shape):
    batch = batch_of(g, out.ndim)
    lead = (1,) * (x.ndim - len(shape))
    return (ns.broadcast_to(g.reshape(batch + lead + tuple(shape)), batch + tuple(x.shape)),)


RESHAPE_CASES = (
    Case(((2, 3),), {"shape": (3, 2)}),
    Case(((2, 3),), {"shape": (6,)}),
    Case(((6,),), {"shape": (1, 2, 3)}),
    Case(((),), {"shape": (1,)}),
)

register(
    Op("reshape", "ViewBackward0", _reshape_forward, _reshape_vjp, _reshape_rule, saves=False,
       cases=RESHAPE_CASES),
    Op("unsqueeze", "UnsqueezeBackward0", _reshape_forward, _reshape_vjp, _reshape_rule,
       saves=False, cases=(Case(((2, 3),), {"shape": (2, 1, 3)}),)),
    Op("squeeze", "SqueezeBackward1", _reshape_forward, _reshape_vjp, _reshape_rule,
       saves=False, cases=(Case(((2, 1, 3),), {"shape": (2, 3)}),)),
    Op("permute", "PermuteBackward0", _permute_forward, _permute_vjp, _permute_shape,
       saves=False, cases=(Case(((2, 3),), {"axes": (1, 0)}),
                           Case(((2, 3, 4),), {"axes": (2, 0, 1)}))),
    Op("transpose", "TransposeBackward0", _transpose_forward, _transpose_vjp, _transpose_shape,
       saves=False, cases=(Case(((2, 3),), {"dim0": 0, "dim1": 1}),
                           Case(((2, 3, 4),), {"dim0": -1, "dim1": 0}))),
    Op("expand", "ExpandBackward0", _expand_forward, _expand_vjp, _expand_shape, saves=False,
       cases=(Case(((3,),), {"shape": (2, 3)}), Case(((2, 1),), {"shape": (2, 4)}))),
    Op("astype", "ToCopyBackward0", _astype_forward, _astype_vjp, same_shape, saves=False,
       complex_forward=_astype_complex, cases=(Case(((2, 3),), {"dtype": np.dtype("float64")}),)),
    Op("sum_to", "SumToSizeBackward0", kernels.sum_to, _sum_to_vjp, _sum_to_shape, saves=False,
       cases=(Case(((2, 3),), {"shape": (3,)}), Case(((2, 3),), {"shape": (2, 1)}))),
)  # fmt: skip

# ---- indexing ---------------------------------------------------------------------------


def normalize_index(index: Any, ndim: int) -> tuple[tuple, bool]:
    """An index as a full tuple (no Ellipsis, every dimension named) and whether it is
    advanced (arrays). Full tuples let a batch prefix `...` address the right axes."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    advanced = False
    for item in index:
        if hasattr(item, "grad_fn"):  # a Tensor used as an index
            item = item.data
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
        raise AgradShapeError(
            f"index: too many indices ({consumed}) for a tensor with {ndim} dimension(s)"
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
    if any(isinstance(i, (int, np.integer)) for i in index):
        return "SelectBackward0"
    return "SliceBackward0" if any(i != slice(None) for i in index) else "AliasBackward0"


def _index_forward(x, index, advanced):
    return x[index]


def _index_vjp(ns, g, out, x, index, advanced):
    return (ns.index_backward(g, batch_of(g, out.ndim) + tuple(x.shape), index, advanced),)


def _index_shape(shape, index, advanced):
    probe = np.broadcast_to(np.empty((), dtype=np.int8), shape)
    try:
        return probe[index].shape
    except IndexError as exc:
        raise AgradShapeError(f"index: {exc} (tensor of shape {tuple(shape)})") from None


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
    keep = np.ones(np.shape(out), dtype=bool)
    keep[index] = False
    return g * keep, g[(Ellipsis, *index)]


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
                "all inputs must match except along the concatenation axis"
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
    for s in shapes[1:]:
        if tuple(s) != tuple(first):
            raise AgradShapeError(
                f"stack: all inputs must have the same shape, got {tuple(first)} and {tuple(s)}"
            )
    ax = normalize_axis(axis, len(first) + 1, "stack")
    return first[:ax] + (len(shapes),) + first[ax:]


register(
    Op("index", _index_name, _index_forward, _index_vjp, _index_shape, saves=False,
       cases=(Case(((2, 3),), {"index": (0, slice(None)), "advanced": False}),
              Case(((2, 3),), {"index": (slice(None), slice(1, 3)), "advanced": False}),
              Case(((4,),), {"index": (np.array([0, 2, 2]),), "advanced": True}),
              Case(((2, 3, 2),), {"index": (np.array([0, 1]), slice(None), np.array([1, 0])),
                                  "advanced": True}))),
    Op("unbind", "UnbindBackward0", _index_forward, _index_vjp, _index_shape, saves=False,
       cases=(Case(((2, 3),), {"index": (1, slice(None)), "advanced": False}),)),
    Op("index_backward", "IndexBackwardBackward0", kernels.index_backward, _index_backward_vjp,
       _index_backward_shape, saves=False,
       cases=(Case(((3,),), {"shape": (2, 3), "index": (1, slice(None)), "advanced": False}),)),
    Op("setitem", "CopySlices", _setitem_forward, _setitem_vjp, _setitem_shape, arity=2,
       saves=False, mutates=True,
       cases=(Case(((2, 3), (3,)), {"index": (0, slice(None)), "advanced": False}),
              Case(((2, 3), ()), {"index": (1, 2), "advanced": False}))),
    Op("concat", "CatBackward0", _concat_forward, _concat_vjp, _concat_shape, arity=-1,
       saves=False, cases=(Case(((2, 3), (1, 3)), {"axis": 0}),
                           Case(((2, 3), (2, 2)), {"axis": 1}))),
    Op("stack", "StackBackward0", _stack_forward, _stack_vjp, _stack_shape, arity=-1,
       saves=False, cases=(Case(((2, 3), (2, 3)), {"axis": 0}),
                           Case(((3,), (3,), (3,)), {"axis": 1}))),
)  # fmt: skip
