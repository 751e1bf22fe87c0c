"""Kinks the steps straddle: at a point closer to a kink than any step of the ladder.

The ladder's steps are absolute below |x| = 1 (2^-10 down to 2^-46, about 1.4e-14), so at
x = 1e-30 every step straddles relu's kink at 0: the one-sided quotients are 1 and 0, as
at a kink at the point, and any claim between them passed as a subgradient, although
relu'(1e-30) = 1. Where |x| is below the finest step the kink was seen at, the ladder is
climbed again from |x|/2, which no kink at 0 reaches; what it decides there (smooth, to
the accuracy the check needs) replaces the kink. Where f cannot resolve steps that small
(1 + relu(x): 1 + 1e-30 rounds to 1) the kink stays, as any finite difference sees it.
"""

from __future__ import annotations

import numpy as np

from . import steps as S
from .ladder import ladder
from .ulp_noise import keep_steps

CLOSE = 2.0**-30  # below this |x|, a kink "closer than any step" may be the one at 0


def refine_straddled_kinks(
    var,
    f0: np.ndarray,
    numeric: S.Numeric,
    accuracy: np.ndarray,
    claim: np.ndarray,
    noise: np.ndarray | None = None,
) -> None:
    """Re-decide, in ``numeric``, the kinks, jumps, non-finite and disputed estimates at nonzero
    points closer to zero than the steps that saw them, and at points closer than CLOSE,
    the kinks closer than any step and the estimates not accurate enough or noisy (steps
    straddling 0 at 3e-14)."""
    x = np.abs(var.base.reshape(-1))
    close = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.KINK_CLOSE)
    rough = numeric.rough(accuracy)  # not accurate enough
    # (and where the one-sided quotients straddling a kink at 3e-14 changed too fast to
    # extrapolate: their central quotient's moves end Ridders' regime at every level)
    noisy = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.NOISE)
    kinkish = (numeric.kind == S.KINK) | close | ((rough | noisy) & (x < CLOSE))
    # A jump, or a smooth estimate the claim is far from, seen only by steps wider than |x|:
    # a feature as small as x (SI units: a Coulomb energy at r = 1.5e-10 m, a pulse 1e-13 s
    # wide) is straddled by every such step, which crosses its pole, or averages it out.
    # "The function jumps" and "the rule is wrong" failed right gradients there (QA round 20).
    jumped = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.JUMP)
    # Non-finite at every step: a pole or a domain's edge at 0 that each step crosses
    # (log, sqrt, x·log x at x = 1e-15, QA round 23), though f is finite at the point.
    nonfinite = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.NONFINITE)
    jumped |= nonfinite
    kinkish |= jumped | numeric.disputed(claim, accuracy)
    near_zero = (x > 0) & (x < np.maximum(numeric.step, CLOSE)) & np.isfinite(x)
    columns = np.nonzero(kinkish.any(axis=0) & near_zero)[0]
    if not columns.size:
        return
    finer = ladder(
        var.along_coordinates(),
        f0,
        columns,
        x[columns] / 2,
        accuracy[:, columns],
        claim[:, columns],
        actual=var.actual_steps,
        noise=None if noise is None else noise[:, columns],
    )
    numeric.evaluations += finer.evaluations
    numeric.levels[columns] += finer.levels
    # Per output: another output of the same element may be too large to see such steps
    # (its derivative was decided at the usual ones).
    take = kinkish[:, columns] & (finer.kind == S.SMOOTH)
    take &= finer.error <= accuracy[:, columns]
    # (finite below |x| but not accurate enough, or noisy: that is what the verdict says,
    # not "not finite at every step"; x·log(x) at 1e-15 beside a term of 0.3, whose
    # rounding swamps its moves)
    finite_below = (finer.kind == S.SMOOTH) | (
        (finer.kind == S.UNDECIDED) & (finer.reason == S.NOISE)
    )
    finite_below &= nonfinite[:, columns]
    # (a step at the point seen at ulps is a jump: no finer ladder decides it away,
    # log(x) + 1e-9·(x > 1e-15) at 1e-15 passed, QA round 24; looked for only where
    # something would be adopted)
    adopting = np.nonzero((take | finite_below).any(axis=0))[0]
    stepped, taken = keep_steps(var, f0, numeric, columns[adopting])
    numeric.evaluations += taken
    take[:, adopting] &= ~stepped
    finite_below[:, adopting] &= ~stepped
    if finite_below.any():
        numeric.adopt(columns, finer, finite_below)
    if not take.any():
        return
    numeric.adopt(columns, finer, take)
    if numeric.refined is None:
        numeric.refined = np.zeros(numeric.estimate.shape[1], dtype=bool)
    numeric.refined[columns[take.any(axis=0)]] = True


def refine_early_jumps(
    var,
    f0: np.ndarray,
    numeric: S.Numeric,
    accuracy: np.ndarray,
    claim: np.ndarray,
    noise: np.ndarray | None = None,
) -> int:
    """Climb on down from where a jump was seen, when the ladder stopped above its finest
    step: f that moves by the same amount at every step (a rank-one pole of inv(A) near a
    singular A: f(x + h) - f(x) = -11 for every h from 1e-9 to 1e-3, f' = -4.7e10) is a
    jump to steps wider than its feature and smooth below it (QA round 23: a right gradient
    failed as "the function jumps"). A true jump stays one at every finer step; what the
    finer ladder decides smooth, to the accuracy the check needs, or noise, replaces it.
    Returns the evaluations taken."""
    jumped = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.JUMP)
    bottom = S.SMALLEST * S.element_scale(var.base)
    columns = np.nonzero(jumped.any(axis=0) & (numeric.step > S.RATIO**2 * bottom))[0]
    if not columns.size:
        return 0
    first = numeric.step[columns] / S.RATIO
    levels = int(np.log(np.min(first / bottom[columns])) / np.log(S.RATIO)) + 1
    finer = ladder(
        var.along_coordinates(),
        f0,
        columns,
        first,
        accuracy[:, columns],
        claim[:, columns],
        max_levels=levels,
        actual=var.actual_steps,
        noise=None if noise is None else noise[:, columns],
    )
    settled = (finer.kind == S.SMOOTH) & (finer.error <= accuracy[:, columns])
    # (or f's noise below the feature, where it is not a jump either: inv(A) at cond 1e10)
    noisy = (finer.kind == S.UNDECIDED) & (finer.reason == S.NOISE)
    # ... but a step at the point seen at ulps is a jump, however small beside the slope
    # the finer steps see: 1/(x - 0.9999999999) + (x > 1) at 1 passed, QA round 24
    stepped, taken = keep_steps(var, f0, numeric, columns)
    take = jumped[:, columns] & (settled | noisy) & ~stepped
    if take.any():
        numeric.adopt(columns, finer, take)
    return finer.evaluations + taken
