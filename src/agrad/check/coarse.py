"""Steps larger than the ladder's first, where its own are too small to resolve an element.

The ladder starts at 2^-10·max(1, |x_j|) and goes down. Where f is large beside the part
that varies along x_j (sum(x**2) at [1e6, 1, -1] is 1e12, its rounding 1e-4), no step that
small resolves the derivative along x_j: the central difference at 2^-10 rounds to ±1.8,
and an error estimate that large could only leave a claim undecided. Since the rounding
of a central difference falls as 1/h, those elements are climbed again from max(1,
|x_j|), and what that ladder finds smooth with a smaller error, agreeing with the first
ladder within both errors, replaces it. The larger steps see more of f, so the ladder's
own confirmation at a far finer step (`ladder._confirm`) guards each estimate they
settle on. (Elements the first ladder found noisy or jumping are left as they are: a
jump of 1 beside a slope of 1e3 looks smooth to steps of 1.)
"""

from __future__ import annotations

import numpy as np

from . import steps as S
from .ladder import ladder

WIDER = S.RATIO**5  # the first step of the second ladder, in units of the first one's
LEVELS = 6  # its levels: down to the first ladder's first step


def widen_unresolved(
    var,
    f0: np.ndarray,
    numeric: S.Numeric,
    accuracy: np.ndarray,
    claim: np.ndarray,
    columns: np.ndarray,
    noise: np.ndarray | None = None,
) -> None:
    """Re-decide, in ``numeric``, the elements among ``columns`` that the ladder could not
    resolve to ``accuracy`` (smooth but too inexact, rounding noise, an apparent jump)."""
    error = numeric.error
    rough = (numeric.kind[:, columns] == S.SMOOTH) & ~(error[:, columns] <= accuracy[:, columns])
    wanted = columns[rough.any(axis=0)]
    if not wanted.size:
        return
    scale = S.element_scale(var.base.reshape(-1))[wanted]
    wide = ladder(
        var.along_coordinates(),
        f0,
        wanted,
        WIDER * S.START * scale,
        accuracy[:, wanted],
        claim[:, wanted],
        max_levels=LEVELS,
        actual=var.actual_steps,
        noise=None if noise is None else noise[:, wanted],
    )
    numeric.evaluations += wide.evaluations
    numeric.levels[wanted] += wide.levels
    before = numeric.estimate[:, wanted]
    before_error = error[:, wanted]
    smooth = wide.kind == S.SMOOTH
    with np.errstate(invalid="ignore"):
        agrees = np.abs(wide.estimate - before) <= wide.error + before_error
    was_rough = (numeric.kind[:, wanted] == S.SMOOTH) & ~(before_error <= accuracy[:, wanted])
    take = smooth & was_rough & agrees & (wide.error < before_error)
    if not take.any():
        return
    numeric.adopt(wanted, wide, take)
    numeric.magnitude = S._larger(numeric.magnitude, wide.magnitude)


def doubt_coarse_failures(
    var,
    f0: np.ndarray,
    numeric: S.Numeric,
    accuracy: np.ndarray,
    claim: np.ndarray,
    verdicts: np.ndarray,
    reasons: np.ndarray,
    fail: int,
    rule: int,
    undecided: int,
    inaccurate: int,
) -> int:
    """A wrong rule found only at steps above 1 (relative steps, |x_j| > 1024) is
    confirmed at absolute steps from 2^-10 down: f may vary on a scale finer than every
    relative step (1e3·x + sin(x) at 1e12: the finest, 14, averages sin out, and a right
    gradient failed with an error estimate of 3e-9). Where those steps do not confirm the
    estimate (f's rounding swamps them), the element is undecided, never passed: so is a
    wrong claim there (sum(x**2) at 1e12 claimed 3x: f rounds to 1.7e8, and steps below 1
    cannot say what f does at them). Returns the evaluations taken."""
    failed = (verdicts == fail) & (reasons == rule)
    # (steps above 1 in absolute terms, at |x_j| > 1: an element of |x_j| <= 1 took such
    # steps only from `widen_unresolved`, whose estimate agreed with the first ladder's)
    coarse = (numeric.step > 1.0) & (np.abs(var.base.reshape(-1)) > 1)
    columns = np.nonzero(failed.any(axis=0) & coarse)[0]
    if not columns.size:
        return 0
    fine = ladder(
        var.along_coordinates(),
        f0,
        columns,
        np.full(columns.size, S.START),
        accuracy[:, columns],
        claim[:, columns],
        actual=var.actual_steps,
    )
    with np.errstate(invalid="ignore"):
        coarse_estimate = numeric.estimate[:, columns]
        allowed = 4 * (fine.error + numeric.error[:, columns]) + accuracy[:, columns]
        # (confirmed: smooth, agreeing, and accurate enough to tell the claim from it)
        telling = 4 * fine.error < np.abs(claim[:, columns] - coarse_estimate)
        confirmed = (fine.kind == S.SMOOTH) & telling
        confirmed &= np.abs(fine.estimate - coarse_estimate) <= allowed
    doubt = failed[:, columns] & ~confirmed
    part_v, part_r = verdicts[:, columns], reasons[:, columns]
    part_v[doubt], part_r[doubt] = undecided, inaccurate
    verdicts[:, columns], reasons[:, columns] = part_v, part_r
    return fine.evaluations
