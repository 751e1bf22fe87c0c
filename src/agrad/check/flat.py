"""Verdicts at rounding level: points where f does not move at all in float64 (a claim of
rounding size is right there), and claims off by no more than some rounding, which are
undecided rather than failed."""

from __future__ import annotations

import numpy as np

from . import steps as S
from .verdict import (
    FAIL,
    FLAT,
    INACCURATE,
    PASS,
    ROUNDED,
    ROUNDED_ULPS,
    ROW_ROUNDED,
    RULE,
    STILL,
    SURE,
    UNCONFIRMED,
    UNDECIDED,
    ZERO,
    rounding_size,
    row_scale,
)


def pass_flat(var, f0, claim, exact_values, exact, tau, verdicts, reasons) -> int:
    """Where the complex step gave the exact derivative but f does not move at all in
    float64 along the element (f(x ± h) == f(x), bit for bit, at the ladder's first step),
    a claim within rounding size of it is right, as `judge` has it for finite differences:
    sum(tanh(x)) at [20, -20] cancels f to 0, so the floor from |f| is 0, while autograd's
    1 - tanh(20)² is 0 and the truth 1.7e-17. Passes such elements (in place); returns
    the evaluations taken."""
    allowed = FLAT
    with np.errstate(all="ignore"):
        close = np.abs(claim - exact_values) <= allowed
    suspect = (verdicts == FAIL) & (reasons == RULE) & close & exact[None, :]
    cols = np.nonzero(suspect.any(axis=0))[0]
    if not cols.size:
        return 0
    h = S.START * S.element_scale(var.base.reshape(-1))[cols]
    along = var.along_coordinates()
    with np.errstate(all="ignore"):
        up, down = along(cols, h), along(cols, -h)
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None]
    flat = suspect[:, cols] & (up == f) & (down == f)
    for array, value in ((verdicts, PASS), (reasons, 0), (tau, allowed)):
        S.put(array, cols, flat, value)
    return 2 * cols.size


def pass_flat_side(var, f0, claim, numeric, verdicts, reasons) -> int:
    """A zero claim left undecided where the finite differences are exactly 0 but their
    steps had to be small (a kink 1e-5 away: relu(x) + 1 at -1e-5, whose rounding bound
    over steps below 1e-5 is 5e-10, above ZERO; QA round 27): where f does not move at all,
    bit for bit, at any of the ladder's steps on one side, it is flat there, and its
    derivative (smooth, as the ladder found it) is within f's rounding over the largest
    step, ulp(f)/h. Passed where that bound is below 2·ZERO (as any zero claim is decided);
    f = 1e12 + 1e-3·x is flat too, to steps of 1e-3, with a bound of 0.1: left undecided.
    Returns the evaluations taken."""
    with np.errstate(invalid="ignore"):
        doubted = (verdicts == UNDECIDED) & np.isin(reasons, (INACCURATE, UNCONFIRMED))
        doubted &= np.abs(claim) <= FLAT
    doubted &= (numeric.kind == S.SMOOTH) & (numeric.estimate == 0)
    cols = np.nonzero(doubted.any(axis=0))[0][:MOST_FLAT]
    if not cols.size:
        return 0
    along = var.along_coordinates()
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None]
    first = S.START * S.element_scale(var.base.reshape(-1))[cols]
    still = {1.0: np.ones(doubted[:, cols].shape, dtype=bool)}
    still[-1.0] = still[1.0].copy()
    moved = {}
    with np.errstate(all="ignore"):
        for k in range(S.MAX_LEVELS):
            for side, flat_so_far in still.items():
                same = along(cols, side * first / S.RATIO**k) == f
                flat_so_far &= same
                if k == 0:
                    moved[side] = ~same
    bound = np.spacing(np.abs(f)) / first[None, :]
    # ... and f moves on the other side: a feature there, not a slope too small for f's
    # rounding on both (1e3 + 1e-12·sum(w) claimed 0 stays undecided, QA round 10)
    one_side = (still[1.0] & moved[-1.0]) | (still[-1.0] & moved[1.0])
    passed = doubted[:, cols] & one_side & (bound <= 2 * ZERO)
    S.put(verdicts, cols, passed, PASS)
    S.put(reasons, cols, passed, 0)
    return 2 * S.MAX_LEVELS * cols.size


