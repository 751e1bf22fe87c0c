"""The recorded graph as plain data: nodes (backward functions and leaves) and edges.

Used by `agrad graph` to draw it and by `--explain` to name its steps. Edges go
the way data flows, from an input to the op that consumed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .autograd import run_backward
from .graph_order import _topological
from .node import Node
from .tensor import Tensor


@dataclass
class GraphNode:
    id: str
    label: str  # grad_fn name, "AccumulateGrad", or "constant"
    kind: str  # "op", "leaf" (requires grad), "constant"
    shape: tuple[int, ...]
    requires_grad: bool
    is_leaf: bool
    variable: str | None = None
    output: bool = False
    value: Any = None  # with values=True: the node's value,
    grad: Any = None  # and the gradient of the output with respect to it (None: none)


@dataclass
class Graph:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # (source, target)
    note: str = ""  # why gradients are missing, when values were asked for


def describe(
    output: Tensor,
    variables: dict[str, Tensor] | None = None,
    constants: bool = False,
    values: bool = False,
) -> Graph:
    """The graph behind ``output``. ``variables`` (name -> tensor) names the nodes: an op
    node takes the name of the tensor it produced. ``constants`` adds inputs that do
    not require grad (PyTorch's next_functions shows them as None). ``values`` records
    each node's value and, for a single-number output, runs backward to record the
    gradient of the output with respect to each node (what ``retain_grad`` would give)."""
    graph = _describe(output, variables, constants)
    if values:
        _add_values(graph, output, variables or {}, constants)
    return graph


def _describe(output: Tensor, variables: dict[str, Tensor] | None, constants: bool) -> Graph:
    variables = variables or {}
    names = {id(t): n for n, t in variables.items()}
    node_names = {id(t.grad_fn): n for n, t in variables.items() if t.grad_fn is not None}
    graph = Graph()
    if output.grad_fn is None:
        graph.nodes.append(
            GraphNode(
                "n0",
                "AccumulateGrad" if output.requires_grad else "constant",
                "leaf" if output.requires_grad else "constant",
                tuple(output.shape),
                output.requires_grad,
                True,
                names.get(id(output)),
                True,
            )
        )
        return graph
    order = _topological([output.grad_fn])
    ids: dict[int, str] = {}
    for node in order:
        ids[id(node)] = f"n{len(ids)}"
        graph.nodes.append(
            GraphNode(
                ids[id(node)],
                node.name(),
                "op",
                _out_shape(node),
                True,
                False,
                node_names.get(id(node)),
                node is output.grad_fn,
            )
        )

    def input_node(t: Tensor, label: str, kind: str) -> str:
        """The id of a leaf or constant input, adding its node the first time it is met."""
        if id(t) not in ids:
            ids[id(t)] = f"n{len(ids)}"
            graph.nodes.append(GraphNode(ids[id(t)], label, kind, tuple(t.shape),
                                         kind == "leaf", True, names.get(id(t))))  # fmt: skip
        return ids[id(t)]

    for node in order:
        for x, child in zip(node.inputs, node.next, strict=True):
            if isinstance(child, Node):
                source = ids[id(child)]
            elif child is not None:
                source = input_node(child, "AccumulateGrad", "leaf")
            elif constants and isinstance(x, Tensor):
                source = input_node(x, "constant", "constant")
            else:
                continue
            graph.edges.append((source, ids[id(node)]))
    return graph


def _add_values(graph: Graph, output: Tensor, variables: dict, constants: bool) -> None:
    """Values and gradients on the nodes of ``graph`` (built by `_describe` from ``output``,
    whose node order it walks again). Values are read first: backward frees them."""
    by_id = {n.id: n for n in graph.nodes}
    if output.grad_fn is None:
        by_id["n0"].value = output._array
        return
    order = _topological([output.grad_fn])
    ids: dict[int, str] = {id(node): f"n{i}" for i, node in enumerate(order)}
    for node in order:
        by_id[ids[id(node)]].value = node.out if isinstance(node.out, np.ndarray) else None
    leaves = []
    for node in order:  # leaves and constants, in the order _describe met them
        for x, child in zip(node.inputs, node.next, strict=True):
            tensor = child if child is not None and not isinstance(child, Node) else x
            if isinstance(child, Node) or not isinstance(tensor, Tensor):
                continue
            if (child is not None or constants) and id(tensor) not in ids:
                ids[id(tensor)] = f"n{len(ids)}"
                by_id[ids[id(tensor)]].value = tensor._array
                if child is not None:
                    leaves.append((by_id[ids[id(tensor)]], tensor))
    if output._array.size != 1:
        graph.note = "gradients need a single-number output: the nodes show values only"
        return
    grads: dict[int, Any] = {}
    run_backward([output], [None], on_node=lambda node, g, *_: grads.__setitem__(id(node), g))
    for node in order:
        by_id[ids[id(node)]].grad = np.asarray(grads[id(node)])
    for graph_node, tensor in leaves:
        graph_node.grad = None if tensor.grad is None else tensor.grad._array


def _out_shape(node: Node) -> tuple[int, ...]:
    return tuple(node.out.shape) if node.out is not None else ()
