"""The order of a backward pass: the nodes reachable from its outputs, each after every
node that consumes it (without recursion: deep graphs are common), and the pruning of
nodes through which no gradient reaches a wanted tensor (`agrad.autograd.grad`)."""

from __future__ import annotations

from typing import Any

from .node import Node
from .tensor import Tensor

_FINISHED = object()  # on the stack of `_topological`: the node below it is finished


def _topological(roots: list[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each after every node that consumes it."""
    order: list[Node] = []
    seen: set[Node] = set()  # nodes hash by identity
    stack: list[Any] = list(reversed(roots))
    push, pop, mark = stack.append, stack.pop, seen.add
    while stack:
        node = pop()
        if node is _FINISHED:  # (a marker, not a tuple per node: it is read for every one)
            order.append(pop())
            continue
        if node in seen:
            continue
        mark(node)
        push(node)
        push(_FINISHED)
        arity = node.arity
        if arity == 1:
            child = node.n0
            if child is not None and type(child) is not Tensor and child not in seen:
                push(child)
            continue
        for child in (node.n0, node.n1) if arity == 2 else node.n0:
            if child is not None and type(child) is not Tensor and child not in seen:
                push(child)
    order.reverse()
    return order


def _prune(order: list[Node], wanted_nodes: set[int], wanted_leaves: set[int]) -> list[Node]:
    """Keep only nodes through which a gradient can reach a wanted tensor."""
    useful: set[int] = set()
    for node in reversed(order):  # producers first
        if id(node) in wanted_nodes:
            useful.add(id(node))
            continue
        for c in (node.n0,) if node.arity == 1 else node.next:
            if c is not None and (id(c) in wanted_leaves if type(c) is Tensor else id(c) in useful):
                useful.add(id(node))
                break
    return [n for n in order if id(n) in useful]
