"""The machinery behind torch.autograd.graph, anomaly mode, inference mode and the profiler.

Two interception points, both empty unless something here is in use: `autograd.GRAPH_HOOKS`
(each backward step: node pre-hooks and hooks, saved-tensor unpacking, anomaly checks,
timing, which leaves received a gradient) and `ops.core.INTERCEPT` (each op applied: timing,
inference tensors, saved-tensor packing). `refresh` installs or removes them as features
are switched on and off, so code that uses none of this pays nothing.

It also installs PyTorch's Node API on `Node` (``register_hook`` with the (grad_inputs,
grad_outputs) signature, ``register_prehook``, ``metadata``, ``_saved_self`` & co.), as
`agrad.engine.methods` installs the Tensor methods.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from . import autograd, backward_step
from .grad_mode import STATE
from .node import Node, RemovableHandle
from .ops import core
from .tensor import Tensor, wrap


class _Features:
    """What is switched on (counts of live registrations, flags, stacks)."""

    def __init__(self) -> None:
        self.node_hooks = 0  # node pre-hooks and hooks registered and not removed
        self.post_accumulate = 0  # tensors with a post-accumulate-grad hook
        self.multi: list[Any] = []  # register_multi_grad_hook entries (weak tensors, fn)
        self.anomaly = False
        self.profilers: list[Any] = []  # active profiler.profile objects
        self.saved: list[tuple[Callable, Callable]] = []  # saved_tensors_hooks stack
        self.inference = 0  # depth of inference_mode blocks
        self.inference_made = False  # an inference tensor exists: inputs are checked
        self.packed = False  # a node holds packed saved tensors: backward must unpack them


FEATURES = _Features()


def refresh() -> None:
    """Install the interception points that the features switched on need, and only those."""
    f = FEATURES
    stepping = f.node_hooks or f.post_accumulate or f.multi or f.anomaly or f.profilers or f.packed
    autograd.GRAPH_HOOKS[0] = STEPPER if stepping else None
    applying = f.profilers or f.saved or f.inference or f.inference_made
    core.INTERCEPT[0] = _apply if applying else None


def _tensor(g: Any) -> Any:
    return g if g is None or isinstance(g, Tensor) else wrap(g)


def _array(value: Any, create_graph: bool) -> Any:
    if value is None or create_graph:
        return value
    return np.asarray(value._array if isinstance(value, Tensor) else value)


# ---- backward steps ---------------------------------------------------------------------------


class _Stepper:
    """One backward pass's view: runs each node's step with the hooks around it."""

    def begin(self, inputs: Any) -> Callable[..., tuple[list, Any]]:
        self.wanted = None if inputs is None else {id(t) for t in inputs}
        self.leaves: dict[int, tuple[Tensor, Any]] = {}  # leaf -> (leaf, gradient sent)
        self.nodes: dict[int, Any] = {}  # node -> the gradient that arrived at it
        return self.step

    def step(self, node: Node, g: Any, ns: Any, create_graph: bool, batch: int) -> tuple:
        extra = node.__dict__
        pre = extra.get("_prehooks")
        if pre:
            for hook in list(pre):
                result = hook((_tensor(g),))
                if result is not None:
                    g = _array(result[0], create_graph)
        self.nodes[id(node)] = g
        start = time.perf_counter() if FEATURES.profilers else 0.0
        packed = extra.get("_packed")
        if packed:
            grads, raw = _with_unpacked(node, packed, g, ns, create_graph, batch)
        else:
            grads, raw = backward_step._node_vjp(node, g, ns, create_graph, batch)
        if FEATURES.profilers:
            _record(node.name(), time.perf_counter() - start)
        if FEATURES.anomaly:
            _check_finite(node, grads)
        post = extra.get("_posthooks")
        if post:
            grads = _run_posthooks(post, grads, g, create_graph)
        for child, gi in zip(node.next, grads, strict=True):
            if (type(child) is Tensor and gi is not None
                    and (self.wanted is None or id(child) in self.wanted)):  # fmt: skip
                before = self.leaves.get(id(child))
                self.leaves[id(child)] = (child, gi if before is None else before[1] + gi)
        return grads, raw

    def finish(self) -> None:
        if self.wanted is None:  # backward() accumulated: the post-accumulate hooks run
            for leaf, _ in list(self.leaves.values()):
                for hook in list(leaf.__dict__.get("_post_accumulate_hooks", ())):
                    hook(leaf)
        for entry in list(FEATURES.multi):
            tensors = [ref() for ref in entry.tensors]
            if all(t is None for t in tensors):  # its tensors are gone: so is the hook
                entry.remove()
                continue
            grads = [None if t is None else self._gradient_of(t) for t in tensors]
            if any(g is not None for g in grads):
                entry.fn(tuple(grads))

    def _gradient_of(self, t: Tensor) -> Any:
        if t.grad_fn is None:
            found = self.leaves.get(id(t))
            return None if found is None else _tensor(found[1])
        return _tensor(self.nodes.get(id(t.grad_fn)))


STEPPER = _Stepper()


def _run_posthooks(hooks: list, grads: list, g: Any, create_graph: bool) -> list:
    grad_inputs = tuple(_tensor(gi) for gi in grads)
    for hook in list(hooks):
        result = hook(grad_inputs, (_tensor(g),))
        if result is not None:
            grad_inputs = tuple(result)
    return [_array(gi, create_graph) for gi in grad_inputs]


def _check_finite(node: Node, grads: list) -> None:
    for i, gi in enumerate(grads):
        if gi is not None and not np.all(np.isfinite(np.asarray(getattr(gi, "_array", gi)))):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _with_unpacked(node: Node, packed: dict, g: Any, ns: Any, create_graph: bool,
                   batch: int) -> tuple:  # fmt: skip
    """The node's step with its saved tensors replaced by what the unpack hooks return."""
    inputs, arrays = node.inputs, node.arrays
    new_inputs, new_arrays = list(inputs), list(arrays)
    for i, (value, unpack) in packed.items():
        t = unpack(value)
        if not isinstance(t, Tensor):
            raise TypeError(f"an unpack hook must return a Tensor, got {type(t).__name__}")
        new_inputs[i], new_arrays[i] = t, t._array
    node.inputs, node.arrays = tuple(new_inputs), new_arrays
    try:
        return backward_step._node_vjp(node, g, ns, create_graph, batch)
    finally:
        node.inputs, node.arrays = inputs, arrays


