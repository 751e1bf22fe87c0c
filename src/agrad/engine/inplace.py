"""In-place writes, as PyTorch's: into a tensor, or through a view into its base.

Every in-place operation (``add_``, ``+=``, ``fill_``, ``copy_``, ``x[i] = v``, ...) ends
here. Into a view, the write reaches the base's storage and the base's history becomes
CopySlices(old base, new values); the views of a written storage are re-derived from the
base's new history (AsStridedBackward0), so autograd stays right through aliases
(`agrad.engine.views` keeps track of which tensors are views of which).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradDtypeError, AgradShapeError
from .grad_attr import scalar_type_name
from .grad_mode import STATE
from .ops.core import TABLE, apply
from .tensor import (
    COMPLEX_GRAD_ERROR,
    INPLACE_LEAF_ERROR,
    Tensor,
    _autograd_error,
    mark_written,
    wrap,
)
from .views import OVERLAP_ERROR, check_multi_output, check_writable, view_ids


def inplace(self: Tensor, fn: Any, *args: Any) -> Tensor:
    """``self = fn(self, *args)`` written into the same storage, as PyTorch's in-place ops.

    When a graph is recorded, ``fn`` sees a snapshot of ``self`` (its saved values stay
    those of before the write) and ``self`` is re-pointed at the new node (through its
    base's CopySlices when it is a view); the old node's output is marked written, so a
    rule that reads it fails at backward, and the views of the storage are re-derived.
    """
    if STATE.enabled and self.grad_fn is None and self._rg:
        raise _autograd_error(INPLACE_LEAF_ERROR)
    base = self._base
    if base is not None or not self._array.flags.writeable:
        check_writable(self)
    tracked = STATE.enabled and (
        self._rg
        or (base is not None and base._rg)
        or any(isinstance(a, Tensor) and a._rg for a in args)
    )
    if not tracked:
        result = fn(self, *args)
        mark_written(self)
        self._array[...] = result._array
        return self
    if self._array.dtype.kind == "c":  # (a real value copied in would make it require grad)
        raise _autograd_error(COMPLEX_GRAD_ERROR.format(what="a complex tensor written in place"))
    if base is not None:
        check_multi_output(self)
    source = wrap(self._array.copy(), self._rg, self.grad_fn)
    source._output_nr = self._output_nr
    result = fn(source, *args)
    if base is not None:
        write_view(self, result, source)
        return self
    mark_written(self)
    self._array[...] = result._array
    if result.grad_fn is not None:
        self.grad_fn = result.grad_fn
        self._rg = True
        self._output_nr = 0
    refresh(self)
    return self


_CATEGORIES = "biufc"  # bool, integer (signed or not), float, complex: each holds the one before


def fitted(target: Tensor, result: Tensor) -> Tensor:
    """``result`` if it can be written into ``target`` as PyTorch's in-place arithmetic allows:
    of its shape (an operand may broadcast to the target, not the target to the operand) and
    of a category of dtype it holds (a narrower dtype of the same category is cast; a float
    into an integer tensor, an integer into a bool one, a complex into a float one are not).

    >>> import agrad
    >>> agrad.tensor([1, 2]).mul_(1.5)
    Traceback (most recent call last):
    ...
    agrad.errors.AgradDtypeError: result type Double can't be cast to the desired output type Long
    """
    if result._array.shape != target._array.shape:
        have, want = (", ".join(map(str, t._array.shape)) for t in (target, result))
        raise AgradShapeError(
            f"an in-place result of shape {result._array.shape} does not fit the tensor it is "
            f"written into, of shape {target._array.shape}: an operand may broadcast to the "
            "tensor, not the tensor to the operand",
            torch=f"output with shape [{have}] doesn't match the broadcast shape [{want}]",
        )
    into, got = target._array.dtype, result._array.dtype
    if got != into and _CATEGORIES.index(_category(got)) > _CATEGORIES.index(_category(into)):
        raise AgradDtypeError(
            f"result type {scalar_type_name(got)} can't be cast to the desired output type "
            f"{scalar_type_name(into)}"
        )
    return result


def _category(dtype: np.dtype) -> str:
    return "i" if dtype.kind == "u" else dtype.kind


def arithmetic(fn: Any) -> Any:
    """``fn`` as an in-place arithmetic write computes it (``add_``, ``+=``, ``sqrt_``...):
    its result must be `fitted` to the tensor written, or PyTorch's RuntimeError is raised."""

    def checked(target: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fitted(target, fn(target, *args, **kwargs))

    return checked


def write_view(view: Tensor, new: Tensor, old: Tensor) -> None:
    """Record that ``view`` now holds ``new`` (a recorded value of its shape): the base
    becomes CopySlices(old base, new) and every live view of it is re-derived. ``old`` is
    the view's value before (``new`` may be computed from it, as by ``v.mul_(2)``): CopySlices
    lists the edges of new's node but old's, as PyTorch's."""
    base: Any = view._base
    ids = view_ids(view)
    if ids.size and np.unique(ids).size != ids.size:
        raise _autograd_error(OVERLAP_ERROR)
    mark_written(view)
    mark_written(base)
    before = wrap(base._array, base._rg, base.grad_fn)
    before._output_nr = base._output_nr
    result = apply(TABLE["copy_slices"], before, new, ids=ids)  # writes into base._array
    base.grad_fn = result.grad_fn
    base._rg = True
    base._output_nr = 0
    if new.grad_fn is not None:  # (what CopySlices lists: see `node._CopySlices`)
        result.grad_fn.wraps = _edge_of(new.grad_fn, old)
    producer = new.grad_fn  # its saved output is now the view's: a later write spoils it
    if producer is not None and getattr(getattr(producer, "op", None), "keeps_output", False):
        base.__dict__.setdefault("_aliased", []).append(producer)
    refresh(base)


def _edge_of(node: Any, old: Tensor) -> int:
    """Which of ``node``'s listed edges (next_functions) is ``old``'s (-1: none is)."""
    mine = old.grad_fn if old._rg else None
    for k, (target, _) in enumerate(node.next_functions):
        if target is mine:
            return k
    return -1


def refresh(base: Tensor) -> None:
    """Re-derive every live view of ``base`` from its current history (AsStridedBackward0),
    after an in-place write changed what the base's graph computes."""
    views = base._views
    if not views or not base._rg or not STATE.enabled:
        return
    op = TABLE["as_strided"]
    for ref in views:
        view = ref()
        if view is None:
            continue
        node = apply(op, base, ids=view_ids(view)).grad_fn
        view.grad_fn = node
        view._rg = True
        view._output_nr = 0
        view.__dict__.pop("_nograd_view", None)
