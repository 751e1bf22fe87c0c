"""One node's step of the backward pass (`agrad.engine.autograd`'s loop, and the hooked loop
of `agrad.engine.graph_hooks`): the checks that its saved values are still there and
unchanged, its op's VJP rule, and the rule's gradients summed back to each input's shape
and dtype. Broadcasting is undone here, once, for every rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import AgradAutogradError
from .node import Node
from .tensor import WRITES, Tensor, wrap

FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _node_vjp(node: Node, g: Any, ns: Any, create_graph: bool, batch: int) -> tuple[Sequence, Any]:
    """One rule application: its gradients summed back to each input's shape, and as the
    rule returned them."""
    if node.custom:  # a custom Function: the user's backward, through its ctx
        return node.vjp(g, ns, create_graph, batch)  # type: ignore[attr-defined]
    op = node.op
    if node.freed and op.saves.anything:
        raise AgradAutogradError(FREED_ERROR)
    if WRITES[0] != node.stamp:  # something was written in place since
        if op.read_inputs != ():
            _check_versions(node)
        if op.keeps_output and (node.out_written or _written_through_detach(node)):
            raise AgradAutogradError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: the output of {node.name()} was written after it was "
                "saved. Hint: compute on a .clone() instead of modifying it in place."
            )
    arity = node.arity
    if create_graph:
        xs = node.inputs
        out = wrap(node.out, True, node) if node.out is not None else None
    elif arity == 1:  # (the common cases without a tuple of operands or a loop)
        grads = op.vjp(ns, g, node.out, node.a0, **node.params)
        (gi,) = grads
        if gi is not None and node.n0 is not None:
            data = node.x0._array  # an input with a producer is always a Tensor (or stand-in)
            if batch or gi.shape != data.shape or gi.dtype != data.dtype:
                gi = _fitted(ns, gi, data, g, batch)
        return (gi,), grads
    elif arity == 2:
        if op.needs_mask:
            wanted = (node.n0 is not None, node.n1 is not None)
            grads = op.vjp(ns, g, node.out, node.a0, node.a1, needs=wanted, **node.params)
        else:
            grads = op.vjp(ns, g, node.out, node.a0, node.a1, **node.params)
        g0, g1 = grads
        if g0 is not None and node.n0 is not None:
            data = node.x0._array
            if batch or g0.shape != data.shape or g0.dtype != data.dtype:
                g0 = _fitted(ns, g0, data, g, batch)
        if g1 is not None and node.n1 is not None:
            data = node.x1._array
            if batch or g1.shape != data.shape or g1.dtype != data.dtype:
                g1 = _fitted(ns, g1, data, g, batch)
        return (g0, g1), grads
    else:
        xs, out = node.a0, node.out
    if op.needs_mask:
        needs = (
            (node.n0 is not None, node.n1 is not None)
            if arity == 2
            else tuple([n is not None for n in node.next])
        )
        grads = op.vjp(ns, g, out, *xs, needs=needs, **node.params)
    else:
        grads = op.vjp(ns, g, out, *xs, **node.params)
    if arity == 1:
        (gi,) = grads
        if gi is not None and node.n0 is not None:
            data = node.x0._array
            if batch or gi.shape != data.shape or gi.dtype != data.dtype:
                gi = _fitted(ns, gi, data, g, batch)
        return [gi], grads
    result = []
    edges = zip((node.x0, node.x1), (node.n0, node.n1), grads, strict=True) if (
        arity == 2
    ) else zip(node.x0, node.n0, grads, strict=True)  # fmt: skip
    for x, child, gi in edges:
        if child is not None and gi is not None:
            data = x._array
            if batch or gi.shape != data.shape or gi.dtype != data.dtype:
                gi = _fitted(ns, gi, data, g, batch)
        result.append(gi)
    return result, grads


def _fitted(ns: Any, gi: Any, data: Any, g: Any, batch: int) -> Any:
    """A rule's gradient for an input of ``data``'s shape and dtype: broadcasting summed
    away (the first ``batch`` axes are rows), and a float32 input's gradient float32."""
    shape = g.shape[:batch] + data.shape if batch else data.shape
    if gi.shape != shape:
        gi = _unbroadcast(ns, gi, shape, batch) if batch else ns.sum_to(gi, shape)
    if gi.dtype != data.dtype:  # a float32 input gets a float32 gradient, as in PyTorch
        gi = ns.astype(gi, data.dtype)
    return gi


def _written_through_detach(node: Node) -> bool:
    box = node.out_box  # (x.detach() shares x's version counter, as in PyTorch)
    return box is not None and box[0] > node.stamp


def _check_versions(node: Node) -> None:
    """Refuse when a value the VJP reads was written in place since it was recorded."""
    saves = node.op.saves
    for i, x in enumerate(node.inputs):
        if isinstance(x, Tensor) and x._version > node.stamp and saves.reads_for(i, node.next):
            raise AgradAutogradError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: a tensor of shape {x.shape} saved by {node.name()} was "
                "written after it was saved. Hint: compute on a .clone() instead of "
                "modifying it in place."
            )


def _unbroadcast(ns: Any, g: Any, shape: tuple, batch: int) -> Any:
    """Sum ``g`` down to ``shape``; the first ``batch`` axes are rows, never summed."""
    extra = g.ndim - len(shape)
    if extra and batch:
        g = ns.sum(g, axis=tuple(range(batch, batch + extra)))
    return ns.sum_to(g, shape) if g.shape != shape else g
