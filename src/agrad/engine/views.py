"""Views as PyTorch's: tensors that share their base's storage and version counter.

Basic indexing, reshape/view, transposes, expand, squeeze/unsqueeze and unbind give views
(their NumPy forwards return views of the input's array). A view remembers its root base
and the chain of view ops from it, and the base keeps weak references to its views. An
in-place write into a view goes through `write_view`: the base's history becomes a
CopySlices node (the new values scattered into the old base), and every live view of the
base is re-derived from it by an AsStridedBackward0 node — what PyTorch does, so gradients
stay right after writes through aliases. Writes into the base itself re-derive its views
the same way (`refresh`); both are in `agrad.engine.inplace`. Positions are flat indices
into the base (`view_ids`), so one rule serves any chain of view ops, batched cotangents
included.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .grad_mode import STATE
from .tensor import INPLACE_VIEW_ERROR, Tensor, _autograd_error

OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)
NO_GRAD_VIEW_ERROR = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
    "want the inplace to be tracked)."
)


def register(op: Any, x: Any, out: Tensor, params: dict) -> None:
    """Make ``out`` (``op`` applied to ``x``) a view of ``x``'s root base when its array
    shares ``x``'s memory (a reshape that had to copy is not a view, as in PyTorch)."""
    if not isinstance(x, Tensor) or not np.may_share_memory(out._array, x._array):
        return
    parent = x._base
    root = x if parent is None else parent
    out._base = root
    out._chain = x._chain + ((op, params),)
    box = root._vbox
    if box is None:
        box = root._vbox = [root._version]
    out._vbox = box
    if not STATE.enabled and root._rg:
        out.__dict__["_nograd_view"] = True
    if op.name == "unbind":  # one of several views: PyTorch refuses recorded writes into it
        k = next(i for i in params["index"] if isinstance(i, int))
        out.__dict__["_multi"] = (k, "Unbind")
    views = root._views
    if views is None:
        views = root._views = []
    elif len(views) >= 64 and len(views) & (len(views) - 1) == 0:  # at powers of two
        views[:] = [r for r in views if r() is not None]
    views.append(weakref.ref(out))


def view_ids(view: Tensor) -> np.ndarray:
    """For each element of ``view``, its flat (C-order) position in the root base."""
    base: Any = view._base
    ids: Any = np.arange(base._array.size).reshape(base._array.shape)
    for op, params in view._chain:
        ids = op.forward(ids, **params)
    return np.asarray(ids)


def check_writable(t: Tensor) -> None:
    """PyTorch's refusals for an in-place write into ``t`` that grad mode would record."""
    if not t._array.flags.writeable:
        if t._array.size > 1 and 0 in t._array.strides:  # an expanded view
            raise _autograd_error(OVERLAP_ERROR)
        raise _autograd_error("cannot write in place into a read-only tensor; clone() it first")
    base = t._base
    if base is not None and _overlaps(t):  # overlapping windows (unfold)
        raise _autograd_error(OVERLAP_ERROR)
    if base is not None and STATE.enabled:
        if base.grad_fn is None and base._rg:
            raise _autograd_error(INPLACE_VIEW_ERROR)
        if t.__dict__.get("_nograd_view") and base._rg:
            raise _autograd_error(NO_GRAD_VIEW_ERROR)


def mark_multi(pieces: tuple[Tensor, ...], name: str) -> tuple[Tensor, ...]:
    """Mark the views a function returned several of (split's pieces): PyTorch refuses a
    recorded in-place write into one (`check_multi_output`)."""
    for k, piece in enumerate(pieces):
        if piece._base is not None:
            piece.__dict__["_multi"] = (k, name)
    return pieces


def _overlaps(view: Tensor) -> bool:
    """Whether two elements of ``view`` are one element of its base: strides that keep
    every dimension clear of the smaller ones' extent cannot overlap (the common case,
    decided without looking at positions)."""
    a = view._array
    extent = a.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape, strict=True) if n > 1):
        if stride < extent:
            ids = view_ids(view)
            return bool(np.unique(ids).size != ids.size)
        extent += stride * (n - 1)
    return False


def check_multi_output(t: Tensor) -> None:
    """Refuse a recorded write into one of the views unbind (iteration), split or chunk
    returned (`mark_multi`)."""
    multi = t.__dict__.get("_multi")
    if multi is not None:
        k, name = multi
        base: Any = t._base
        start = (
            f"Output {k} of {name} is a view and is being modified inplace."
            if base._rg
            else "A view was created in no_grad mode and is being modified inplace with grad "
            "mode enabled."
        )
        raise _autograd_error(
            f"{start} This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should replace "
            "the inplace operation by an out-of-place one."
        )
