"""Re-run a recorded graph on new input arrays.

Finite differences evaluate the same function thousands of times; a `Tape`
replays the op applications the engine recorded (the forward functions of the
op table, in order) with NumPy only, without building tensors or nodes, so each
evaluation costs little more than the NumPy calls themselves. A `Rerecord` applies
them again as the engine does, recording a graph to differentiate (``agrad fit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from .graph_order import _topological
from .node import Node
from .tensor import Tensor, wrap

_LEAF, _NODE, _CONST = 0, 1, 2


class Tape:
    """``Tape(output, inputs)(*arrays)`` recomputes ``output`` with ``inputs`` replaced.

    ``inputs`` may be leaves or intermediates (an intermediate's producer is then
    skipped and its value taken from the arguments). Values that do not depend on
    the inputs are kept as recorded.
    """

    def __init__(self, output: Tensor, inputs: Sequence[Tensor]) -> None:
        self.inputs = list(inputs)
        self.output_const = None if output.grad_fn is not None else output._array
        slot_of_leaf = {id(t): k for k, t in enumerate(inputs) if t.grad_fn is None}
        slot_of_node = {id(t.grad_fn): k for k, t in enumerate(inputs) if t.grad_fn is not None}
        order: list[Node] = [] if output.grad_fn is None else _topological([output.grad_fn])[::-1]
        index: dict[int, int] = {}
        self.steps: list[tuple] = []
        for node in order:  # producers first
            if id(node) in slot_of_node:
                index[id(node)] = -1 - slot_of_node[id(node)]
                continue
            refs: list[tuple[int, Any]] = []
            for x, producer in zip(node.inputs, node.next, strict=True):
                if isinstance(producer, Node):  # nodes keep only the shapes of such inputs
                    k = index[id(producer)]
                    refs.append((_LEAF, -1 - k) if k < 0 else (_NODE, k))
                elif producer is not None:  # a leaf that requires grad
                    slot = slot_of_leaf.get(id(producer))
                    refs.append((_CONST, producer._array) if slot is None else (_LEAF, slot))
                else:
                    refs.append((_CONST, x._array if isinstance(x, Tensor) else x))
            index[id(node)] = len(self.steps)
            self.steps.append((node.op, tuple(refs), node.params))
        # Whether the complex step is exact through every recorded op (no kinks on the path).
        self.holomorphic = all(op.holomorphic for op, _, _ in self.steps)
        if output.grad_fn is not None:
            self.root: int | None = index[id(output.grad_fn)]
        elif id(output) in slot_of_leaf:  # the output is one of the inputs itself
            self.root = -1 - slot_of_leaf[id(output)]
        else:
            self.root = None

    def complex(self) -> Tape:
        """This tape with each op's holomorphic forward, to run on complex arrays (the
        checker's complex step); only meaningful when ``self.holomorphic``."""
        twin = object.__new__(Tape)
        twin.__dict__.update(self.__dict__)
        twin.steps = [(op.for_complex(), refs, params) for op, refs, params in self.steps]
        return twin

    def batch(self, k: int, block: np.ndarray, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """Outputs at ``len(block)`` points where input ``k`` takes each row of ``block``
        (the other inputs as in ``arrays``), in one pass of batched NumPy calls.
        Raises `batching.Unbatchable` when an op has no batching rule."""
        return _batched_call(self, k, block, arrays)

    def __call__(self, *arrays: np.ndarray) -> np.ndarray:
        if self.root is None:
            return np.asarray(self.output_const)
        if self.root < 0:
            return np.asarray(arrays[-1 - self.root])
        return np.asarray(self.values(*arrays)[self.root])

    def own_constants(self) -> Tape:
        """Copy the constants' arrays (in place; returns itself): a caller that writes into
        its inputs' storage (gradcheck's) must not move what was recorded, such as a
        detached alias of an input."""

        def own(kind: int, ref: Any) -> tuple[int, Any]:
            return kind, ref.copy() if kind == _CONST and isinstance(ref, np.ndarray) else ref

        self.steps = [(op, tuple(own(*r) for r in refs), params) for op, refs, params in self.steps]
        if isinstance(self.output_const, np.ndarray):
            self.output_const = self.output_const.copy()
        return self

    def operand(self, values: list, arrays: Sequence[np.ndarray], step: int, k: int = 0) -> Any:
        """Operand ``k`` of ``steps[step]`` in the run that gave ``values`` (`values`) with
        the inputs at ``arrays``."""
        kind, r = self.steps[step][1][k]
        return arrays[r] if kind == _LEAF else values[r] if kind == _NODE else r

    def values(self, *arrays: np.ndarray) -> list:
        """Every step's value with the inputs at ``arrays`` (in the order of ``steps``)."""
        values: list = []
        for op, refs, params in self.steps:
            args = [
                arrays[r] if kind == _LEAF else values[r] if kind == _NODE else r
                for kind, r in refs
            ]
            if op.mutates:  # write into a copy, wide enough for the value written
                args[0] = np.array(args[0], dtype=np.result_type(args[0], args[1]), copy=True)
            values.append(op.forward(*args, **params))
        return values


class Rerecord:
    """``Rerecord.of(output, leaves)(others)`` records ``output``'s graph again with the
    leaves' values replaced, through `apply`: a real graph (nodes, views, saved values)
    for the ordinary backward pass, without the code that recorded it the first time.
    (``leaves`` replaced: its other leaves that require grad are made anew, as the code
    would, and its constants are the recorded ones.)

    `agrad fit` runs its program so each step: the language's instructions cost more than
    the ops they apply. The graph is the one the code would record only when nothing in it
    was decided by the values (`of` refuses otherwise): no value that requires grad
    escaped into Python or into an untracked result while it was recorded (the caller
    counts `escapes.ESCAPES[1]`: a mask, an index, ``tensor(w)`` would be held fixed), and
    every node is an op-table node of one output that writes into nothing.
    """

    def __init__(self, leaves: int, fresh: list[np.ndarray], constants: list, steps: list) -> None:
        # One list of values per call: the leaves, the other leaves made anew, the
        # constants, then each step's output in turn; a step reads its operands from it
        # with an itemgetter (a call in C, not a comprehension: fit runs this every step).
        self.leaves, self.fresh, self.constants = leaves, fresh, constants
        self.steps = [(op, itemgetter(*where), len(where) == 1, params)
                      for op, where, params in steps]  # fmt: skip

    @classmethod
    def of(cls, output: Tensor, leaves: Sequence[Tensor]) -> Rerecord | None:
        """The rerecording of ``output``'s graph with ``leaves`` replaced; None where
        the graph is not one `Rerecord` can repeat."""
        if output.grad_fn is None:
            return None
        nodes = _topological([output.grad_fn])[::-1]  # producers first
        slot: dict[int, int] = {id(t): k for k, t in enumerate(leaves)}
        fresh: list[np.ndarray] = []  # other leaves that require grad: made anew each time
        constants: list = []
        for node in nodes:  # (the leaves made anew and the constants come first)
            for x, producer in zip(node.inputs, node.next, strict=True):
                if type(producer) is Tensor and id(producer) not in slot:
                    slot[id(producer)] = len(leaves) + len(fresh)
                    fresh.append(producer._array)
                elif producer is None:
                    constants.append(x)
        steps: list[tuple] = []
        kept = len(leaves) + len(fresh)
        outputs = kept + len(constants)
        for node in nodes:
            op = node.op
            if not node.plain or op.mutates or node.outputs != 1:
                return None
            where = []
            for x, producer in zip(node.inputs, node.next, strict=True):
                if producer is None:
                    where.append(kept)
                    kept += 1
                elif getattr(x, "_output_nr", 0) != 0:
                    return None
                else:
                    where.append(slot[id(producer)])
            if op.prepare is not None and not _prepared(op, node):
                return None
            slot[id(node)] = outputs + len(steps)
            steps.append((op, tuple(where), node.params))
        if slot[id(output.grad_fn)] != outputs + len(steps) - 1:
            return None  # (the output is the last step, as a topological order has it)
        return cls(len(leaves), fresh, constants, steps)

    def __call__(self, leaves: Sequence[Tensor]) -> Tensor:
        """The output recorded with ``leaves`` (tensors that require grad, one for each of
        the first recording's) in place of the first recording's."""
        from .ops import apply  # (the op table imports this module's users)

        values = list(leaves)
        if len(values) != self.leaves:
            raise ValueError(f"expected {self.leaves} leaves, got {len(values)}")
        for array in self.fresh:
            values.append(wrap(array, True))
        values += self.constants
        push = values.append
        for op, operands, single, params in self.steps:
            if single:
                push(apply(op, operands(values), **params))
            else:
                push(apply(op, *operands(values), **params))
        return values[-1]


def _prepared(op: Any, node: Node) -> bool:
    """Whether `apply`, given the parameters ``node`` recorded, finds them again from the
    operands (``prepare`` depends on their shapes only, which a rerecording keeps)."""
    try:
        again = op.prepare(*node.arrays, **node.params)
        return again.keys() == node.params.keys() and all(
            again[k] is v or (type(v) is not np.ndarray and again[k] == v)
            for k, v in node.params.items()
        )
    except Exception:  # noqa: BLE001 - anything unusual: not repeated, the program runs
        return False


def _batched_call(tape: Tape, k: int, block: np.ndarray, arrays: Sequence[np.ndarray]):
    """Evaluate ``tape`` at ``len(block)`` points that differ only in input ``k``."""
    from .batching import apply_batched

    size = block.shape[0]
    if tape.root is None:
        return np.broadcast_to(tape.output_const, (size, *np.shape(tape.output_const)))
    inputs = [(a, False) for a in arrays]
    inputs[k] = (block, True)
    if tape.root < 0:
        return _batched_full(inputs[-1 - tape.root], size)
    values: list = []
    for op, refs, params in tape.steps:
        args = [
            inputs[r] if kind == _LEAF else values[r] if kind == _NODE else (r, False)
            for kind, r in refs
        ]
        values.append(apply_batched(op, args, params, size))
    return _batched_full(values[tape.root], size)


def _batched_full(value, size: int) -> np.ndarray:
    array, batched = value
    array = np.asarray(array)
    return array if batched else np.broadcast_to(array, (size, *array.shape))
