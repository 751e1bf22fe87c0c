"""When a recorded graph is the function: a replay for gradcheck's numeric side, proved
first and cross-checked while it runs.

`callables.AgradCallableTarget` calls the user's function itself at every point, unless
its recording proves that the graph is the function; then the numeric side replays the
graph batched (`engine.replay.Tape`, as `agrad check` does for programs). The proof:

1. the recorded call moved no escape counter (`engine.escapes`: ``item``, ``numpy``,
   ``detach``, ``bool``, ``.data``, random draws, and any value read to make what the
   graph does not record: a comparison's mask, argmax's or sort's indices, an integer
   cast) and switched grad mode off nowhere (a ``no_grad`` block inside): a gradient
   lost there would be lost by a replay, and a mask held fixed hides its jumps (two of
   opposite weight cancel in every value a probe sees);
2. every node is an op of the table (a custom Function's node is the user's own code,
   never replayed);
3. recordings at four perturbed points give the same tape, ops, parameters and
   constants bit for bit: no constant depends on the inputs (an inner ``autograd.grad``,
   a deep copy, private state, a value read through a private attribute).

Then the replay is cross-checked against real calls: at the base and at four perturbed
points before it is used (the base moved both ways along two directions, see
`directions`: any boundary a comparison's mask puts within the ladder's first step along
a coordinate is crossed), at a few of the ladder's points while it runs, and at the worst
element's points at the end. Any disagreement beyond rounding raises `ReplayMismatch`,
and the checker starts the variable again calling the function point by point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..engine.batching import Unbatchable
from ..engine.escapes import ESCAPES
from ..engine.grad_mode import OFF_GUARDS
from ..engine.ops.core import TABLE
from ..engine.replay import _CONST, Tape
from ..engine.tensor import Tensor
from . import steps as S

EPS = float(np.finfo(np.float64).eps)
AGREE = 2.0**8 * EPS  # replay and call agree to this, relative to the values' size
SAMPLES = 8  # ladder points per variable checked against a real call
PERTURBED = 2  # directions (each both ways) checked before a stand-in is used


class ReplayMismatch(Exception):
    """The replay of the recorded graph and a real call of the function disagree."""


@contextmanager
def escapes() -> Any:
    """Within the block, ``moved()`` says whether a value left the graph into Python or
    grad mode was switched off (in any thread: a false alarm only costs speed)."""
    before = ESCAPES[0]
    offs = [0]

    def guard() -> None:
        offs[0] += 1

    OFF_GUARDS.append(guard)
    try:
        yield lambda: ESCAPES[0] != before or offs[0] > 0
    finally:
        OFF_GUARDS.remove(guard)


def replayable(tape: Tape) -> bool:
    """Every recorded node is an op of the table, which the Tape re-runs as recorded."""
    return all(TABLE.get(op.name) is op for op, _, _ in tape.steps)


def same_tape(a: Tape, b: Tape) -> bool:
    """The same ops on the same constants with the same parameters, bit for bit."""
    if a.root != b.root or len(a.steps) != len(b.steps):
        return False
    if not _same(a.output_const, b.output_const):
        return False
    for (op_a, refs_a, params_a), (op_b, refs_b, params_b) in zip(a.steps, b.steps, strict=True):
        if op_a is not op_b or len(refs_a) != len(refs_b) or params_a.keys() != params_b.keys():
            return False
        for (kind_a, ref_a), (kind_b, ref_b) in zip(refs_a, refs_b, strict=True):
            same = _same(ref_a, ref_b) if kind_a == _CONST else ref_a == ref_b
            if kind_a != kind_b or not same:
                return False
        if not all(_same(params_a[k], params_b[k]) for k in params_a):
            return False
    return True


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return False
        a, b = a._array, b._array
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    try:
        return bool(a == b)
    except Exception:  # an object without a plain equality: not provably the same
        return False


def agree(real: np.ndarray, replay: np.ndarray) -> bool:
    """Equal but for rounding (nan where nan, the same infinities)."""
    real = np.asarray(real, dtype=np.float64)
    replay = np.asarray(replay, dtype=np.float64)
    if real.shape != replay.shape:
        return False
    if (real == replay).all():  # (the common case: the same operations, bit for bit)
        return True
    with np.errstate(all="ignore"):
        size = np.maximum(np.abs(real), np.abs(replay))
        close = np.abs(real - replay) <= AGREE * size
    same = (real == replay) | (np.isnan(real) & np.isnan(replay))
    return bool(np.all(close | same))


class Replay:
    """The tapes of one float64 recording (one per output), over the variables' leaves."""

    def __init__(self, tapes: list[Tape], bases: list[np.ndarray], real: Callable) -> None:
        self.tapes = tapes
        self.bases = bases
        self.real = real  # real(arrays) -> flat float64 values of a call of the function
        self.holomorphic = all(t.holomorphic for t in tapes)

    def at(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """The replay at one point (every variable given), flat."""
        return np.concatenate([np.asarray(t(*arrays), np.float64).reshape(-1) for t in self.tapes])

    def cross_check(self, steps: list, at_base: np.ndarray, at_points: list) -> bool:
        """The replay agrees with real calls at the base and at the base moved by each of
        ``steps`` both ways (``at_points``: the real values there, in `moved`'s order)."""
        if not agree(at_base, self.at(self.bases)):
            return False
        points = moved(self.bases, steps)
        return all(agree(v, self.at(p)) for v, p in zip(at_points, points, strict=True))

    def batch(self, k: int, complex_: bool = False) -> Callable[[np.ndarray], np.ndarray]:
        """Points (B, *shape) of variable k, the others at their base -> (B, m)."""
        tapes = [t.complex() for t in self.tapes] if complex_ else self.tapes
        arrays = list(self.bases)
        batched = [True] * len(tapes)

        def run(points: np.ndarray) -> np.ndarray:
            parts = []
            for j, tape in enumerate(tapes):
                if batched[j]:
                    try:
                        out = np.asarray(tape.batch(k, points, arrays))
                        parts.append(out.reshape(len(points), -1))
                        continue
                    except Unbatchable:
                        batched[j] = False
                rows = []
                for p in points:
                    args = list(arrays)
                    args[k] = p
                    rows.append(np.asarray(tape(*args)).reshape(-1))
                parts.append(np.stack(rows))
            return np.concatenate(parts, axis=1)

        return run

    def checked_batch(self, k: int) -> tuple[Callable, Callable]:
        """The batch of variable k, checked against real calls (see `checked`)."""

        def real_at(point: np.ndarray) -> np.ndarray:
            args = list(self.bases)
            args[k] = point
            return self.real(args)

        return checked(self.batch(k), real_at)


def checked(run: Callable, real_at: Callable) -> tuple[Callable, Callable]:
    """A stand-in batch evaluator ``run`` with a few of its points (``SAMPLES`` in all)
    checked against ``real_at(point)``, a real call of the function, and
    ``confirm(points)``, which checks given ones; both raise `ReplayMismatch`."""
    state = {"calls": 0, "left": SAMPLES}

    def confirm(points: np.ndarray) -> None:
        for p, v in zip(points, run(points), strict=True):
            if not agree(real_at(p), v):
                raise ReplayMismatch("the stand-in differs from a call of the function")

    def batch(points: np.ndarray) -> np.ndarray:
        values = run(points)
        state["calls"] += 1
        if state["left"] > 0 and len(points):
            state["left"] -= 1
            row = (state["calls"] * 7919) % len(points)
            if not agree(real_at(points[row]), values[row]):
                raise ReplayMismatch("the stand-in differs from a call of the function")
        return values

    return batch, confirm


def directions(bases: list[np.ndarray], rng: np.random.Generator, count: int = PERTURBED) -> list:
    """``count`` steps of every variable by the ladder's first step: random signs first
    (every coordinate moves by exactly that step, so of the two points base ± step one
    crosses any boundary that the ladder's points along a coordinate would cross), then
    Gaussian directions (boundaries across coordinates: ties, sums)."""
    steps = []
    for d in range(count):
        step = []
        for b in bases:
            h = S.START * S.element_scale(b).reshape(b.shape)
            r = 2.0 * rng.integers(0, 2, b.shape) - 1.0 if d == 0 else rng.standard_normal(b.shape)
            step.append(h * r)
        steps.append(step)
    return steps


def moved(bases: list[np.ndarray], steps: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """The base moved by each step, forward then back."""
    return [[np.asarray(b + sign * d) for b, d in zip(bases, step, strict=True)]
            for step in steps for sign in (1.0, -1.0)]  # fmt: skip
