"""The recorded graph as plain data: nodes (backward functions and leaves) and edges.

Used by `agrad graph` to draw it and by `--explain` to name its steps. Edges go
the way data flows, from an input to the op that consumed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .autograd import _topological
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


@dataclass
class Graph:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # (source, target)


def describe(
    output: Tensor, variables: dict[str, Tensor] | None = None, constants: bool = False
) -> Graph:
    """The graph behind ``output``. ``variables`` (name -> tensor) names the nodes: an op
    node takes the name of the tensor it produced. ``constants`` adds inputs that do
    not require grad (PyTorch's next_functions shows them as None)."""
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


def _out_shape(node: Node) -> tuple[int, ...]:
    return tuple(node.out.shape) if node.out is not None else ()
