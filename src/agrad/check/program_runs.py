"""A program's replay, and the runs of the program that must back it where the replay
holds a value fixed at the point.

The numeric side of `agrad check` replays the recorded graph (`engine.replay.Tape`). A
comparison's result (``x > 0``, a where's condition), an index computed from the values,
or the positions an op chose by value (max's, max_pool2d's) are constants of that tape:
the replay cannot see the jump or kink they make at the point. A program without any of
them is its replay; one with them is run for real where the replay could be wrong:

- up to `PER_ELEMENT` elements, each element is moved by the ladder's first step both ways
  and by one ulp both ways (4 runs an element: any boundary the ladder's points along it
  cross is crossed there, and one at the point itself),
  and the elements where a run and the replay differ are evaluated by running the program
  at every point, the others by the replay;
- beyond that, every element is moved at once (random signs, then Gaussian directions,
  each both ways); the fixed values where the program makes them (`fixed_slots`: the
  mask itself, which no later sum can cancel) and the outputs must be those of the
  replay there; then a few ladder points are sampled and the worst element's points
  run; on any difference the whole variable is evaluated by running the program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.namespaces import NUMPY
from ..errors import AgradError
from . import steps as S
from .recorded import agree, checked, directions, moved
from .targets import Batch, Variable, pointwise

COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
BY_VALUE = frozenset({"one_hot", "cross_entropy"})  # integer inputs read as positions
PER_ELEMENT = 4096  # elements checked one by one (two runs of the program each)
PROBES = 4  # beyond: directions (random signs, then Gaussian), each both ways
BLOCK = 2**20  # point elements per replayed block while they are


def fixed_by_value(program: Any, tape: Any, escaped: bool) -> str:
    """What the replay of ``program`` holds fixed at the point ('' for nothing);
    ``escaped``: whether its recording run read a value that requires grad outside the
    graph (`engine.escapes`: tensor(w), a batch norm's running statistics, ...)."""
    instrs = program.parsed.instrs
    if escaped:
        return "reads a value computed from a variable outside the graph"
    if _comparisons(instrs):
        return "compares values"
    if _read_as_positions(instrs):
        return "reads values as positions"
    if _computed_indices(instrs):
        return "indexes by a computed value"
    if any(op.prepare is not None for op, _, _ in tape.steps):
        return "selects elements by value (max, pooling)"
    return ""


def fixed_slots(program: Any) -> list[int]:
    """The instructions whose values the replay holds fixed, where the program makes them
    (so no later reduction can hide a change: two flipped mask elements of opposite weight
    cancel in a sum, never in the mask): comparisons, computed index values, and the
    arguments one_hot and cross_entropy read as positions."""
    instrs = program.parsed.instrs
    found = _comparisons(instrs) + _read_as_positions(instrs) + _computed_indices(instrs)
    return sorted(set(found))


def fixed_values(run: Any, slots: list[int]) -> list[np.ndarray]:
    """The values of those instructions in a run of the program; the positions read by
    value are those of integer or boolean type (one_hot's and cross_entropy's inputs)."""
    values = [np.asarray(getattr(run.slots[k], "_array", run.slots[k])) for k in slots]
    return [v for v in values if v.dtype.kind in "biu"]


def _comparisons(instrs: Any) -> list[int]:
    return [k for k, i in enumerate(instrs) if i.kind == "BINARY" and i.op in COMPARISONS]


def _read_as_positions(instrs: Any) -> list[int]:
    return [a for i in instrs if i.kind == "CALL" and i.name in BY_VALUE for a in i.args]


def _computed_indices(instrs: Any) -> list[int]:
    found = []
    for i in instrs:
        if i.kind in ("INDEX", "STORE_INDEX"):
            slots = [s for item in i.items for s in (item if isinstance(item, tuple) else (item,))
                     if isinstance(s, int)]  # fmt: skip
            found += [s for s in slots if instrs[s].kind != "CONST"]
    return found


def backed(
    base: np.ndarray,
    replay: Batch,
    exact: Batch | None,
    real_at: Callable[[np.ndarray], np.ndarray],
    probe_at: Callable[[np.ndarray], tuple[np.ndarray, list[np.ndarray]]] | None = None,
) -> Variable:
    """The variable for a program whose replay holds values fixed (see the module);
    ``probe_at(point)``: one run's output (as ``real_at``'s) and those fixed values, where
    the program makes them."""
    called = Variable(base, pointwise(real_at))
    try:
        if base.size <= PER_ELEMENT:
            affected, at_point = _affected(base, replay, real_at)
            if not affected.any():
                return Variable(base, replay, exact)
            hybrid = _hybrid(base, replay, real_at, affected)
            return Variable(base, hybrid, boundaries=np.flatnonzero(at_point))
        rng = np.random.default_rng(0)
        points = [base] + [p[0] for p in moved([base], directions([base], rng, PROBES))]
        at_base = None
        for p in points:
            if probe_at is None:
                value = real_at(p)
            else:  # a boundary crossed at a probe changes a fixed value, whatever the sums do
                value, fixed = probe_at(p)
                at_base = fixed if at_base is None else at_base
                if not all(np.array_equal(a, b) for a, b in zip(fixed, at_base, strict=True)):
                    return called
            if not agree(value, replay(p[None])[0]):
                return called
    except AgradError:
        # The program cannot run there (an input that must hold whole numbers, as a class
        # index): there is no derivative to find by moving it; the replay is kept.
        return Variable(base, replay, exact)

    def sampled(point: np.ndarray) -> np.ndarray:
        try:
            return real_at(point)
        except AgradError:  # (as above: nothing to compare there)
            return replay(point[None])[0]

    batch, confirm = checked(replay, sampled)
    return Variable(base, batch, exact, fallback=lambda: called, confirm=confirm)


def jumps_at_point(tape: Any, base: np.ndarray) -> np.ndarray | None:
    """The elements at whose point an op that jumps (floor, sign, remainder: `Op.jumps`),
    where the replay computes it, moves one and two ulps away not as a line does (by the
    same step both times, or only the second time), on either side (None: no such op, or
    too many elements to try each). A jump there hides from the ladder behind f's slope or
    curvature (x² + 1e-9·floor(x) at -3 passed, QA round 25): these elements are looked at
    over ulps for the step (`ulp_noise.keep_steps`), as a comparison's are. (Only a line's
    moves double: frac away from its step moves by one ulp, then two.)"""
    positions = _jumping(tape)
    if not positions or base.size > PER_ELEMENT:
        return None
    flat = base.reshape(-1)
    at = [np.asarray(v, dtype=np.float64) for v in _at(tape, base, positions)]
    ulp = np.spacing(np.abs(flat))
    found = []
    with np.errstate(all="ignore"):
        for j in range(flat.size):
            for sign in (1.0, -1.0):
                one, two = (_at(tape, _moved(flat, j, k * sign * ulp[j], base), positions)
                            for k in (1.0, 2.0))  # fmt: skip
                if any(_not_a_line(a, b, c) for a, b, c in zip(at, one, two, strict=True)):
                    found.append(j)
                    break
    return np.array(found, dtype=np.intp)


def stair_scanner(tape: Any, base: np.ndarray) -> Callable | None:
    """For a program with ops that jump (`Op.jumps`): ``clear(columns, steps)``, per
    column the first of its steps (C, L), coarsest first, from which every finer step
    moves the element both ways without crossing a stair of any such op (L: none). Below
    it f is as smooth as the program's other ops: round(x·1e6)/1e6 + x is a staircase to
    steps wider than its stairs, which measure its average slope (2), and a line of
    slope 1 between them (`stairs`). A stair is crossed where an op's piece changes: its
    value less its slope in its first operand times that operand (floor's slope is 0,
    frac's and remainder's 1: their rules', at the point). None without such ops."""
    positions = _jumping(tape)
    if not positions:
        return None
    flat = base.reshape(-1)
    with np.errstate(all="ignore"):
        values = tape.values(base)
        slopes = [_slope(tape, values, base, i) for i in positions]
        at = _pieces(tape, base, positions, slopes)
        # (a piece is exact between stairs; a stair moves it by 1, or remainder's divisor)
        scale = [np.abs(np.asarray(tape.operand(values, [base], i), dtype=np.float64))
                 for i in positions]  # fmt: skip
        tolerance = [4 * S.EPS * np.maximum(s, np.abs(a)) for s, a in zip(scale, at, strict=True)]

    def clear(columns: np.ndarray, steps: np.ndarray) -> np.ndarray:
        first = np.full(len(columns), steps.shape[1], dtype=np.intp)
        with np.errstate(all="ignore"):
            for c, j in enumerate(columns):
                for k in range(steps.shape[1] - 1, -1, -1):  # from the finest step up
                    moves = (_moved(flat, j, sign * steps[c, k], base) for sign in (1.0, -1.0))
                    if not all(_same(at, _pieces(tape, p, positions, slopes), tolerance)
                               for p in moves):  # fmt: skip
                        break
                    first[c] = k
        return first

    return clear


def _jumping(tape: Any) -> list[int]:
    """The steps of ``tape`` whose op jumps (`Op.jumps`), where it computes its output."""
    if tape.root is None or tape.root < 0:
        return []
    return [i for i, (op, _, _) in enumerate(tape.steps) if op.jumps]


def _slope(tape: Any, values: list, base: np.ndarray, i: int) -> Any:
    """d value / d first operand of ``tape.steps[i]`` at the point, by its op's rule (0
    where the rule cannot say it elementwise)."""
    op, refs, params = tape.steps[i]
    args = [tape.operand(values, [base], i, k) for k in range(len(refs))]
    out = np.asarray(values[i], dtype=np.float64)
    if np.shape(args[0]) != out.shape:
        return 0.0
    extra = {"needs": (True,) * len(args)} if op.needs_mask else {}
    try:
        grads = op.vjp(NUMPY, np.ones_like(out), values[i], *args, **params, **extra)
    except Exception:  # noqa: BLE001 - no slope to read: the value itself must hold
        return 0.0
    slope = grads[0]
    return 0.0 if slope is None or np.shape(slope) != out.shape else np.asarray(slope)


def _pieces(tape: Any, point: np.ndarray, positions: list[int], slopes: list) -> list:
    values = tape.values(point)
    return [
        np.asarray(values[i], dtype=np.float64)
        - s * np.asarray(tape.operand(values, [point], i), dtype=np.float64)
        for i, s in zip(positions, slopes, strict=True)
    ]


def _same(at: list[np.ndarray], moved: list[np.ndarray], tolerance: list[np.ndarray]) -> bool:
    return all(
        bool(np.all((np.abs(b - a) <= t) | (a == b) | (np.isnan(a) & np.isnan(b))))
        for a, b, t in zip(at, moved, tolerance, strict=True)
    )


def _at(tape: Any, point: np.ndarray, positions: list[int]) -> list[np.ndarray]:
    values = tape.values(point)
    return [np.asarray(values[i], dtype=np.float64) for i in positions]


def _moved(flat: np.ndarray, j: int, step: float, base: np.ndarray) -> np.ndarray:
    point = flat.copy()
    point[j] += step
    return point.reshape(base.shape)


def _not_a_line(at: np.ndarray, one: np.ndarray, two: np.ndarray) -> bool:
    first, second = one - at, two - at
    off = np.abs(second - 2 * first) > 0.5 * np.maximum(np.abs(first), np.abs(second - first))
    return bool(np.any(off & np.isfinite(first) & np.isfinite(second)))


def _affected(base: np.ndarray, replay: Batch, real_at: Callable) -> tuple[np.ndarray, ...]:
    """Which elements have a boundary of a fixed value within the first step either way,
    and which at the point itself (one ulp either way: where every step crosses a domain's
    edge, log(x) + 1e-9·(x > 1e-15) at 1e-15, both sides of the first step are nan and
    agree, and the finer steps that decide the element were the replay's, without the
    jump; QA round 24). Only the latter are looked at over ulps for a step (`keep_steps`):
    f computed through x + 100 moves in stairs 64 ulps of x wide, one of which can sit
    beside the point, and with a boundary 3e-4 away sin(x + 100) failed as a jump (QA 25)."""
    n = base.size
    h = S.START * S.element_scale(base).reshape(-1)
    ulp = np.spacing(np.abs(base.reshape(-1)))
    affected, at_point = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    block = max(1, BLOCK // max(n, 1))
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        for sign, step, found in ((1.0, h, affected), (-1.0, h, affected),
                                  (1.0, ulp, at_point), (-1.0, ulp, at_point)):  # fmt: skip
            points = np.repeat(base.reshape(1, -1), len(rows), axis=0)
            points[np.arange(len(rows)), rows] += sign * step[rows]
            points = points.reshape((len(rows), *base.shape))
            replayed = replay(points)
            for k, i in enumerate(rows):
                if not found[i] and not agree(real_at(points[k]), replayed[k]):
                    found[i] = True
    affected |= at_point
    return affected.reshape(base.shape), at_point


def _hybrid(base: np.ndarray, replay: Batch, real_at: Callable, affected: np.ndarray) -> Batch:
    """The replay at points that move only unaffected elements; a run of the program at
    the rest."""
    mask, origin = affected.reshape(-1), base.reshape(-1)

    def batch(points: np.ndarray) -> np.ndarray:
        runs = np.any((points.reshape(len(points), -1) != origin) & mask, axis=1)
        rows: list[np.ndarray | None] = [None] * len(points)
        if (~runs).any():
            for i, value in zip(np.flatnonzero(~runs), replay(points[~runs]), strict=True):
                rows[i] = np.asarray(value)
        for i in np.flatnonzero(runs):
            rows[i] = real_at(points[i])
        return np.stack([np.asarray(r, dtype=np.float64) for r in rows])

    return batch