ROUGH = 1e-2  # a smooth estimate with an error above this part of itself may be noise's
MOST_FLAT = 64  # elements `pass_flat_side` looks at (two evaluations a level each)


def doubt_rounded(f0, claim, exact_values, exact, verdicts, reasons) -> None:
    """A "wrong rule" where the complex step is exact, off by no more than ROUNDED_ULPS
    ulps of the largest |f|: the backward's own rounding, amplified by the chain rule,
    reaches that far (`verdict.ROUNDED_ULPS`), so such an element is undecided."""
    size = rounding_size(np.asarray(f0, dtype=np.float64).reshape(-1))[:, None]
    with np.errstate(all="ignore"):
        near = np.abs(claim - exact_values) <= ROUNDED_ULPS * S.EPS * size
    doubt = (verdicts == FAIL) & (reasons == RULE) & near & exact[None, :]
    verdicts[doubt], reasons[doubt] = UNDECIDED, ROUNDED


def doubt_row_rounded(claim, compared, error, tau, verdicts, reasons) -> None:
    """A "wrong rule", or a claim undecided for the differences' accuracy, off them by no
    more than ROUNDED_ULPS ulps of its row's largest derivative (beyond the 4 that pass,
    `verdict.ROW_PASS`): an element computed from terms that large (one that cancels to
    almost nothing) can be off that far in a right float64 backward, so it is undecided.
    An element computed from terms of its own size is wrong there; the checker cannot
    tell which (the diagnosis says so)."""
    scale = row_scale(claim, compared)[:, None]
    err = np.zeros_like(tau) if error is None else np.nan_to_num(error, nan=np.inf)
    with np.errstate(all="ignore"):
        gap = np.abs(claim - compared)
        near = gap <= tau + ROUNDED_ULPS * S.EPS * scale + SURE * err
    doubt = ((verdicts == FAIL) & (reasons == RULE)) | (
        (verdicts == UNDECIDED) & (reasons == INACCURATE) & (err <= tau)
    )
    doubt &= near
    verdicts[doubt], reasons[doubt] = UNDECIDED, ROW_ROUNDED


# Steps beyond the ladder's first, up to max(1, |x_j|), at which an element along which f
# never moves is probed (the ladder's first step is START times that)
COARSE = 4.0 ** -np.arange(0, 5)


def bound_still(var, f0, numeric) -> int:
    """Elements along which f did not move at all, bit for bit, at the ladder's steps: probed
    at coarser ones, up to max(1, |x_j|); where f does not move there either, the truth is
    within ulp(f)/(2h) of 0 at the coarsest h, and that is the estimate's error. (The ladder
    bounds it by its own rounding model at its first step, 4·eps·|f|/h: an unused parameter
    beside a loss of 150 or more was undecided against a zero claim's 1e-10, QA round 21.
    f = 1e12 + 1e-3·w moves at h = 1: no false bound for it.) In place; returns the
    evaluations taken."""
    still = (numeric.estimate == 0) & (numeric.kind == S.SMOOTH)  # (m, E)
    # Per output, too, where its row's scale is so small that the judge's allowance for a
    # still f (STILL of the row) is below the ladder's bound: 0.5 + 1e-7·x0 beside 2·x1
    # does not move along x1, and its 0 was undecided at 9e-13 (QA round 36)
    row = row_scale(numeric.estimate, numeric.estimate)[:, None]
    with np.errstate(invalid="ignore"):
        small = numeric.error > STILL * row
    whole = still.all(axis=0)
    still &= whole[None, :] | small
    still &= numeric.error != 0
    cols = np.nonzero(still.any(axis=0))[0]
    if not cols.size:
        return 0
    unmoved = still[:, cols]
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None]
    along = var.along_coordinates()
    scale = S.element_scale(var.base.reshape(-1))
    evaluations = 0
    for fraction in COARSE:  # (an output that moves is probed no further along it)
        h = fraction * scale[cols]
        with np.errstate(all="ignore"):
            up, down = along(cols, h), along(cols, -h)
        evaluations += 2 * cols.size
        unmoved &= (up == f) & (down == f)
        kept = unmoved.any(axis=0)
        cols, unmoved = cols[kept], unmoved[:, kept]
        if not cols.size:
            return evaluations
    # (f computed in float32 inside rounds to float32's spacing: 1e4 + 1e-4·w in float32
    # does not move at h = 1 and passed a claim of 0, QA round 22)
    size = np.abs(f).astype(np.float32) if S.in_float32(f, whole=True) else np.abs(f)
    bound = np.spacing(size).astype(np.float64) / (2.0 * scale[cols][None, :])  # (m, k)
    error = numeric.error[:, cols]
    numeric.error[:, cols] = np.where(unmoved, np.minimum(error, bound), error)
    return evaluations