# ---- op applications ----------------------------------------------------------------------------


def _apply(op: Any, inputs: tuple, params: dict) -> Tensor:
    f = FEATURES
    if f.inference_made and STATE.enabled and not f.inference:
        for x in inputs:
            inference = isinstance(x, Tensor) and x.__dict__.get("_inference")
            if (
                inference
                and op.vjp is not None
                and any(isinstance(y, Tensor) and y._rg for y in inputs)
            ):
                raise RuntimeError(
                    "Inference tensors cannot be saved for backward. To work around you "
                    "can make a clone to get a normal tensor and use it in autograd."
                )
    start = time.perf_counter() if f.profilers else 0.0
    out = core.record(op, *inputs, **params)
    if f.profilers:
        _record(f"aten::{_aten_name(op)}", time.perf_counter() - start)
    if f.inference:
        mark_inference(out)
    if f.saved and out.grad_fn is not None:
        _pack(out.grad_fn, out)
    return out


def mark_inference(t: Tensor) -> None:
    t.__dict__["_inference"] = True
    if not FEATURES.inference_made:
        FEATURES.inference_made = True
        refresh()


def _aten_name(op: Any) -> str:
    name = op.api_name or op.name
    return {"pow_scalar": "pow", "rpow": "pow", "sum_to": "sum"}.get(op.name, name)


def _pack(node: Node, out: Tensor) -> None:
    """Hand each tensor the node saved to the innermost saved_tensors_hooks' pack hook
    (in PyTorch's order: the last operand first)."""
    pack, unpack = FEATURES.saved[-1]
    saves = node.op.saves
    packed = {}
    kept = list(FEATURES.saved)
    FEATURES.saved.clear()  # a pack hook's own ops are not packed (as in PyTorch)
    try:
        for i in reversed(range(len(node.inputs))):
            x = node.inputs[i]
            if isinstance(x, Tensor) and saves.reads_input(i) and node.next[i] is not None:
                packed[i] = (pack(x), unpack)
    finally:
        FEATURES.saved[:] = kept
    if packed:
        node.__dict__["_packed"] = packed
        if not FEATURES.packed:
            FEATURES.packed = True
            refresh()


def _record(name: str, seconds: float) -> None:
    for profile in FEATURES.profilers:
        profile.add(name, seconds)


# ---- PyTorch's Node API ------------------------------------------------------------------------


def _register(node: Node, key: str, hook: Callable) -> RemovableHandle:
    hooks = node.__dict__.setdefault(key, [])
    hooks.append(hook)
    FEATURES.node_hooks += 1
    refresh()
    return _CountedHandle(hooks, hook)


class _CountedHandle(RemovableHandle):
    __slots__ = ()

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)
            FEATURES.node_hooks -= 1
            refresh()


def register_hook(self: Node, fn: Callable) -> RemovableHandle:
    """``fn(grad_inputs, grad_outputs)`` after the node runs; a returned tuple replaces
    grad_inputs (what the node sends on)."""
    return _register(self, "_posthooks", fn)


def register_prehook(self: Node, fn: Callable) -> RemovableHandle:
    """``fn(grad_outputs)`` before the node runs; a returned tuple replaces grad_outputs."""
    return _register(self, "_prehooks", fn)


def _metadata(self: Node) -> dict:
    return self.__dict__.setdefault("_metadata", {})


def _saved(i: int) -> property:
    def get(self: Node) -> Any:
        if self.freed and self.op.saves.anything:
            raise RuntimeError(backward_step.FREED_ERROR)
        x = self.inputs[i] if i < len(self.inputs) else None
        if x is None or not hasattr(x, "_array") or not isinstance(x, Tensor):
            raise AttributeError(f"'{self.name()}' object has no attribute saved at input {i}")
        return x

    return property(get)


def _saved_result(self: Node) -> Tensor:
    if self.out is None or not isinstance(self.out, np.ndarray):
        raise RuntimeError(backward_step.FREED_ERROR)
    return wrap(self.out)


def _saved_param(self: Node, name: str) -> Any:
    if name.startswith("_saved_") and name[len("_saved_") :] in self.params:
        return self.params[name[len("_saved_") :]]
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def install() -> None:
    Node.register_hook = register_hook  # type: ignore[attr-defined]
    Node.register_prehook = register_prehook  # type: ignore[attr-defined]
    Node.metadata = property(_metadata)  # type: ignore[attr-defined]
    Node._saved_self = _saved(0)  # type: ignore[attr-defined]
    Node._saved_other = _saved(1)  # type: ignore[attr-defined]
    Node._saved_result = property(_saved_result)  # type: ignore[attr-defined]
    Node.__getattr__ = _saved_param  # type: ignore[attr-defined] # _saved_exponent & co.


install()
