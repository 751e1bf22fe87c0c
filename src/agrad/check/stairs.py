"""Staircases finer than the ladder's steps: a program through round, floor or frac
(`Op.jumps`) whose stairs every step crosses.

round(x·1e6)/1e6 + x at a point between two stairs is a line of slope 1 there (autograd's
gradient, and the derivative); a step wider than the stairs measures the staircase's average
slope, 2, with a scatter as small as the stairs are beside the step, and "the rule is wrong"
failed the right gradient (QA round 26). Where an element's ladder disagreed with the claim,
was not accurate enough or found only noise, and some of its steps crossed a stair, it is
climbed again from the first step below which no step changes any stepping op's value
(`program_runs.stair_scanner`, float64 programs): there f is as smooth as its other ops, and
what that ladder decides replaces what the staircase's slope said.
"""

from __future__ import annotations

import numpy as np

from . import steps as S
from .ladder import ladder

ROOM = 4  # levels a finer ladder needs below the stairs to decide anything
MOST = 64  # elements looked at (each costs two replays a level)


def refine_below_stairs(
    var, f0: np.ndarray, numeric: S.Numeric, accuracy: np.ndarray, claim: np.ndarray
) -> int:
    """Re-decide, in ``numeric``, the disputed, rough and noisy elements whose steps crossed
    a stair, from the first step clear of every stair. Returns the evaluations taken."""
    if var.stairs is None:
        return 0
    disputed, rough = numeric.disputed(claim, accuracy), numeric.rough(accuracy)
    noisy = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.NOISE)
    # (and kinks: one-sided quotients across stairs made 3|x - 0.3| + round(x·1e6)/1e6 at
    # 0.3 a kink of [-1.95, 4.05], not [-3, 3], and a claim of 3.5 passed, QA round 29)
    kinks = (numeric.kind == S.KINK) | (
        (numeric.kind == S.UNDECIDED) & (numeric.reason == S.KINK_CLOSE)
    )
    doubted = disputed | rough | noisy | kinks
    columns = np.nonzero(doubted.any(axis=0))[0][:MOST]
    if not columns.size:
        return 0
    first = S.START * S.element_scale(var.base).reshape(-1)[columns]
    steps = first[:, None] / S.RATIO ** np.arange(S.MAX_LEVELS)
    clear = var.stairs(columns, steps)
    # (its runs, as evaluations of f: both ways at each clear level and the one above it)
    evaluations = 2 * int(np.sum(S.MAX_LEVELS - clear + (clear > 0)))
    crossed = (clear > 0) & (clear <= S.MAX_LEVELS - ROOM)
    for k in np.unique(clear[crossed]):
        group = np.nonzero(crossed & (clear == k))[0]
        cols = columns[group]
        finer = ladder(
            var.along_coordinates(),
            f0,
            cols,
            steps[group, k],
            accuracy[:, cols],
            claim[:, cols],
            max_levels=S.MAX_LEVELS - int(k),
            actual=var.actual_steps,
        )
        evaluations += finer.evaluations
        # Whatever it decides: the staircase's slope was no evidence (a finer estimate not
        # accurate enough is undecided, not "the rule is wrong" at 1e6 times the claim)
        numeric.adopt(cols, finer, doubted[:, cols])
    return evaluations