def bound_noisy(var, f0, numeric, claim, rounding=None) -> int:
    """Elements whose every step drowned in rounding noise (the ladder's NOISE: f moved by a
    few quanta, whatever the step) are probed at each of the ladder's steps again: where
    every value of f stays within a band of width w, a derivative of f is within w/h of the
    central difference at the first step h (f moves by 2h·f' there, plus what stays in the
    band). That bound is the estimate's error and its resolution, and `judge` decides with
    it (`Numeric.banded`): a zero gradient of terms that cancel, sum(x - mean(x)) or
    layer_norm(x).sum(), whose f is 1e-16 of rounding around 0, was undecided ("no step
    is reliable") where the bound is 1e-12; PyTorch's gradcheck passes it. Only where w/h
    is below 2·ZERO (a band that wide is a zero gradient's, as `judge` decides them), and
    where f moves by no more than such a slope at coarser steps too, up to max(1, |x_j|):
    a term that the ladder's steps never move, a float32 cast of 1 + 1e-5·x, adds nothing
    to the band whatever its slope, and beside cancelling terms its claim of 0 passed (QA
    round 32); such a term moves at the coarse steps. (Not one that no step up to
    max(1, |x_j|) moves, (1e15 + 0.06·x) - 1e15, whose claim of 0 passes, as where f is
    flat (`bound_still`) and in PyTorch's gradcheck; nor a slope finer than every step
    and below the band: 5e-14·tanh(x/1e-15) at 0 beside terms of 100 rounding to 1e-13.)
    In place; returns the evaluations taken."""
    if rounding is not None:
        # Where f only rounds (`noise.element_noise`), the band bounds the derivative, as
        # where the ladder found every step noise: its estimates there, knowing the noise,
        # were confident of 0 where a part its steps never move hides a slope ((1e8 +
        # 1e-7·x) - 1e8 beside layer_norm(x).sum(), QA round 35). One its steps never
        # moved at all is `bound_still`'s, and `doubt_hidden_slopes` looks at it next.
        moved = rounding & (numeric.kind == S.SMOOTH) & (numeric.estimate != 0)
        numeric.kind[moved], numeric.reason[moved] = S.UNDECIDED, S.NOISE
        numeric.estimate[moved], numeric.error[moved] = np.nan, np.inf
    evaluations = doubt_hidden_slopes(var, f0, numeric, rounding)
    noisy = (numeric.kind == S.UNDECIDED) & (numeric.reason == S.NOISE)
    # (see the end; and a zero claim the estimate disputes: two levels can agree exactly on
    # quanta, -6.3e-7 ± 2.8e-22 for sum(x - mean(x)) at x ≈ 100, QA round 32)
    rough = numeric.rough(np.maximum(2 * ZERO, ROUGH * np.abs(numeric.estimate)))
    rough |= numeric.disputed(claim, 2 * ZERO) & (np.abs(claim) <= ZERO)
    cols = np.nonzero((noisy | rough).any(axis=0))[0]
    if not cols.size:
        return evaluations
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None]
    along = var.along_coordinates()
    scale = S.element_scale(var.base.reshape(-1))[cols]
    first = S.START * scale
    low, high = np.repeat(f, cols.size, axis=1), np.repeat(f, cols.size, axis=1)
    far = np.zeros(low.shape)  # the largest slope from f(x) at the coarse steps
    # (an element whose band already exceeds the bound's limit is probed no further: a
    # wrong zero claim for a slope of 2 is disputed too, and costs two evaluations here)
    live = np.arange(cols.size)
    with np.errstate(all="ignore"):
        for k in range(S.MAX_LEVELS):
            h = first[live] / S.RATIO**k
            up, down = along(cols[live], h), along(cols[live], -h)
            evaluations += 2 * live.size
            if k == 0:
                central = (up - down) / (2.0 * h)
            low[:, live] = np.minimum(low[:, live], np.minimum(up, down))  # (nan stays)
            high[:, live] = np.maximum(high[:, live], np.maximum(up, down))
            live = live[~((high - low)[:, live] > 2 * ZERO * first[live]).all(axis=0)]
            if not live.size:
                break
        for fraction in COARSE:
            if not live.size:
                break
            step = fraction * scale[live]
            up, down = along(cols[live], step), along(cols[live], -step)
            evaluations += 2 * live.size
            moved = np.maximum(np.abs(up - f), np.abs(down - f))
            far[:, live] = np.maximum(far[:, live], moved / step)
        band = high - low
        bound = band / first
        # (f's rounding grows at the coarse steps, which move x by up to 1: a slope, not
        # the band; a term that only they move shows its own, 1e-5 for the float32 cast)
        confirmed = np.zeros(far.shape, dtype=bool)  # (nan, or not probed: not confirmed)
        confirmed[:, live] = far[:, live] <= 2 * ZERO
    # (f that moved within its band shows its quantum; one that did not move at all may be
    # quantized coarser than any move the steps made: no bound)
    banded = (band > 0) & (bound <= 2 * ZERO) & confirmed
    taken = noisy[:, cols] & banded & ~(bound >= numeric.error[:, cols])
    for name, value in (("estimate", central), ("error", bound), ("kind", S.SMOOTH),
                        ("reason", 0)):  # fmt: skip
        S.put(getattr(numeric, name), cols, taken, value)
    if numeric.resolution is not None:
        S.put(numeric.resolution, cols, taken, bound)
    numeric.step[cols] = np.where(taken.any(axis=0), first, numeric.step[cols])
    numeric.banded = np.zeros(numeric.kind.shape, dtype=bool)
    S.put(numeric.banded, cols, taken, True)
    # A rough smooth estimate far outside the band's bound came from the finest steps,
    # where quanta can agree by chance (0.376 ± 0.017 at 1.4e-14 for sum(x - mean(x)) over
    # 1,000 inputs, failed as "the rule is wrong"): undecided, as rounding noise. Not
    # passed on the bound either: a feature finer than the first step, 1e-14·tanh(x/1e-13),
    # is as still at the coarse steps, and only the fine ones see its slope of 0.1. (The
    # estimate stays: a claim far from it is not passed by --allow-undecided.)
    with np.errstate(invalid="ignore"):
        estimate, error = numeric.estimate[:, cols], numeric.error[:, cols]
        refuted = rough[:, cols] & banded & (np.abs(estimate) - SURE * error > bound)
    S.put(numeric.kind, cols, refuted, S.UNDECIDED)
    S.put(numeric.reason, cols, refuted, S.NOISE)
    return evaluations


