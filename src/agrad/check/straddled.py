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

CLOSE = 2.0**-30  # below this |x|, a kink "closer than any step" may be the one at 0


def refine_straddled_kinks(
    var,
    f0: np.ndarray,
    numeric: S.Numeric,
    accuracy: np.ndarray,
    claim: np.ndarray,
    noise: np.ndarray | None = None,
) -> None:
    """Re-decide, in ``numeric``, the kinks, jumps and disputed smooth estimates at nonzero
    points closer to zero than the steps that saw them, and at points closer than CLOSE,
    the kinks closer than any step and the estimates not accurate enough or noisy (steps
    straddling 0 at 3e-14)."""
    x = np.abs(var.base.reshape(-1))
    close = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.KINK_CLOSE)
    rough = (numeric.kind == S.SMOOTH) & ~(numeric.error <= accuracy)  # not accurate enough
    # (and where the one-sided quotients straddling a kink at 3e-14 changed too fast to
    # extrapolate: their central quotient's moves end Ridders' regime at every level)
    noisy = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.NOISE)
    kinkish = (numeric.kind == S.KINK) | close | ((rough | noisy) & (x < CLOSE))
    # A jump, or a smooth estimate the claim is far from, seen only by steps wider than |x|:
    # a feature as small as x (SI units: a Coulomb energy at r = 1.5e-10 m, a pulse 1e-13 s
    # wide) is straddled by every such step, which crosses its pole, or averages it out.
    # "The function jumps" and "the rule is wrong" failed right gradients there (QA round 20).
    jumped = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.JUMP)
    with np.errstate(invalid="ignore"):
        disputed = (numeric.kind == S.SMOOTH) & ~(
            np.abs(claim - numeric.estimate) <= accuracy + 4.0 * numeric.error
        )
    kinkish |= jumped | disputed
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
    if not take.any():
        return
    numeric.adopt(columns, finer, take)
    if numeric.refined is None:
        numeric.refined = np.zeros(numeric.estimate.shape[1], dtype=bool)
    numeric.refined[columns[take.any(axis=0)]] = True
