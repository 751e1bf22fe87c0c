"""The caller's tensors as a checked function's arguments (`Held`): gradcheck moves them in
place, as PyTorch's does, so that every use of them moves."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.tensor import Tensor, wrap


class Held:
    """``inputs`` as a call's arguments, each floating tensor holding float64 values
    (``points[i]`` for input i, else its own) while the call runs (``with Held(...) as
    args``): the caller's tensors themselves, so that every use of one moves with it —
    through a closure, a module's parameters, tied weights, or a view or detached alias
    made before (QA rounds 28, 29: with fresh copies or swapped arrays, a forgotten
    gradient through them passed, and a right one failed), as PyTorch's gradcheck moves
    its inputs in place. A float64 tensor is written in place and given back its values
    (``originals``: id -> them, taken once); another holds a float64 array instead of its
    own (a view of another tensor: a float64 copy). A class, not a generator: it runs for
    every point a custom Function is called at."""

    __slots__ = ("inputs", "points", "originals", "held", "written", "swap")

    def __init__(self, inputs: tuple, points: dict, originals: dict, swap: bool = True) -> None:
        self.inputs, self.points, self.originals, self.swap = inputs, points, originals, swap
        self.held: list[tuple[Tensor, np.ndarray]] = []
        self.written: list[tuple[Tensor, np.ndarray]] = []

    def __enter__(self) -> tuple:
        inputs, points = self.inputs, self.points
        args: list[Any] = []
        given: set[int] = set()  # (the same tensor given twice is moved once)
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor) or x._array.dtype.kind != "f" or id(x) in given:
                args.append(x)
                continue
            given.add(id(x))
            point = points.get(i)
            if point is None and points:  # (given twice: moved at either place)
                point = next((points[j] for j, y in enumerate(inputs) if y is x and j in points),
                             None)  # fmt: skip
            array = x._array
            if id(x) in self.originals and array.flags.writeable:
                if point is not None:
                    self.written.append((x, array))
                    array[...] = point
                args.append(x)
            elif x._base is None and self.swap:
                self.held.append((x, array))
                x._array = np.array(array if point is None else point, dtype=np.float64)
                args.append(x)
            else:
                args.append(wrap(np.array(array if point is None else point, np.float64), x._rg))
        return tuple(args)

    def __exit__(self, *exc: Any) -> None:
        for x, array in reversed(self.written):
            array[...] = self.originals[id(x)]
        for x, array in reversed(self.held):
            x._array = array


def originals_of(inputs: tuple) -> dict[int, np.ndarray]:
    """The values of the float64 inputs `Held` writes into, to give them back."""
    return {id(x): x._array.copy() for x in inputs
            if isinstance(x, Tensor) and x._array.dtype == np.float64}  # fmt: skip