def doubt_hidden_slopes(var, f0, numeric, rounding=None) -> int:
    """An estimate of 0 from noisy differences (f rounds, its terms cancel, and the noise
    measured bounds the truth: a zero claim passes and any other fails), where the two
    largest coarse steps, max(1, |x_j|) and a quarter of it, show f with a slope: both
    sides moved, oppositely and alike, by the same slope at both steps, beyond the
    estimate's reach. That is a part the ladder's steps never move (a float32 cast of 2 +
    1e-4·x beside sum(x - mean(x)), QA round 32: its claim of 0 passed, its right claim
    failed; (1e12 + 0.1·x) - 1e12 at 0, claimed 0, passed): undecided as rounding noise.
    Not a kink the coarse steps cross (relu(x) + 1 at -1e-5 moves one side only), nor a
    curvature (x² at 0 moves both sides alike, x³ with slopes 16 times apart). Where f
    only rounds (``rounding``, from `noise.element_noise`), any move of f beyond the estimate's
    reach at those steps. In place; returns the evaluations taken."""
    with np.errstate(invalid="ignore"):  # (an estimate of 0, within its error)
        allowed = 2 * ZERO + SURE * numeric.error
        zero = (numeric.kind == S.SMOOTH) & (np.abs(numeric.estimate) <= allowed)
    cols = np.nonzero(zero.any(axis=0))[0]
    if not cols.size:
        return 0
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None]
    along = var.along_coordinates()
    scale = S.element_scale(var.base.reshape(-1))[cols]
    hidden = zero[:, cols]
    slopes, far = [], np.zeros(hidden.shape)
    with np.errstate(all="ignore"):
        # (and only where f moved at the ladder's first step: one still there, bit for
        # bit, is round(x), whose stairs the coarse steps climb as a slope, and 0 is its
        # gradient)
        first = S.START * scale
        hidden &= (along(cols, first) != f) | (along(cols, -first) != f)
        for fraction in COARSE[:2]:
            step = fraction * scale
            up, down = along(cols, step) - f, f - along(cols, -step)  # (both, as slopes go)
            hidden &= (up * down > 0) & (np.abs(up) <= 2 * np.abs(down))
            hidden &= np.abs(down) <= 2 * np.abs(up)
            slopes.append((up + down) / (2 * step))
            far = np.maximum(far, np.maximum(np.abs(up), np.abs(down)) / step)
        hidden &= np.abs(slopes[0]) <= 2 * np.abs(slopes[1])
        hidden &= np.abs(slopes[1]) <= 2 * np.abs(slopes[0])
        hidden &= ~(np.abs(slopes[1]) <= allowed[:, cols])
        # Where f only rounds along the element (its noise measured so), any move beyond
        # that at the coarse steps is a part the ladder's steps do not move, as where it
        # found every step noise (`bound_noisy`'s coarse steps): beside batch_norm(x).sum(),
        # (1e12 + 1e-4·x) - 1e12 moves one quantum at the largest only (QA round 35)
        if rounding is not None:
            hidden |= zero[:, cols] & rounding[:, cols] & ~(far <= allowed[:, cols])
    S.put(numeric.kind, cols, hidden, S.UNDECIDED)
    S.put(numeric.reason, cols, hidden, S.NOISE)
    return 6 * cols.size


