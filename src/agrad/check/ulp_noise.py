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

NOISY = 8.0  # a jump with the fit's residual at ulps above its size over this is noise
SPREAD = 2.0  # a central difference at step h is off by up to this times scatter / h
FIRST_LOOK = 64  # failing elements probed first


# f at k ulps, k = 0 (the point) and ± FIT_ULPS, as a quadratic with a step on either side
# of the point (x > a at a steps after it, x >= a before): columns 1, k, k², [k > 0],
# [k < 0]. A clean step at the point fits it to rounding; noise does not, nor do the stairs
# in which f computed through larger terms moves (sin(x + 100): one every 64 ulps of x,
# so that within 8 ulps one could be the only move, beside the point; QA round 25): out to
# 89 ulps, more of them show, and the residual with them.
FIT_ULPS = np.array([1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0])
_K = np.concatenate([-FIT_ULPS[::-1], [0.0], FIT_ULPS])
_MODEL = np.stack(
    [np.ones_like(_K), _K, _K**2, (_K > 0).astype(float), (_K < 0).astype(float)], axis=1
)
_FIT = np.linalg.pinv(_MODEL)  # (5, 21)
STEP_SEEN = 8.0  # a step this many times the fit's largest residual is a jump at the point


def ulp_fit(var, f0: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Per output and element ``cols``: `_MODEL`'s coefficients fitted to f at the `_K`
    ulps of x_j (m, c, 5; the last two are the steps f takes after and before the point),
    the fit's largest residual (f's scatter there, curvature and the step removed), and the
    evaluations taken."""
    ulp = np.spacing(np.abs(var.base.reshape(-1)[cols]))
    offsets = ulp[:, None] * _K[None]  # (c, 21): f(x) itself is the middle one
    with np.errstate(all="ignore"):
        values = var.along_coordinates()(np.repeat(cols, _K.size), offsets.reshape(-1))
    m, c = values.shape[0], cols.size
    y = values.reshape(m, c, _K.size) - np.asarray(f0, dtype=np.float64).reshape(-1)[:, None, None]
    with np.errstate(all="ignore"):
        coef = y @ _FIT.T  # (m, c, 5)
        residual = np.max(np.abs(y - coef @ _MODEL.T), axis=2)
    return coef, residual, int(c * _K.size)


def keep_steps(var, f0: np.ndarray, numeric: S.Numeric, cols: np.ndarray) -> tuple[np.ndarray, int]:
    """(m, len(cols)): where f steps at the point, seen at ulps (above STEP_SEEN times its
    scatter and above f's rounding): a jump, however small beside f's slope, that no finer
    ladder may decide away (QA round 24: log(x) + 1e-9·(x > 1e-15) at 1e-15 passed, and
    tanh((x - a)/1e-11)·1e6 + 1000·(x > 1), whose moves at ulps step by 1000, was noise).
    Those become jumps in ``numeric``, with the one-sided quotients of the fit at one ulp.
    Also the evaluations taken."""
    if not cols.size:
        return np.zeros((np.asarray(f0).size, 0), dtype=bool), 0
    coef, residual, taken = ulp_fit(var, f0, cols)
    seen = _stepped(f0, coef, residual)
    if seen.any():
        ulp = np.spacing(np.abs(var.base.reshape(-1)[cols]))[None]
        marks = {"kind": S.UNDECIDED, "reason": S.JUMP,  # (quotients over one ulp)
                 "left": (coef[..., 1] - coef[..., 4]) / ulp,
                 "right": (coef[..., 1] + coef[..., 3]) / ulp}  # fmt: skip
        for name, value in marks.items():
            S.put(getattr(numeric, name), cols, seen, value)
        numeric.step[cols] = np.where(seen.any(axis=0), ulp[0], numeric.step[cols])
    return seen, taken


def _stepped(f0: np.ndarray, coef: np.ndarray, residual: np.ndarray) -> np.ndarray:
    step = np.maximum(np.abs(coef[..., 3]), np.abs(coef[..., 4]))
    rounding = 4 * S.EPS * np.abs(np.asarray(f0, dtype=np.float64).reshape(-1))[:, None]
    with np.errstate(invalid="ignore"):
        return (step > STEP_SEEN * residual) & (step > rounding)


def doubt_jumps(var, f0: np.ndarray, numeric: S.Numeric) -> int:
    """Undecided (f's noise) rather than a jump where f scatters at ulps, about `_MODEL`'s
    fit, by NOISY-th of the jump's size or more. A jump is a step: on either side of it f
    is smooth, so the fit leaves only rounding. Returns the evaluations taken."""
    jumped = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.JUMP)
    cols = np.nonzero(jumped.any(axis=0))[0]
    if not cols.size:
        return 0
    _, residual, taken = ulp_fit(var, f0, cols)
    size = np.maximum(np.abs(numeric.right[:, cols]), np.abs(numeric.left[:, cols]))
    size = size * numeric.step[cols][None]  # the jump's size, as the ladder measured it
    with np.errstate(invalid="ignore"):
        noisy = residual >= size / NOISY
    S.put(numeric.reason, cols, jumped[:, cols] & noisy, S.NOISE)
    return taken


def doubt_noisy_failures(var, f0, numeric: S.Numeric, claim, verdicts, reasons) -> int:
    """A "wrong rule" by finite differences whose distance from the claim f's scatter at
    ulps explains (SPREAD times the largest residual of `_MODEL` at the `_K` points,
    over the step the estimate was taken at) is undecided; not where f steps at the point.
    Returns the evaluations taken."""
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
    coef, scatter, taken = ulp_fit(var, f0, cols)
    stepped = _stepped(f0, coef, scatter)  # (a clean step at the point: a jump)
    with np.errstate(all="ignore"):
        explained = np.abs(claim[:, cols] - numeric.estimate[:, cols]) <= (
            SPREAD * scatter / numeric.step[cols][None]
        )
    doubt = failed[:, cols] & explained & ~stepped
    S.put(verdicts, cols, doubt, UNDECIDED)
    S.put(reasons, cols, doubt, NOISE)
    return taken
