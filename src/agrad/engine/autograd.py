"""Reverse mode: walk a graph of `Node`s from outputs to leaves without recursion.

One loop serves ``Tensor.backward`` (accumulate into leaves' ``.grad``) and
``agrad.autograd.grad`` (return gradients of chosen inputs). VJP rules run on
plain arrays by default and on tensors under ``create_graph=True``, so the
backward pass itself is recorded and can be differentiated again. The order of the
pass is `agrad.engine.graph_order`'s; each node's step (its rule, and broadcasting undone
once for every rule) is `agrad.engine.backward_step`'s; where gradients arrive is
`agrad.engine.accumulate`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import AgradAutogradError
from .accumulate import _accumulate, _arrive, _Leaves, _per_output, _run_hooks
from .backward_step import _fitted, _node_vjp
from .grad_mode import STATE
from .graph_order import _chain, _prune, _prune_chain, _topological
from .namespaces import GRAPH, NUMPY
from .node import Node
from .tensor import WRITES, Tensor, wrap

SCALAR_ERROR = "grad can be implicitly created only for scalar outputs"
NO_GRAD_ERROR = "element {} of tensors does not require grad and does not have a grad_fn"
UNUSED_ERROR = (
    "The differentiated Tensor at index {} appears to not have been used in the graph. "
    "Set allow_unused=True if this is the desired behavior."
)

# agrad.autograd.graph's node hooks, anomaly mode and the profiler (`engine/graph_hooks.py`)
# while any is in use: ``begin(inputs)`` returns the step that replaces `_node_vjp` for one
# backward pass, ``finish()`` ends the pass. None otherwise (nothing is paid for them).
GRAPH_HOOKS: list[Any] = [None]

# Called as on_node(node, grad_arriving, grads_sent, grads_before_unbroadcast) for each node
# processed, in order (used by --explain).
NodeObserver = Callable[[Node, Any, Sequence, Any], None]


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _seed(
    outputs: list[Tensor], grads: list, batch: int, create_graph: bool, fresh: bool = False
) -> list:
    """Check and default each output's incoming gradient (``gradient=`` of backward)."""
    if fresh and batch and not create_graph and len(outputs) == len(grads) == 1:
        block, only = grads[0], outputs[0]  # a Jacobian's identity block, made for this pass
        if type(block) is np.ndarray and only._rg and block.dtype == only._array.dtype:
            have, want = block.shape, only._array.shape
            if len(have) == batch + len(want) and have[batch:] == want:
                return [block]  # (as the loop below gives it: right shape and dtype, ours)
    if not grads and not batch and len(outputs) == 1:  # loss.backward(): a seed of ones
        only = outputs[0]
        ones = only._array
        if only._rg and ones.size == 1:  # (else the loop below raises)
            one = np.empty(ones.shape, dtype=ones.dtype)  # (np.ones: a Python-level wrapper)
            one.fill(1)
            return [wrap(one) if create_graph else one]
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grads + [None] * len(outputs), strict=False)):
        if not out._rg:
            raise AgradAutogradError(NO_GRAD_ERROR.format(i))
        made = g is None
        if made:
            data = out._array
            if data.size != 1:
                raise AgradAutogradError(SCALAR_ERROR)
            g = np.empty(data.shape, dtype=data.dtype)  # (np.ones: a Python-level wrapper)
            g.fill(1)
            if not batch:  # (the common case: its shape and dtype are right, and it is ours)
                seeds.append(wrap(g) if create_graph else g)
                continue
        if isinstance(g, Tensor):
            array = g._array
        else:
            array = np.asarray(g, dtype=out._array.dtype)
            g = wrap(array) if create_graph else None
        have, want = array.shape, out._array.shape  # (plain tuples: no Size objects)
        if len(have) != batch + len(want) or have[:batch] + want != have:
            raise AgradAutogradError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {wrap(array).shape} and "
                f"output[{i}] has a shape of {out.shape}."
            )
        # A caller's array may end up in a leaf's .grad: copy it unless made for this pass.
        fresh_here = fresh or made  # (a seed made here is no one else's)
        seeds.append(g if create_graph else array if fresh_here else np.array(array, copy=True))
    return seeds


