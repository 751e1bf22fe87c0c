"""The backward pass, step by step, as a student works it out by hand.

For each node in the order the engine processes it (reverse topological): the
gradient arriving, the local derivative rule, and what it sends to each input —
including the sum over a batch that broadcasting implies — ending at the
leaves' accumulated gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.autograd import run_backward
from ..engine.node import Node
from ..engine.tensor import Tensor


@dataclass
class Sent:
    """One edge of a step: the gradient sent to an input (None: a constant gets none)."""

    to: str
    kind: str  # "op", "leaf" or "constant"
    grad: np.ndarray | None
    summed_from: np.ndarray | None = None  # the gradient before the broadcast reduction


@dataclass
class Step:
    number: int
    node: str
    variable: str | None
    grad_in: np.ndarray
    rule: str
    sends: list[Sent] = field(default_factory=list)


def explain(output: Tensor, variables: dict[str, Tensor], seed: Any = None) -> list[Step]:
    """Run backward on ``output`` (accumulating into leaves) and record every step."""
    node_names = {id(t.grad_fn): n for n, t in variables.items() if t.grad_fn is not None}
    leaf_names = {id(t): n for n, t in variables.items()}
    labels: dict[int, str] = {}
    steps: list[Step] = []

    def label(node: Node) -> str:
        if id(node) not in labels:
            name = node_names.get(id(node))
            labels[id(node)] = f"{node.name()}" + (f" ({name})" if name else "")
        return labels[id(node)]

    def observe(node: Node, g: Any, grads: list, raw: tuple) -> None:
        step = Step(
            len(steps) + 1,
            label(node),
            node_names.get(id(node)),
            np.asarray(g),
            node.op.explain,  # every differentiable entry has one
        )
        for x, child, gi, ri in zip(node.inputs, node.next, grads, raw, strict=True):
            if child is None:
                name = leaf_names.get(id(x), "constant") if isinstance(x, Tensor) else "constant"
                step.sends.append(Sent(name, "constant", None))
                continue
            if isinstance(child, Node):
                target, kind = label(child), "op"
            else:
                target, kind = leaf_names.get(id(child), "leaf"), "leaf"
            before = np.asarray(ri) if np.shape(ri) != np.shape(gi) else None
            step.sends.append(Sent(target, kind, np.asarray(gi), before))
        steps.append(step)

    if output.grad_fn is not None:
        run_backward([output], [seed], on_node=observe)
    return steps
