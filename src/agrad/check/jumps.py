"""Where f jumps at the point, from the ladder's record of its last levels (`ladder`)."""

from __future__ import annotations

import numpy as np


def jumps(state, last: np.ndarray) -> np.ndarray:
    """Where f jumps at the point: over the last three levels the one-sided gap grows
    as 1/h, far above rounding, so h·gap (the jump's size) holds steady, on one side of the
    point, the same side at every level. (Rounding noise grows as 1/h too, but stays within
    a few ulps of f, and moves both sides alike.)"""
    if len(state.gaps) < 3:
        return np.zeros(state.best.shape, dtype=bool)
    gaps, steps, noise = (np.stack(x) for x in (state.gaps, state.steps, state.gap_noise))
    plus, minus = np.stack(state.plus), np.stack(state.minus)
    steady = np.ones(state.best.shape, dtype=bool)
    sizes, sides, ups, downs, steps_at = [], [], [], [], []
    for j in range(3):
        at = np.maximum(last - j, 0)[None]
        gap = np.take_along_axis(gaps, at, axis=0)[0]
        h = np.take_along_axis(steps, at, axis=0)[0]
        steady &= (last - j >= 0) & (gap > 64 * np.take_along_axis(noise, at, axis=0)[0])
        sizes.append(gap * h)
        steps_at.append(h)
        # f's moves on either side: a jump moves one side by its size and the other
        # hardly; rounding of terms larger than f (cosh(x)² - sinh(x)² at 5 moves by
        # ulps of 5500) moves both alike (a right gradient failed as a jump, QA round 10)
        up = np.take_along_axis(plus, at, axis=0)[0] * h
        down = np.take_along_axis(minus, at, axis=0)[0] * h
        ups.append(up)
        downs.append(down)
        lopsided = np.maximum(np.abs(up), np.abs(down)) >= 4 * np.minimum(np.abs(up), np.abs(down))
        sides.append(np.where(lopsided, np.where(np.abs(up) >= np.abs(down), 1, -1), 0))
    one_side = (sides[0] != 0) & (sides[0] == sides[1]) & (sides[1] == sides[2])
    # Or one side's quotient changing from level to level (as J/h) while the other's
    # holds: x + 1e-9·(x > -3) at -3 moves both sides by h, one of them by 1e-9 more.
    changes = []
    for j in range(2):
        grew_up = np.abs(ups[j] - ups[j + 1] * steps_at[j] / steps_at[j + 1])
        grew_down = np.abs(downs[j] - downs[j + 1] * steps_at[j] / steps_at[j + 1])
        with np.errstate(all="ignore"):
            up_only, down_only = grew_up >= 16 * grew_down, grew_down >= 16 * grew_up
        changes.append(np.where(up_only, 1, np.where(down_only, -1, 0)))
    one_side |= (changes[0] != 0) & (changes[0] == changes[1])
    with np.errstate(all="ignore"):
        for a, b in ((sizes[0], sizes[1]), (sizes[1], sizes[2])):
            steady &= (a / b > 0.7) & (a / b < 1.4)
        # (or both sides moving by the same amounts at every level: sign at 0, whose value
        # there is the midpoint of the jump)
        both = np.ones(steady.shape, dtype=bool)
        for moves in (ups, downs):
            for a, b in ((moves[0], moves[1]), (moves[1], moves[2])):
                both &= (a / b > 0.7) & (a / b < 1.4)
    return steady & (one_side | both)