def doubt_shared_rounding(f0, claim, numeric, verdicts, reasons) -> None:
    """A "wrong rule" for an output much smaller than the others that did not move along the
    element, off the differences' exact 0 by no more than the largest output's rounding over
    the step: outputs may share intermediates
    and round at their size (log_softmax's output 8e-9 is z_5 - logsumexp(z) with z ≈ 40,
    quantized at 7e-15), while the ladder's error model takes each output's own |f|, and its
    exact 0 for a derivative of 5e-20 failed a right claim, QA round 22). Undecided."""
    size = rounding_size(np.asarray(f0, dtype=np.float64).reshape(-1))[:, None]
    own = np.abs(np.asarray(f0, dtype=np.float64).reshape(-1))[:, None]
    step = np.where(numeric.step > 0, numeric.step, np.inf)[None, :]
    with np.errstate(all="ignore"):
        shared = 4.0 * S.EPS * size / step
        near = np.abs(claim - numeric.estimate) <= shared + numeric.error
    # (only where the output did not move at all along the element: where it moves, the
    # differences see it, and outputs computed apart, a Hessian's rows 2·x0 beside exp(x2)
    # at 33, must not take the largest's rounding, QA round 16)
    still = numeric.estimate == 0
    doubt = (verdicts == FAIL) & (reasons == RULE) & near & still & (size > 64.0 * own)
    verdicts[doubt], reasons[doubt] = UNDECIDED, INACCURATE