def run_backward(
    outputs: Sequence[Tensor],
    grad_outputs: Sequence[Any],
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Tensor] | None = None,
    batch: int = 0,
    on_node: NodeObserver | None = None,
    fresh_seeds: bool = False,
) -> list | None:
    """The backward pass. Without ``inputs``: accumulate into leaves' ``.grad``.
    With ``inputs``: return their gradients (None where unreached), touching no ``.grad``.
    ``batch`` leading dimensions of the seeds are independent cotangents (Jacobian rows).
    """
    outputs = list(outputs)
    if retain_graph is None:
        retain_graph = create_graph  # a recorded backward graph reads the saved values later
    seeds = _seed(outputs, list(grad_outputs), batch, create_graph, fresh_seeds)
    ns = GRAPH if create_graph else NUMPY
    capture = inputs is not None
    sink = _Leaves(inputs, create_graph)
    node_slot: dict[int, list[tuple[int, int]]] = {}  # producer -> (input index, output_nr)
    for i, t in enumerate(inputs or ()):
        if t.grad_fn is not None:
            node_slot.setdefault(id(t.grad_fn), []).append((i, t._output_nr))

    pending: dict[Node, Any] = {}  # gradient arriving at each node so far
    roots: list[Node] = []
    for out, g in zip(outputs, seeds, strict=True):
        if out.grad_fn is None:
            sink.deliver(out, g)
        else:
            key = out.grad_fn
            if key.outputs == 1:
                pending[key] = pending[key] + g if key in pending else g
            else:
                _arrive(pending, key, out._output_nr, g)
            roots.append(key)
    order = _chain(roots[0]) if len(roots) == 1 else None
    if order is not None:
        if capture:
            order = _prune_chain(order, node_slot, sink.slots)
    else:
        order = _topological(roots)
        if capture:  # (keyed by id: membership is all it reads)
            order = _prune(order, node_slot, sink.slots)
    hooks = GRAPH_HOOKS[0]
    step = _node_vjp if hooks is None else hooks.begin(inputs)

    enabled = STATE.enabled  # (not `with set_grad_enabled`: this runs on every pass)
    STATE.enabled = bool(create_graph)
    stored, pop = sink.stored, pending.pop
    # The common step runs inline below (`_node_vjp`'s, without its call and its tuples):
    # on arrays, nothing observing, for a plain node of one or two operands that is neither
    # freed nor saw an in-place write since it was recorded. Any other goes through `step`.
    inline = step is _node_vjp and not create_graph and on_node is None
    track = not capture  # which arrays a leaf's .grad may take as its own: backward() only
    try:
        for node in order:
            g = pop(node, None)
            if g is None:
                continue
            plain = node.plain
            if not plain:  # several outputs, tensor hooks, a retained .grad, or custom
                g = _arriving(node, g, create_graph, capture, sink)
            if node_slot and id(node) in node_slot:
                for i, k in node_slot[id(node)]:
                    sink.found[i] = g if node.outputs == 1 else g[k]
            arity = node.arity
            grads: Any = None  # None: the one operand to send to is in child, gi, x
            if inline and plain and arity and not node.freed and node.stamp == WRITES[0]:
                op = node.op
                if arity == 1:
                    params = node.params  # (no keywords: a call without ** is cheaper)
                    if params:
                        (gi,) = op.vjp(ns, g, node.out, node.a0, **params)
                    else:
                        (gi,) = op.vjp(ns, g, node.out, node.a0)
                    child, x = node.n0, node.x0
                    if gi is not None and child is not None:
                        data = x._array  # (an input with a producer: a Tensor or stand-in)
                        if batch or gi.shape != data.shape or gi.dtype != data.dtype:
                            gi = _fitted(ns, gi, data, g, batch)
                else:
                    n0, n1 = node.n0, node.n1
                    if op.needs_mask:  # (no ** unless there are parameters: a call costs less)
                        wanted = (n0 is not None, n1 is not None)
                        if node.params:
                            g0, g1 = op.vjp(
                                ns, g, node.out, node.a0, node.a1, needs=wanted, **node.params
                            )
                        else:
                            g0, g1 = op.vjp(ns, g, node.out, node.a0, node.a1, needs=wanted)
                    elif node.params:
                        g0, g1 = op.vjp(ns, g, node.out, node.a0, node.a1, **node.params)
                    else:
                        g0, g1 = op.vjp(ns, g, node.out, node.a0, node.a1)
                    if g0 is not None and n0 is not None:
                        data = node.x0._array
                        if batch or g0.shape != data.shape or g0.dtype != data.dtype:
                            g0 = _fitted(ns, g0, data, g, batch)
                    if g1 is not None and n1 is not None:
                        data = node.x1._array
                        if batch or g1.shape != data.shape or g1.dtype != data.dtype:
                            g1 = _fitted(ns, g1, data, g, batch)
                    if n1 is None:
                        child, gi, x = n0, g0, node.x0
                    elif n0 is None:
                        child, gi, x = n1, g1, node.x1
                    else:  # both tracked (as `_shared`, then `_send` for each, inline)
                        child = None
                        if g0 is not None:
                            if track and (g0 is g or g0 is g1):
                                stored.add(id(g0))
                            if type(n0) is Tensor:
                                sink.deliver(n0, g0)
                            elif n0.outputs == 1:
                                pending[n0] = pending[n0] + g0 if n0 in pending else g0
                            else:
                                _arrive(pending, n0, node.x0._output_nr, g0)
                        if g1 is not None:
                            if track and g1 is g:
                                stored.add(id(g1))
                            if type(n1) is Tensor:
                                sink.deliver(n1, g1)
                            elif n1.outputs == 1:
                                pending[n1] = pending[n1] + g1 if n1 in pending else g1
                            else:
                                _arrive(pending, n1, node.x1._output_nr, g1)
            else:
                grads, raw = step(node, g, ns, create_graph, batch)
                if on_node is not None:
                    on_node(node, g, grads, raw)
                if track and (on_node is not None or not plain and node.custom):  # an
                    _shared(stored, grads, None)  # observer keeps every array; a custom
                    # backward its own
                arity = node.arity
            # One operand to send to (most nodes: one operand, or one tracked and a constant).
            if grads is None:
                pass
            elif arity == 1 or (arity == 2 and node.n1 is None):
                child, gi, x = node.n0, grads[0], node.x0
            elif arity == 2 and node.n0 is None:
                child, gi, x = node.n1, grads[1], node.x1
            else:
                child = None
                if track:
                    _shared(stored, grads, g)
                if arity == 2:  # (two producers, as each `+` of a long sum: no zip, no _send)
                    edges = ((node.x0, node.n0, grads[0]), (node.x1, node.n1, grads[1]))
                else:
                    edges = zip(node.x0, node.n0, grads, strict=True)  # type: ignore[assignment]
                for x, child_i, gi in edges:
                    if child_i is None or gi is None:
                        continue
                    if type(child_i) is not Tensor and child_i.outputs == 1:
                        pending[child_i] = pending[child_i] + gi if child_i in pending else gi
                    else:
                        _send(pending, sink, x, child_i, gi)
            if child is not None and gi is not None:
                if track and gi is g:  # passed on as it arrived: maybe held elsewhere too
                    stored.add(id(gi))
                if type(child) is Tensor:  # a leaf
                    sink.deliver(child, gi)
                elif child.outputs == 1:
                    pending[child] = pending[child] + gi if child in pending else gi
                else:
                    _arrive(pending, child, x._output_nr, gi)
            if not retain_graph:  # free what it saved; a node that saved nothing stays usable
                node.freed = True
                if node.op.saves.anything:
                    node.out = None  # (an output its VJP does not read is a stand-in already)
        if sink.hooked:  # (leaves with hooks get their sums now)
            sink.finish()
    finally:
        STATE.enabled = enabled
    if hooks is not None:
        hooks.finish()
    if not capture:
        return None
    for i, first in sink.repeated:
        if first in sink.found:
            sink.found[i] = sink.found[first]
    return list(map(sink.found.get, range(len(inputs or ()))))  # (no comprehension's frame)


