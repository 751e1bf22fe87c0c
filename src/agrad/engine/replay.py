"""Re-run a recorded graph on new input arrays, with NumPy only.

Finite differences evaluate the same function thousands of times; a `Tape`
replays the op applications the engine recorded (the forward functions of the
op table, in order) without building tensors or nodes, so each evaluation
costs little more than the NumPy calls themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .graph_order import _topological
from .node import Node
from .tensor import Tensor

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
        values: list = []
        for op, refs, params in self.steps:
            args = [
                arrays[r] if kind == _LEAF else values[r] if kind == _NODE else r
                for kind, r in refs
            ]
            if op.mutates:  # write into a copy, wide enough for the value written
                args[0] = np.array(args[0], dtype=np.result_type(args[0], args[1]), copy=True)
            values.append(op.forward(*args, **params))
        return np.asarray(values[self.root])


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
