"""Where gradients arrive in the backward pass (`agrad.engine.autograd`): the outputs of a
node with several (a custom Function's), tensor hooks, and the leaves' ``.grad``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .node import Node
from .tensor import Tensor, wrap


def _arrive(pending: dict, node: Node, k: int, g: Any) -> None:
    """Add ``g`` to the gradient arriving at output ``k`` of a node with several outputs."""
    slots = pending.setdefault(node, [None] * node.outputs)
    slots[k] = g if slots[k] is None else slots[k] + g


def _per_output(node: Node, g: list, create_graph: bool, stored: set[int] | None) -> list:
    """Per output of a several-output node: its tensor hooks, then its retained .grad."""
    hooks = node.__dict__.get("output_hooks", {})
    retained = node.__dict__.get("retained_outputs", {}) if stored is not None else {}
    g = list(g)
    for k, gk in enumerate(g):
        if gk is None:
            continue
        if k in hooks:
            g[k] = gk = _run_hooks(hooks[k], gk, create_graph)
        if k in retained:
            _accumulate(retained[k], gk, create_graph, stored)
    return g


def _run_hooks(hooks: list, g: Any, create_graph: bool) -> Any:
    for hook in hooks:
        value = hook(g if create_graph else wrap(g))
        if value is not None:
            g = (
                value
                if create_graph
                else np.asarray(value._array if isinstance(value, Tensor) else value)
            )
    return g


class _Leaves:
    """Where gradients reaching leaves go: into ``.grad`` (backward), or into the results
    for the requested inputs (grad). A leaf with hooks gets them called once, on the sum
    of everything that reached it (as PyTorch's AccumulateGrad), at the end of the pass."""

    __slots__ = ("capture", "create_graph", "slots", "repeated", "found", "stored", "hooked")

    def __init__(self, inputs: Sequence[Tensor] | None, create_graph: bool) -> None:
        self.create_graph = create_graph
        # (made by the first leaf with hooks: this runs on every backward, small ones too)
        self.hooked: dict[int, tuple[Tensor, Any]] | None = None
        self.stored: set[int] = set()  # arrays already handed to a tensor's .grad
        self.capture = inputs is not None
        self.slots: dict[int, int] = {}
        self.repeated: list[tuple[int, int]] = []  # (index, its leaf's first index)
        self.found: dict[int, Any] = {}
        if inputs is None:
            return
        slots = self.slots
        for i, t in enumerate(inputs):  # (a loop: a comprehension costs a frame)
            if t.grad_fn is None:
                first = slots.setdefault(id(t), i)
                if first != i:  # the same leaf asked for twice gets its gradient twice
                    self.repeated.append((i, first))

    def deliver(self, leaf: Tensor, g: Any) -> None:
        if self.capture:
            i = self.slots.get(id(leaf))
            if i is not None:
                self.found[i] = self.found[i] + g if i in self.found else g
        elif leaf._hooks:
            hooked = self.hooked
            if hooked is None:
                hooked = self.hooked = {}
            key = id(leaf)
            hooked[key] = (leaf, hooked[key][1] + g if key in hooked else g)
        else:
            _accumulate(leaf, g, self.create_graph, self.stored)

    def finish(self) -> None:
        for leaf, g in (self.hooked or {}).values():
            given = g
            g = _run_hooks(leaf._hooks or [], g, self.create_graph)
            if g is not given:  # a hook's own array: the caller may still hold it
                self.stored.add(id(g))
            _accumulate(leaf, g, self.create_graph, self.stored)


def _accumulate(t: Tensor, g: Any, create_graph: bool, stored: set[int] | None = None) -> None:
    """``t.grad += g`` without ever aliasing an array another tensor holds.

    A fresh array that no other tensor received in this pass (``stored`` tracks them)
    is kept as it is — as PyTorch steals an unshared buffer; anything else is copied.
    """
    if create_graph:
        t._grad = g if t._grad is None else t._grad + g
    elif t._grad is not None:
        held = t._grad._array
        if type(held) is np.ndarray and held.flags.writeable and held.shape == np.shape(g):
            held += g  # in place, as PyTorch: a reference to .grad sees the new sum
        else:
            t._grad = wrap(np.asarray(held + g))
    elif (
        stored is not None
        and type(g) is np.ndarray
        and g.base is None
        and g.flags.writeable
        and g.dtype == t._array.dtype
        and id(g) not in stored
    ):
        stored.add(id(g))
        t._grad = wrap(g)
    else:
        t._grad = wrap(np.array(g, dtype=t._array.dtype))
