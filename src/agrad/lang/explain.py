"""The backward pass, step by step, as a student works it out by hand.

For each node in the order the engine processes it (reverse topological): the operands
it was applied to (which letter of its rule each one is, named as the program names it,
with its value), the gradient arriving (and the sum, when several consumers sent one),
its local rule with the program's names in it, evaluated at the forward values, and what
it sends to each input — g times the local derivative, then the sum over a batch that
broadcasting implies — ending at the leaves' accumulated gradients.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.autograd import run_backward
from ..engine.namespaces import NUMPY
from ..engine.node import Node
from ..engine.shape_rules import broadcast_shape, same_shape
from ..engine.tensor import Tensor


@dataclass
class Operand:
    """One input of a step: its letter in the rule, the program's name for it (None: it
    has none, the letter stays), what produced it, and its value (None: not kept)."""

    letter: str
    name: str | None
    source: str
    value: np.ndarray | None
    kind: str  # "op", "leaf" or "constant"

    @property
    def shown(self) -> str:
        return self.name or self.letter


@dataclass
class Sent:
    """One edge of a step: the gradient sent to an input (None: a constant gets none)."""

    to: str
    kind: str  # "op", "leaf" or "constant"
    grad: np.ndarray | None
    summed_from: np.ndarray | None = None  # the gradient before the broadcast reduction
    local: np.ndarray | None = None  # the local derivative (elementwise ops), g·local is sent
    letter: str = ""
    step: int | None = None  # the step that receives it (an op)
    target: int = 0  # (the receiving node's id, until its step is known)


@dataclass
class Step:
    number: int
    node: str
    variable: str | None
    grad_in: np.ndarray
    rule: str
    sends: list[Sent] = field(default_factory=list)
    operands: list[Operand] = field(default_factory=list)
    rule_named: str = ""  # the rule with the program's names for its letters
    contributions: list[np.ndarray] = field(default_factory=list)  # summed into grad_in


class Explanation(list):
    """The steps (a list), and each leaf's gradient as the sum of what reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.leaves: dict[str, list[np.ndarray]] = {}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LETTERS = {1: ("a",), 2: ("a", "b"), 3: ("c", "a", "b")}  # (where(c, a, b))
_FRESH = "uvqrstkmnh"  # letters for unnamed operands whose own the program uses as a name


def explain(output: Tensor, variables: dict[str, Tensor], seed: Any = None) -> Explanation:
    """Run backward on ``output`` (accumulating into leaves) and record every step."""
    node_names = {id(t.grad_fn): n for n, t in variables.items() if t.grad_fn is not None}
    leaf_names = {id(t): n for n, t in variables.items()}
    taken = set(variables)
    labels: dict[int, str] = {}
    arriving: dict[int, list[np.ndarray]] = {}
    steps = Explanation()

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
        contributions = arriving.pop(id(node), [])
        step.contributions = contributions if len(contributions) > 1 else []
        step.operands = _operands(node, leaf_names, node_names, label, taken)
        step.rule_named = _named_rule(node, step.operands)
        locals_ = _local_derivatives(node)
        for i, (x, child, gi, ri) in enumerate(
            zip(node.inputs, node.next, grads, raw, strict=True)
        ):
            letter = step.operands[i].letter if i < len(step.operands) else ""
            if child is None:
                name = leaf_names.get(id(x), "constant") if isinstance(x, Tensor) else "constant"
                step.sends.append(Sent(name, "constant", None, letter=letter))
                continue
            if isinstance(child, Node):
                target, kind = label(child), "op"
                arriving.setdefault(id(child), []).append(np.asarray(gi))
            else:
                target, kind = leaf_names.get(id(child), "leaf"), "leaf"
                steps.leaves.setdefault(target, []).append(np.asarray(gi))
            before = np.asarray(ri) if np.shape(ri) != np.shape(gi) else None
            local = None if locals_ is None else locals_[i]
            step.sends.append(
                Sent(target, kind, np.asarray(gi), before, local, letter, target=id(child))
            )
        numbers[id(node)] = step.number
        steps.append(step)

    numbers: dict[int, int] = {}
    if output.grad_fn is not None:
        run_backward([output], [seed], on_node=observe)
    for step in steps:
        for sent in step.sends:
            sent.step = numbers.get(sent.target) if sent.kind == "op" else None
    return steps


def _letters(node: Node) -> tuple[str, ...]:
    return ("A", "B") if node.op.name == "matmul" else _LETTERS.get(len(node.inputs), ())


def _operands(node: Node, leaf_names: dict, node_names: dict, label: Any, taken: set) -> list:
    letters = _letters(node)
    fresh = iter(c for c in _FRESH if c not in taken)
    operands = []
    for i, (x, child) in enumerate(zip(node.inputs, node.next, strict=True)):
        letter = letters[i] if i < len(letters) else f"x{i}"
        name = leaf_names.get(id(x)) if isinstance(x, Tensor) else None
        if name is None and isinstance(child, Node):
            name = node_names.get(id(child))
        if name is None and letter in taken:  # the letter stays: one the program does not use
            letter = next(fresh, letter)
        source = label(child) if isinstance(child, Node) else "a constant"
        kind = "op" if isinstance(child, Node) else "leaf" if child is not None else "constant"
        data = node.arrays[i] if i < len(node.arrays) else None
        value = np.asarray(data) if isinstance(data, (np.ndarray, float, int)) else None
        operands.append(Operand(letter, name, source, value, kind))
    return operands


def _named_rule(node: Node, operands: list[Operand]) -> str:
    """The rule with each operand's letter replaced by its program name (simultaneously),
    and a single scalar parameter (pow's exponent p) by its value."""
    letters = _letters(node)
    mapping = {own: operand.shown for own, operand in zip(letters, operands, strict=False)}
    scalars = [v for v in node.params.values() if isinstance(v, (int, float))]
    if len(scalars) == 1 and not isinstance(scalars[0], bool):
        value = f"{scalars[0]:g}"
        for word in _WORD.findall(node.op.explain):
            if len(word) == 1 and word not in (*letters, "d", "g"):
                mapping.setdefault(word, value)
                break
    if all(k == v for k, v in mapping.items()):
        return node.op.explain

    def replace(match: re.Match) -> str:
        word = match.group()
        if word in mapping:
            return mapping[word]
        if len(word) == 2 and word[0] == "d" and word[1] in mapping:  # da -> d(name)
            name = mapping[word[1]]
            return "d" + name if len(name) == 1 else f"d({name})"
        return word

    parts = []
    for part in node.op.explain.split(", "):
        head, paren, comment = part.partition(" (")  # a trailing remark keeps its words
        parts.append(_WORD.sub(replace, head) + paren + comment)
    return ", ".join(parts)


def _local_derivatives(node: Node) -> list | None:
    """d out/d input, elementwise, for elementwise ops (the VJP of a cotangent of ones):
    what the gradient arriving is multiplied by. None for other ops or unkept values."""
    op = node.op
    if op.shape_rule not in (same_shape, broadcast_shape) or not isinstance(node.out, np.ndarray):
        return None
    if not all(isinstance(a, (np.ndarray, float, int)) for a in node.arrays):
        return None
    ones = np.ones(node.out.shape, dtype=node.out.dtype)
    extra = {"needs": tuple(n is not None for n in node.next)} if op.needs_mask else {}
    with np.errstate(all="ignore"):
        grads = op.vjp(NUMPY, ones, node.out, *node.arrays, **extra, **node.params)
    return [None if g is None else np.broadcast_to(g, node.out.shape) for g in grads]
