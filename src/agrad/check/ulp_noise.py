"""f between points a few ulps apart: where it scatters by more than its rounding model
allows, a "jump" or a "wrong rule" can be f's own noise.

An ill-conditioned f (sum(inv(A)) of an 8x8 Hilbert matrix, condition 1.5e10) moves by
its rounding, 3e-7, between any two neighbouring points, while the ladder's model of
rounding is eps·|f|, 1e-14. ECnoise (`noise`) measures along a spacing of 1e-6 of x, where
such an f also varies smoothly by far more, and finds nothing; at ulps only the noise is
left. Right gradients failed as "the function jumps" and as "the rule is wrong" (QA round
23). Both are made undecided ("rounding noise") here when f's scatter explains them.
"""

from __future__ import annotations

import numpy as np

from . import steps as S
from .verdict import FAIL, NOISE, RULE, UNDECIDED

ULPS = np.arange(1.0, 9.0)  # the points each side of x_j, in ulps of x_j
REVERSALS = 8.0  # moves of at least a jump's size over this, up and down, are not a jump's
SPREAD = 2.0  # a central difference at step h is off by up to this times scatter / h
FIRST_LOOK = 64  # failing elements probed first


def _moves(var, f0: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """f at x_j ± 1..8 ulps, minus f(x): (m, columns, side, ulps), and the offsets."""
    x = var.base.reshape(-1)[cols]
    ulp = np.spacing(np.abs(x))
    k = ULPS.size
    offsets = np.concatenate([ulp[:, None] * ULPS[None], -ulp[:, None] * ULPS[None]], axis=1)
    with np.errstate(all="ignore"):
        values = var.along_coordinates()(np.repeat(cols, 2 * k), offsets.reshape(-1))
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None, None, None]
    return values.reshape(values.shape[0], cols.size, 2, k) - f, offsets.reshape(cols.size, 2, k)


def doubt_jumps(var, f0: np.ndarray, numeric: S.Numeric) -> int:
    """Undecided (f's noise) rather than a jump where f moves by as much as the jump between
    points ulps apart, both up and down on one side of the point. A jump is a step: on
    either side of it f is smooth, so it moves monotonically there, by rounding, or steps
    once. Returns the evaluations taken."""
    jumped = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.JUMP)
    cols = np.nonzero(jumped.any(axis=0))[0]
    if not cols.size:
        return 0
    moved, _ = _moves(var, f0, cols)
    zero = np.zeros((*moved.shape[:3], 1))
    moves = np.diff(np.concatenate([zero, moved], axis=3), axis=3)
    size = np.maximum(np.abs(numeric.right[:, cols]), np.abs(numeric.left[:, cols]))
    size = size * numeric.step[cols][None]  # the jump's size, as the ladder measured it
    with np.errstate(invalid="ignore"):
        big = np.abs(moves) >= (size / REVERSALS)[:, :, None, None]
        reverses = ((big & (moves > 0)).any(axis=3) & (big & (moves < 0)).any(axis=3)).any(axis=2)
    part = numeric.reason[:, cols]
    part[jumped[:, cols] & reverses] = S.NOISE
    numeric.reason[:, cols] = part
    return int(moved.shape[1] * moved.shape[2] * moved.shape[3])


def doubt_noisy_failures(var, f0, numeric: S.Numeric, claim, verdicts, reasons) -> int:
    """A "wrong rule" by finite differences whose distance from the claim f's scatter at
    ulps explains (SPREAD times its largest distance from a line through the 17 points,
    over the step the estimate was taken at) is undecided. Returns the evaluations taken."""
    # (finite differences only: the complex step's numbers are exact, step 0)
    differenced = (numeric.step > 0) & ~numeric.complex_step
    failed = (verdicts == FAIL) & (reasons == RULE) & differenced[None]
    cols = np.nonzero(failed.any(axis=0))[0]
    # (a wrong backward fails everywhere, and f's noise is f's: the rest only if the first
    # FIRST_LOOK failures show some; left alone, they stay failures)
    taken = _doubt(var, f0, numeric, claim, verdicts, reasons, failed, cols[:FIRST_LOOK])
    if taken and cols.size > FIRST_LOOK and (reasons[:, cols[:FIRST_LOOK]] == NOISE).any():
        taken += _doubt(var, f0, numeric, claim, verdicts, reasons, failed, cols[FIRST_LOOK:])
    return taken


def _doubt(var, f0, numeric, claim, verdicts, reasons, failed, cols) -> int:
    if not cols.size:
        return 0
    moved, offsets = _moves(var, f0, cols)
    t = np.concatenate([offsets.reshape(cols.size, -1), np.zeros((cols.size, 1))], axis=1)
    y = np.concatenate([moved.reshape(*moved.shape[:2], -1), np.zeros((*moved.shape[:2], 1))], 2)
    with np.errstate(all="ignore"):
        t_mean, y_mean = t.mean(axis=1), y.mean(axis=2)
        dt = t - t_mean[:, None]
        slope = ((y - y_mean[..., None]) * dt[None]).sum(axis=2) / (dt**2).sum(axis=1)[None]
        line = y_mean[..., None] + slope[..., None] * dt[None]
        scatter = np.max(np.abs(y - line), axis=2)  # (m, columns)
        explained = np.abs(claim[:, cols] - numeric.estimate[:, cols]) <= (
            SPREAD * scatter / numeric.step[cols][None]
        )
    doubt = failed[:, cols] & explained
    for array, value in ((verdicts, UNDECIDED), (reasons, NOISE)):
        part = array[:, cols]
        part[doubt] = value
        array[:, cols] = part
    return int(moved.shape[1] * moved.shape[2] * moved.shape[3])