def _arriving(node: Node, g: Any, create_graph: bool, capture: bool, sink: _Leaves) -> Any:
    """The gradient arriving at a node that is not plain: per output of several, or through
    its tensor hooks; a retained ``.grad`` gets it (``backward`` only)."""
    if node.outputs != 1:  # a custom Function's outputs: hooks and retain_grad per output
        return _per_output(node, g, create_graph, None if capture else sink.stored)
    if node.hooks:
        g = _run_hooks(node.hooks, g, create_graph)
    if node.retained is not None and not capture:
        _accumulate(node.retained, g, create_graph, sink.stored)
    return g


def _shared(stored: set[int], grads: Sequence, g: Any) -> None:
    """Mark the gradients a leaf's ``.grad`` must copy rather than take (`_accumulate` then
    adds into it in place): one sent to several operands (add's ``(g, g)``) or passed on
    as it arrived (``g``), since another node may still read it; with ``g`` None, all."""
    if len(grads) == 2:  # (the common case, without a generator)
        g0, g1 = grads
        if g0 is not None and (g is None or g0 is g or g0 is g1):
            stored.add(id(g0))
        if g1 is not None and (g is None or g1 is g):
            stored.add(id(g1))
        return
    for i, gi in enumerate(grads):
        if gi is not None and (
            g is None or gi is g or any(gi is gj for gj in grads[i + 1 :])
        ):  # fmt: skip
            stored.add(id(gi))


