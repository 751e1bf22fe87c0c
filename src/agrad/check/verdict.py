"""From numbers to verdicts: tolerances, each element's verdict, and the subgradient test.

Each compared element is pass, fail, kink or undecided (`VERDICTS`), with a reason. The
tolerance of an element is PyTorch's form, atol + rtol·|numeric|, but its default atol is
relative to the scale of the gradient it belongs to (so a gradient of size 1e-12 is
checked too), with a floor at rounding level relative to the function's value. The
numeric side's own error estimate widens nothing silently: an element passes when the
claim is within the tolerance plus that error AND the error is itself within the
tolerance; a claim the numbers cannot tell apart from the truth at the requested
tolerance is *undecided*, never passed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import steps as S

PASS, FAIL, KINK, UNDECIDED = 0, 1, 2, 3
VERDICTS = ("pass", "fail", "kink", "undecided")

# Why: failures, then undecided elements (0: nothing to say).
RULE, STEP, PRECISION, STRICT_KINK, SUBGRADIENT, CLAIM_NONFINITE = 1, 2, 3, 4, 5, 6
NONFINITE, NOISE, KINK_CLOSE, INACCURATE, JUMP = 7, 8, 9, 10, 11
COTANGENT = 12  # the backward is not linear in grad_output (see `cotangents`)
REENTRANT = 13  # the same backward twice gave different numbers
ROUNDED = 14  # within what a float64 backward's rounding at f's size may leave (see flat)
SEVERAL_KINKS = 15  # kinks in several coordinates, neither certified nor decided along directions
ROW_ROUNDED = 16  # within what a float64 backward's rounding at the row's scale may leave
UNCONFIRMED = 17  # wrong at steps above 1 only, and steps below 1 do not confirm it (see coarse)
REASONS = {
    0: "",
    RULE: "rule",
    STEP: "step",
    PRECISION: "precision",
    STRICT_KINK: "kink",
    SUBGRADIENT: "not a subgradient",
    CLAIM_NONFINITE: "non-finite gradient",
    NONFINITE: "non-finite function",
    NOISE: "rounding noise",
    KINK_CLOSE: "kink closer than any step",
    INACCURATE: "finite differences not accurate enough",
    JUMP: "the function jumps",
    COTANGENT: "backward not linear in grad_output",
    REENTRANT: "backward not reentrant",
    ROUNDED: "within the backward's rounding",
    SEVERAL_KINKS: "kinks in several coordinates",
    ROW_ROUNDED: "within the rounding at its row's scale",
    UNCONFIRMED: "coarse steps not confirmed by fine ones",
}
_NUMERIC_REASON = {S.NONFINITE: NONFINITE, S.NOISE: NOISE, S.KINK_CLOSE: KINK_CLOSE}

# Defaults per dtype of the claim: rtol, and atol as two fractions of the gradient's scale:
# how accurate the numeric side must be to decide, and how far the claim may be from it.
# They differ so that one small element next to large ones is still compared closely (a
# wrong 2 beside 2e7 passed with a single 1e-6 of the scale) wherever the finite
# differences are that accurate, without leaving undecided those where they are not.
# The numeric side is float64 whatever the claim's dtype; float32 claims carry float32
# rounding, and their rule is checked again in float64 (see `checker`).
# A fourth fraction is the claim's distance where the complex step gave the numbers: they
# are exact there (no cancellation in f, whatever its size), so in float64 an element a
# billionth of its row's scale is compared too (a dropped 1e-3·x² term beside 1e6·x²
# passed at 1e-9, QA). Finite differences compare as closely (1e7·x0 + 1e-3·x1² with the
# x1 term dropped passed at 1e-9): their error estimate allows for f's measured noise now
# (see `noise`), which large intermediate terms cancelling in f made it miss. A forced
# step (--eps, --method central) has no error estimate: it compares at FIXED_COMPARE.
# The deciding fraction, 1e-6 of the row, applies only as far as the element's own rtol
# part (see `Tolerance.bounds`): an element of 2 beside one of 2e6 had an allowance of 2,
# and a claim of 2.4 passed on differences whose error estimate was 1.8 (QA round 10).
# The claim passes within 4 ulps of its row's scale (beside rtol of itself): the rounding
# of an element computed from terms as large as the row's largest derivative; up to
# ROUNDED_ULPS of it, more than that is undecided (ROW_ROUNDED, `flat.doubt_rounded`).
# (It was 1e-12, 4,500 ulps, passed: an element 1e-12 of its row was not checked at all;
# a polynomial fit on raw t in [0, 1000] passed its intercept's gradient with the sign
# flipped, -0.072 beside 8.4e12, and -sum(log(p)) at p = [1e-13, 0.5, ...] passed the
# other elements dropped, although finite differences resolved them to 1e-13, QA round 20.)
ROW_PASS = 4 * S.EPS
DEFAULTS = {
    "float64": (1e-5, 1e-6, ROW_PASS, ROW_PASS),
    "float32": (1e-4, 1e-5, 1e-5, 1e-5),
    "float16": (1e-2, 1e-3, 1e-3, 1e-3),  # (a function that casts to half inside: eps 1e-3)
}
# ... and an element is always decided to this part of its row, whatever its size (1e-10
# left a dead ReLU unit's exact 0 undecided beside a loss 1e4 times its gradient: its
# differences round to 2·eps·|f|/h, QA round 11).
NARROW = 1e-8
TWIN = 1e-6  # a float32 claim's float64 twin: the deciding fraction it is compared at
FIXED_COMPARE = 1e-9  # (sum(sin(x)·x²) over 1,000 points: h = 6e-6 rounds to 1e-5 of 2e-4)
# Where the adaptive steps pass a claim, a forced step h may miss it by f's rounding over
# h, up to this many eps·|f|/h (two values each rounded, and rounded inside f): eps = 1e-6
# on logsumexp(W @ W), |f| = 17, is off by 1.8e-9, 0.5 of them, and a right gradient
# failed as "the step is too large" (QA round 28; PyTorch's gradcheck passes it).
FORCED_ROUNDING = 8.0
FLOOR = 1e-14  # the atol floor: this fraction of |f| per unit of x is rounding level
# Where the complex step gave the numbers (exact), only the claim's own rounding is left:
# a rule computed at the size of f (1 - tanh(20)² is 0, the truth 1.7e-17) is right.
FLOOR_EXACT = 4 * S.EPS
# A finite difference's best resolution decides up to this part of the scale (it was
# 1e-4: a claim 20% off, on an element 1e-6 of its row, passed at that resolution), or up
# to SOFT times the element's own rtol part (a quantized f's right gradient, resolved to
# 1.6e-5 of itself, is decided there).
RESOLVED = 1e-9
SOFT = 8.0
STILL = 1e-6  # a claim where f does not move, below what it shows: decided at this part of the row
# A row whose every claim is this small may be a zero gradient, decided where finite
# differences put the truth within this much (absolute) of it: a minimum, a flat piece.
# (It was decided at their resolution, however coarse: 1e12 + 1e-3·sum(w) resolves its
# gradient to about 2e-3 only, and a claim of 0 there passed, QA round 10.)
ZERO = 1e-10
# The rounding size of a derivative where f does not move at all: an absolute 64 ulps (a
# flat f bounds the true derivative by rounding over the step, which shrinks as |x| grows:
# an allowance growing with |x| passed a sign-flipped 1e-8 beside x = 1e12, QA).
FLAT = 64 * S.EPS
# Where the complex step gives the exact derivative, a claim off by more than FLOOR_EXACT
# but within this many ulps of the largest |f| may be the backward's own rounding, which
# the chain rule amplifies by the values it multiplies by (softmax(x @ W) with x ≈ -19:
# s·(1 - s) at s ≈ 1 - 5e-13 rounds to an ulp of 1, times 19, 7 ulps in all; PyTorch's
# backward gives the same bits): undecided, never failed as a wrong rule nor passed.
ROUNDED_ULPS = 64
SURE = 4.0  # a claim this many error estimates (beyond the tolerance) off is wrong
ROUNDING_PASS = 1e-6  # see `judge`'s kinks


@dataclass(frozen=True)
class Tolerance:
    """atol + rtol·|numeric| per element; atol None means relative to each row's scale."""

    rtol: float
    atol: float | None = None
    scale_atol: float = 1e-6  # the numeric side's accuracy that decides (see DEFAULTS)
    compare_atol: float = 1e-12  # the claim's distance from it that passes
    exact_atol: float = 1e-12  # the same where the complex step gave the numbers

    @classmethod
    def default(cls, dtype: str, atol: float | None = None, rtol: float | None = None):
        r, decide, compare, exact = DEFAULTS.get(dtype, DEFAULTS["float64"])
        return cls(r if rtol is None else rtol, atol, decide, compare, exact)

    def fixed(self) -> Tolerance:
        """The tolerance for a forced step's differences, whose error is not estimated."""
        return replace(self, compare_atol=max(self.compare_atol, FIXED_COMPARE))

    def of(
        self,
        claim: np.ndarray,
        numeric: np.ndarray,
        f0: np.ndarray,
        x: np.ndarray,
        exact: np.ndarray | None = None,
        deciding: bool = False,
    ) -> np.ndarray:
        """(m, n) tolerances for a claim, its numeric estimate, the size of f near the
        point (f(x), or the largest |f| the numeric side saw there) and the point.
        ``exact`` (n,) marks the elements whose numeric side is the complex step: no
        cancellation there, so the rounding floor from |f| is the claim's own, FLOOR_EXACT
        (a large constant in f must not hide a wrong gradient the complex step resolves).
        ``deciding``: the accuracy the numeric side needs to decide, rather than the
        distance that passes."""
        compare, decide = self.bounds(claim, numeric, f0, x, exact)
        return decide if deciding else compare

    def bounds(
        self,
        claim: np.ndarray,
        numeric: np.ndarray,
        f0: np.ndarray,
        x: np.ndarray,
        exact: np.ndarray | None = None,
        error: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """`of`'s two tolerances at once: the distance that passes, the accuracy that
        decides (`judge`'s ``tau`` and ``accuracy``). ``error``: the finite differences'
        error estimate, which bounds their rounding floor (below)."""
        relative = self.rtol * np.abs(np.nan_to_num(numeric, nan=0.0, posinf=0.0, neginf=0.0))
        if self.atol is not None:
            tau = self.atol + relative
            return tau, tau
        scale = row_scale(claim, numeric)[:, None]
        size = rounding_size(f0)[:, None]
        exact_columns = np.zeros(relative.shape[1], dtype=bool) if exact is None else exact
        exact_columns = np.asarray(exact_columns, dtype=bool)
        # Where the complex step decides, |f| itself: a rule computed at the size of f,
        # 1 - tanh(15)² or s·(1 - s) at 30, rounds to ulps of f, however large the
        # variable's other x. Finite differences, |f| per unit of x: their floor is far
        # wider, and |f| alone passed a claim 0.01 for relu's 0 beside an x of 1e12.
        x_scale = max(1.0, float(np.max(np.abs(x), initial=0.0)))
        floor = size * np.where(exact_columns, FLOOR_EXACT, FLOOR / x_scale)
        floor = np.maximum(floor, 1e-300)
        compare = np.where(exact_columns, self.exact_atol, self.compare_atol)
        # Where finite differences estimated their own error, that estimate (not |f|) says
        # what they cannot see, and no floor excuses a claim: 1e12 + 1e-3·sum(w), resolved
        # to 2e-3 only, passed a claim of 0 within its floor of 5e-3 (QA round 10).
        if error is not None:
            floor = np.where(exact_columns, floor, 1e-300)
        # The deciding allowance: the row's fraction, but no more than the element's own
        # rtol part beyond NARROW of the row (a small element is resolved to its row's 1e-8,
        # not 1e-6; one near the row's scale keeps 1e-6, twice rtol at most).
        row = np.maximum(NARROW * scale, np.minimum(self.scale_atol * scale, relative))
        return (
            np.maximum(compare * scale, floor) + relative,
            np.maximum(row, floor) + relative,
        )


def rounding_size(f0: np.ndarray) -> np.ndarray:
    """The size each output's rounding is at (m,): the largest finite |f| among them, since
    outputs share intermediates (softmax's 1e-13 output rounds to ulps of its 1: a right
    backward failed as "not linear in grad_output", QA round 11)."""
    finite = np.where(np.isfinite(f0), np.abs(f0), 0.0)
    return np.full(np.shape(finite), np.max(finite, initial=0.0))


def rtol_part(value: np.ndarray) -> np.ndarray:
    """rtol·|value| per element at the float64 default rtol (the strictest: judge is given
    tolerances, not the rtol they were made with)."""
    return DEFAULTS["float64"][0] * np.abs(np.nan_to_num(value, nan=0.0, posinf=0.0, neginf=0.0))


def row_scale(claim: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    """Each output row's scale: its largest finite derivative, claimed or numeric."""
    finite = np.where(np.isfinite(claim), np.abs(claim), 0.0).max(axis=1, initial=0.0)
    seen = np.where(np.isfinite(numeric), np.abs(numeric), 0.0).max(axis=1, initial=0.0)
    return np.maximum(finite, seen)


def judge(
    claim: np.ndarray,
    numeric: S.Numeric,
    tau: np.ndarray,
    strict: bool = False,
    estimate: np.ndarray | None = None,
    accuracy: np.ndarray | None = None,
    given: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Each element's verdict and reason. ``estimate`` replaces the numeric estimate for a
    fixed-step method (compared plainly, without its error); kinks and undecided points
    are still told by the adaptive ``numeric``. ``accuracy`` (default ``tau``): the error
    the numeric side may have and still decide; the claim must be within ``tau`` plus it.
    ``given``: the tolerance is the user's own (--atol): no resolution loosens it, but for
    a zero claim's absolute ZERO."""
    # Where f does not change at all along an element (every difference exactly 0, and f's
    # rounding bounds the truth within FLAT: f is 0 there, or its terms cancel bit for bit
    # at every step, as batch_norm(x).sum() can, with a bound of 1e-27), the truth is 0 and
    # a claim of rounding size — the residue of terms that cancel, as autograd leaves it —
    # is right (batch_norm's 1.4e-16 failed as a wrong rule).
    flat = (numeric.estimate == 0) & (numeric.error <= FLAT)
    tau = np.where(flat, np.maximum(tau, FLAT), tau)
    accuracy = tau if accuracy is None else np.maximum(accuracy, tau)
    verdict = np.full(claim.shape, PASS, dtype=np.int8)
    reason = np.zeros(claim.shape, dtype=np.int8)
    fixed = estimate is not None
    value = estimate if fixed else numeric.estimate
    err = np.zeros(claim.shape) if fixed else numeric.error
    # An error within twice the best resolution any step could reach is as good as it
    # gets: decided at that resolution rather than left undecided, but only where that
    # resolution is a small part (RESOLVED) of the gradient's scale, or where the claim is
    # a zero gradient: below the resolution and below ZERO outright (cosh at its
    # minimum: f(x ± h) = 1 + h²/2 resolves the derivative 0 to about 1e-12 only; a
    # constant such as sum(inv(q) * q.T) = 3 has rounding residues of 1e-16 for gradient).
    # A true gradient that small would pass there, as in any finite-difference check.
    # Elsewhere finite differences cannot tell a wrong claim from a right one:
    # f = 1e10 + 1e-3·x² has a resolution of about 1e-2, five times its gradient (a 1.5x
    # wrong gradient passed before), and a claim they cannot resolve is undecided.
    reach = accuracy
    zero = np.zeros(claim.shape, dtype=bool)  # a zero row's elements (see below)
    if numeric.resolution is not None and not given:  # (a user's own atol is never loosened)
        claimed = np.where(np.isfinite(claim), np.abs(claim), 0.0).max(axis=1, initial=0.0)
        scale = row_scale(claim, value)[:, None]
        resolution = 2 * numeric.resolution
        zero = (claimed[:, None] <= resolution) & (claimed[:, None] <= ZERO)
        # (a resolution within a few times the element's own rtol part: a noisy f's best)
        usable = (resolution <= RESOLVED * scale) | (resolution <= SOFT * rtol_part(value))
        reach = np.where(usable, np.maximum(accuracy, resolution), accuracy)
        # (twice ZERO: the rounding bound of a flat f's differences has a factor 2 to
        # spare; a constant 77 bounds its derivative by 1.4e-10 at the ladder's steps)
        reach = np.where(zero, np.maximum(reach, 2 * ZERO), reach)
        # Where f did not move at all along the element and the claim is below what the
        # differences could see (a dead ReLU unit's 0, a saturated tanh unit's 1e-20,
        # beside a loss 1e4 times the gradient: differences exactly 0, their rounding
        # bound 1e-7 of the row), it is decided at 1e-6 of the row.
        # (only a claim of rounding size beside its row: sum(x**2) at [1e6, 1e-3] passed a
        # claim of 1.0 for the truth 0.002, below what f's differences show, QA round 12)
        with np.errstate(invalid="ignore"):
            still = (value == 0) & (np.abs(claim) <= err) & (np.abs(claim) <= NARROW * scale)
        reach = np.where(still, np.maximum(reach, STILL * scale), reach)
    with np.errstate(all="ignore"):
        gap = np.abs(claim - value)
    smooth = numeric.kind == S.SMOOTH
    # Agreement within the tolerance plus the error estimate; a wrong rule only beyond four
    # times that estimate (Ridders' estimate can be optimistic where f's own rounding is
    # more than eps·|f|: sin(x/1e3) at 1e12 rounds x/1e3, and a right gradient was "wrong"
    # by 1.6 estimates, QA). Between the two, undecided.
    close = gap <= tau + err  # NaN compares false: never agreement
    wrong = ~(gap <= tau + SURE * err)
    # A zero gradient's claim that its noisy estimate does not refute, off it by less than
    # 2·ZERO, passes as such claims are decided (over 100 inputs of layer_norm(x).sum(),
    # estimates of 5e-11 ± 3e-11 came out undecided, and gradcheck failed a right gradient)
    close |= zero & ~wrong & (gap <= 2 * ZERO)
    verdict[smooth & wrong] = FAIL
    reason[smooth & wrong] = RULE
    vague = smooth & ~wrong & (~close | ~(err <= reach))
    verdict[vague] = UNDECIDED
    reason[vague] = INACCURATE
    kink = numeric.kind == S.KINK
    side = np.where(kink & np.isfinite(numeric.error), numeric.error, 0.0)  # (see ladder)
    # f's rounding over the step passes a claim up to ROUNDING_PASS of the interval's size;
    # beyond that (relu(x) + 1e8: 1.2e-2 at its step passed a claim 1% off, QA round 19)
    # it is undecided, and only beyond the rounding itself wrong
    rounding = one_sided_rounding(numeric)
    sides = np.maximum(np.abs(numeric.left), np.abs(numeric.right))
    lo, hi = (
        np.minimum(numeric.left, numeric.right) - tau,
        np.maximum(numeric.left, numeric.right) + tau,
    )
    with np.errstate(invalid="ignore"):
        passing = np.maximum(side, np.minimum(rounding, ROUNDING_PASS * sides))
        between = (claim >= lo - passing) & (claim <= hi + passing)
        possible = (claim >= lo - np.maximum(side, rounding)) & (
            claim <= hi + np.maximum(side, rounding)
        )
    verdict[kink & between] = FAIL if strict else KINK
    reason[kink & between] = STRICT_KINK if strict else 0
    verdict[kink & ~possible] = FAIL
    reason[kink & ~possible] = SUBGRADIENT
    verdict[kink & possible & ~between] = UNDECIDED
    reason[kink & possible & ~between] = INACCURATE
    if numeric.banded is not None:
        # A claim beyond a noise band's bound but within 2·ZERO of it may be a backward's
        # own rounding through terms far larger than f (batch statistics at 1e4: 1.3e-10,
        # where the band bounds the truth to 1e-11; QA round 32): undecided, not wrong.
        with np.errstate(invalid="ignore"):
            near = numeric.banded & (gap <= 2 * ZERO) & (verdict == FAIL)
        verdict[near], reason[near] = UNDECIDED, NOISE
    undecided = numeric.kind == S.UNDECIDED
    verdict[undecided] = UNDECIDED
    for code, why in _NUMERIC_REASON.items():
        reason[undecided & (numeric.reason == code)] = why
    # A jump at the point: no derivative exists there, so no claim is right (PyTorch's
    # gradcheck fails it too); never "undecided", which --allow-undecided would pass.
    jumps = undecided & (numeric.reason == S.JUMP)
    verdict[jumps] = FAIL
    reason[jumps] = JUMP
    bad_claim = ~np.isfinite(claim) & ~undecided
    verdict[bad_claim] = FAIL
    reason[bad_claim] = CLAIM_NONFINITE
    return verdict, reason


FLOAT32_ROUNDING = 8192  # ulps of float32 at the row's scale: 1e-3 of it
EPS32 = float(np.finfo(np.float32).eps)


def precision_triage(analytic, analytic64, numeric, options, f0, x, estimate, verdicts, reasons):
    """A float32 claim fails for its rule when its float64 twin fails too, and for its
    precision when only the float32 one does."""
    tol64 = replace(Tolerance.default("float64", options.atol, options.rtol), scale_atol=TWIN)
    exact = numeric.complex_step if estimate is None else None
    compared = numeric.estimate if estimate is None else estimate
    # The twin is compared at TWIN of the row's scale: a user's gradient that computes in
    # float32 whatever its inputs carries float32 rounding in its "float64" twin too. (It
    # only tells a wrong rule from float32's rounding: the float32 verdict stands.)
    tau64 = tol64.of(analytic64, compared, f0, x, exact, deciding=True)
    wide, wide_reasons = judge(analytic64, numeric, tau64, options.strict, estimate)
    rule = wide == FAIL
    # Only an error float32 rounding can make is "precision": within FLOAT32_ROUNDING ulps
    # of float32 at the row's scale (a float32-only backward 2% off was "the rule is
    # right, float32 rounding is not precise enough", QA round 14).
    finite = np.abs(np.nan_to_num(analytic64, posinf=0.0, neginf=0.0))
    row = np.max(finite, axis=1, keepdims=True, initial=0.0)  # (no elements: 0)
    # A zero gradient has no row to scale by (its twin's row is residues): its float32
    # claim rounds at its terms' scale, unknown, taken as 1 (softmax(x).sum() in float32
    # gives 2e-8, layer_norm(x).sum() 4e-8: "the rule is wrong" where the float64 twin
    # passes, QA round 33)
    row = np.where(row <= ZERO, 1.0, row)
    # Inputs far larger than their spread round in float32 at their own scale, and the
    # error follows into every difference of them (x - max(x) at 1e6 rounds to 0.0625:
    # a log-sum-exp's float32 gradient 3% off, "the rule is wrong" where the float64 twin
    # passes, QA round 34): the allowance grows with the largest input.
    size = max(1.0, float(np.max(np.abs(x), initial=0.0, where=np.isfinite(x))))
    with np.errstate(invalid="ignore"):
        plausible = np.abs(analytic - compared) <= FLOAT32_ROUNDING * EPS32 * row * size
    precision = (verdicts == FAIL) & ~rule & (reasons == RULE) & plausible
    reasons[precision] = PRECISION
    verdicts[rule] = FAIL
    reasons[rule] = wide_reasons[rule]


def one_sided_rounding(numeric: S.Numeric) -> np.ndarray:
    """(m, E): what f's rounding can put into a one-sided quotient at the element's step,
    2·eps·|f| / h, which the ladder's error estimate can miss: on a linear piece its
    quotients agree to better than that (-relu(x + 1.5) + 0.1·x at -1.5 gave 0.1 - 5e-12
    with an estimate of 1.2e-12, and relu'(0) = 0's claim 0.1 failed, QA round 18)."""
    if numeric.magnitude is None:
        return np.zeros_like(numeric.error)
    step = np.where(numeric.step > 0, numeric.step, np.inf)
    return 2.0 * S.EPS * numeric.magnitude[:, None] / step[None, :]
