"""The order of a backward pass: the nodes reachable from its outputs, each after every
node that consumes it (without recursion: deep graphs are common), and the pruning of
nodes through which no gradient reaches a wanted tensor (`agrad.autograd.grad`)."""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from .node import Node
from .tensor import Tensor

_FINISHED = object()  # on the stack of `_topological`: the node below it is finished


def _chain(root: Node) -> list[Node] | None:
    """The order of a graph that is a chain from ``root`` (every node has at most one
    producer that is a node: a layer, a loss, most Jacobians' functions), else None.

    A chain's order is its path, which `_topological` would also give, found without the
    search's set and stack: on small graphs those cost more than the nodes' own steps."""
    order = [root]
    emit = order.append
    node = root
    while True:
        arity = node.arity
        if arity == 1:
            down = node.n0
        elif arity == 2:
            down, other = node.n0, node.n1
            if down is None or type(down) is Tensor:
                down = other
            elif other is not None and type(other) is not Tensor:
                return None  # two producers: not a chain
        else:
            return None
        if down is None or type(down) is Tensor:
            return order
        emit(down)
        node = down


def _topological(roots: list[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each after every node that consumes it.

    A depth-first search that finishes a node after its producers (the last operand's
    first); it goes down to the next unseen producer at once rather than through the
    stack, since most nodes have one (a chain), and a node with none is finished at once.
    The order is exactly the plain search's: gradients summed at a node add up in it."""
    order: list[Node] = []
    seen: set[Node] = set()  # nodes hash by identity
    stack: list[Any] = list(reversed(roots))
    push, pop, mark, emit = stack.append, stack.pop, seen.add, order.append
    while stack:
        node = pop()
        if node is _FINISHED:  # (a marker, not a tuple per node: it is read for every one)
            emit(pop())
            continue
        if node in seen:
            continue
        while True:
            mark(node)
            arity = node.arity
            if arity == 0:  # any other number of operands: all on the stack
                push(node)
                push(_FINISHED)
                for child in node.n0:
                    if child is not None and type(child) is not Tensor and child not in seen:
                        push(child)
                break
            down = node.n0
            if down is not None and (type(down) is Tensor or down in seen):
                down = None
            if arity == 2:
                child = node.n1
                if child is not None and type(child) is not Tensor and child not in seen:
                    push(node)
                    push(_FINISHED)
                    if down is not None:
                        push(down)  # (explored after the last operand's producers)
                    node = child
                    continue
            if down is None:  # no producer left to explore: finished
                emit(node)
                break
            push(node)
            push(_FINISHED)
            node = down
    order.reverse()
    return order


def _prune_chain(
    order: list[Node], wanted_nodes: Container[int], wanted_leaves: Container[int]
) -> list[Node]:
    """`_prune` of a chain (`_chain`'s order): the path down to its last node that is
    wanted or has a wanted leaf as an operand, since each node reaches only those below it."""
    for last in range(len(order) - 1, -1, -1):
        node = order[last]
        if id(node) in wanted_nodes:
            break
        leaf = node.n0
        if type(leaf) is Tensor and id(leaf) in wanted_leaves:
            break
        if node.arity == 2:
            leaf = node.n1
            if type(leaf) is Tensor and id(leaf) in wanted_leaves:
                break
    else:
        return []
    return order if last == len(order) - 1 else order[: last + 1]


def _prune(
    order: list[Node], wanted_nodes: Container[int], wanted_leaves: Container[int]
) -> list[Node]:
    """Keep only nodes through which a gradient can reach a wanted tensor."""
    useful: set[int] = set()
    keep = useful.add
    for node in reversed(order):  # producers first
        key = id(node)
        if key in wanted_nodes:
            keep(key)
            continue
        arity = node.arity
        for c in (node.n0,) if arity == 1 else (node.n0, node.n1) if arity == 2 else node.n0:
            if c is not None and (id(c) in wanted_leaves if type(c) is Tensor else id(c) in useful):
                keep(key)
                break
    if len(useful) == len(order):  # (nothing to drop: the common case of a Jacobian)
        return order
    return [n for n in order if id(n) in useful]