def _send(pending: dict, sink: _Leaves, x: Any, child: Any, gi: Any) -> None:
    """Pass ``gi`` on towards ``child``, the producer of operand ``x``."""
    if type(child) is not Tensor:  # a Node (of its op's named subclass)
        if child.outputs == 1:
            pending[child] = pending[child] + gi if child in pending else gi
        else:
            _arrive(pending, child, x._output_nr, gi)
    else:
        sink.deliver(child, gi)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the leaves (torch.autograd.backward)."""
    outputs = _as_list(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        wanted = list({id(t): t for t in _as_list(inputs)}.values())  # (one .grad each)
        if not wanted:
            raise AgradAutogradError("'inputs' argument to backward() cannot be empty.")
        if any(not t.requires_grad for t in wanted):
            raise AgradAutogradError("One of the differentiated Tensors does not require grad")
        grads = run_backward(
            outputs, _as_list(grad_tensors), retain_graph, create_graph, inputs=wanted
        )
        for t, g in zip(wanted, grads or [], strict=True):
            if g is not None:
                _accumulate(t, g, create_graph)
        return
    run_backward(outputs, _as_list(grad_tensors), retain_graph, create_graph)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs`` (torch.autograd.grad)."""
    outs, ins = _as_list(outputs), _as_list(inputs)
    for t in ins:
        if not t._rg:
            raise AgradAutogradError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    grads = run_backward(
        outs,
        _as_list(grad_outputs),
        retain_graph,
        create_graph,
        inputs=ins,
        batch=1 if is_grads_batched else 0,
    )
    result = []
    for i, (t, g) in enumerate(zip(ins, grads, strict=True)):  # type: ignore[arg-type]
        if g is None:
            if materialize_grads:
                g = np.zeros_like(t._array)
            elif not allow_unused:
                raise AgradAutogradError(UNUSED_ERROR.format(i))
        result.append(g if g is None or isinstance(g, Tensor) else wrap(np.array(g)))
    return tuple(result)
