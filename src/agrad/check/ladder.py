"""The ladder of steps: central differences at h0, h0/4, h0/16, ... with Ridders'
extrapolation, each element classified by how its one-sided gap scales (see `steps`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .confirm import confirm_settled
from .jumps import jumps
from .steps import (
    EPS,
    JUMP,
    KINK,
    KINK_CLOSE,
    MAX_LEVELS,
    NOISE,
    NONFINITE,
    RATIO,
    SHAPE_FLAT,
    SHAPE_KINK,
    SHAPE_NEAR,
    SHAPE_NOISE,
    SHAPE_OPEN,
    SHAPE_SMOOTH,
    SMOOTH,
    START,
    UNDECIDED,
    Along,
    Numeric,
    _per_element,
    quotient,
)


def ladder(
    along: Along,
    f0: np.ndarray,
    elements: np.ndarray,
    first_step: np.ndarray,
    target: np.ndarray,
    claim: np.ndarray | None = None,
    max_levels: int = MAX_LEVELS,
    keep_trace: bool = False,
    actual: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
    noise: np.ndarray | None = None,
) -> Numeric:
    """Derivatives along ``elements`` by a ladder of central differences.

    ``f0`` is f at the base, (m,) or per element (m, E) (projected outputs differ per
    element). ``first_step`` (E,) is each element's largest step; ``target`` (m, E) the
    accuracy that settles an element (its tolerance); ``claim`` (m, E), when given, lets an
    element stop early once it clearly disagrees with the claim at a smooth point.
    ``actual(elements, h)`` gives the steps float64 really takes on either side; ``noise``
    (m, E), f's measured noise where it exceeds rounding (see `noise`).
    """
    n = elements.size
    f0 = _per_element(f0, n)
    m = f0.shape[0]
    out = Numeric.empty(m, n)
    finite0 = np.isfinite(f0)
    if n == 0:
        return out
    state = _LadderState(m, n, f0, claim, target, noise)
    active = np.arange(n)
    for k in range(max_levels):
        h = first_step[active] / RATIO**k
        hp, hm = (h, h) if actual is None else actual(elements[active], h)
        with np.errstate(all="ignore"):  # overflow, poles, domains: inf and nan are data here
            up = along(elements[active], hp)
            down = along(elements[active], -hm)
            done, settled_smooth = state.level(k, active, h, up, down, hp, hm)
        out.evaluations += 2 * active.size
        out.evaluations += confirm_settled(
            state, along, elements, active, h, first_step, done, done & settled_smooth, actual
        )
        if keep_trace:
            out.trace.append((k, active.copy(), h.copy(), state.last_gap.copy()))
        out.levels[active] = k + 1
        active = active[~done]
        if not active.size:
            break
    with np.errstate(all="ignore"):
        state.finish(out, finite0)
    return out


class _LadderState:
    """The running Ridders tableau and gap history of the elements on the ladder."""

    def __init__(self, m, n, f0, claim, target, noise=None):
        self.f0 = f0
        self.spread = 0.0 if noise is None else 3 * noise  # f within ±3σ of a smooth f
        self.claim = claim
        self.target = target
        self.best = np.full((m, n), np.nan)
        self.best_err = np.full((m, n), np.inf)
        self.best_step = np.zeros((m, n))
        self.best_mag = np.zeros((m, n))
        self.resolution = np.full((m, n), np.inf)
        self.rows: list[np.ndarray] = []  # the previous tableau row, for the active elements
        self.gaps: list[np.ndarray] = []  # |D+ - D-| per level, full width (nan: not active)
        self.gap_noise: list[np.ndarray] = []
        self.plus: list[np.ndarray] = []  # one-sided quotients per level, full width
        self.minus: list[np.ndarray] = []
        self.steps: list[np.ndarray] = []
        self.any_finite = np.zeros((m, n), dtype=bool)
        self.falls = np.zeros((m, n), dtype=np.int16)  # consecutive levels the gap fell at
        self.taylor = np.zeros((m, n), dtype=bool)  # it fell at two levels in a row
        self.last_gap = np.zeros((m, 0))
        self.central = np.full((m, n), np.nan)  # each element's last central quotient
        self.m, self.n = m, n

    def _full(self, active, values):
        full = np.full((self.m, self.n), np.nan)
        full[:, active] = values
        return full

    def level(self, k, active, h, up, down, hp, hm) -> tuple[np.ndarray, np.ndarray | bool]:
        """Take one level's evaluations; return which active elements are done, and which
        of them settled on a smooth estimate."""
        f0 = self.f0[:, active]
        spread = self.spread if np.isscalar(self.spread) else self.spread[:, active]
        central, noise = quotient(up, down, hp, hm, spread)
        plus, minus = (up - f0) / hp, (f0 - down) / hm
        finite = np.isfinite(up) & np.isfinite(down) & np.isfinite(f0)
        # Rounding in the gap: f(x) counts twice there.
        gap_noise = (EPS * (np.abs(up) + 2 * np.abs(f0) + np.abs(down)) + 4 * spread) / h
        # Where f is odd about the point (sin(k·x) at 0) the one-sided gap is 0 at every
        # step, too coarse or not: the central quotient's own change stands in for it.
        moved = np.nan_to_num(np.abs(central - self.central[:, active]), nan=0.0)
        self.central[:, active] = central
        gap = np.where(finite, np.maximum(np.abs(plus - minus), moved), np.nan)
        self.any_finite[:, active] |= finite
        previous = [r[:, self._keep] for r in self.rows] if self.rows else []
        best, best_err, best_step, best_mag = (
            a[:, active] for a in (self.best, self.best_err, self.best_step, self.best_mag)
        )
        if k == 1:
            self.resolution[:, active] = np.where(finite, noise, np.inf)
        if self.gaps:
            # A level where the gap does not fall (a kink's steady gap, a pole straddled) ends
            # a regime: the estimates so far belong to it, not to the smooth function below.
            before = self.gaps[-1][:, active]
            with np.errstate(all="ignore"):
                ratio = before / gap
            significant = (gap > 8 * gap_noise) & (gap > self.target[:, active])
            falling = ratio >= 2.5
            reset = significant & ~falling
            # Until the gaps have fallen as h at two levels in a row, the steps are not in
            # Taylor's regime, and agreeing estimates there prove nothing: a level whose gap
            # does not fall, above rounding, ends the regime however small that gap is
            # (relu(x) + sin(x) at 1e11: steps of 1e8 average sin out, agreeing at 1e-8).
            taylor = self.taylor[:, active]
            coarse = h > START  # (relative steps, |x| > 1: where they may be too coarse)
            reset |= coarse & ~taylor & ~falling & (gap > 64 * gap_noise)
            falls = np.where(falling | (gap <= 4 * gap_noise), self.falls[:, active] + 1, 0)
            self.falls[:, active] = falls
            self.taylor[:, active] = taylor | (falls >= 2)
            previous = [np.where(reset, np.nan, r) for r in previous]
            best = np.where(reset, np.nan, best)
            best_err = np.where(reset, np.inf, best_err)
        # Ridders: row k of the Neville tableau, extrapolating in h² (factor RATIO²).
        row = [central]
        errors = [np.full(central.shape, np.inf)]
        for level, older in enumerate(previous, start=1):
            factor = RATIO ** (2 * level)
            extrapolated = row[-1] + (row[-1] - older) / (factor - 1.0)
            err = np.maximum(np.abs(extrapolated - row[-1]), np.abs(extrapolated - older))
            row.append(extrapolated)
            errors.append(err)
        size = np.where(finite, np.maximum(np.abs(up), np.abs(down)), 0.0)
        for value, err in zip(row, errors, strict=True):
            err = np.where(finite, np.maximum(err, noise), np.inf)
            better = err < best_err
            best = np.where(better, value, best)
            best_err = np.where(better, err, best_err)
            best_step = np.where(better, h, best_step)
            best_mag = np.where(better, size, best_mag)
        for name, values in (("best", best), ("best_err", best_err), ("best_step", best_step),
                             ("best_mag", best_mag)):  # fmt: skip
            getattr(self, name)[:, active] = values
        self.rows = row
        self.gaps.append(self._full(active, gap))
        self.gap_noise.append(self._full(active, gap_noise))
        self.plus.append(self._full(active, plus))
        self.minus.append(self._full(active, minus))
        self.steps.append(self._full(active, np.broadcast_to(h, central.shape)))
        self.last_gap = gap
        done, smooth = self._settled(k, active, best, best_err)
        self.keep(done)
        return done, smooth

    _keep = slice(None)

    def keep(self, done: np.ndarray) -> None:
        self._keep = ~done  # the tableau rows follow the elements that stay

    def disagrees(self, active, cols, central, noise) -> np.ndarray:
        """Which settled elements ``cols`` (of ``active``) a central difference at a much
        finer step disagrees with: steps far coarser than the scale f varies on (sin at
        1e9, relative steps of 1e5) can agree with each other on the derivative of f
        smoothed out, which is no derivative of f."""
        where = active[cols]
        best, err = self.best[:, where], self.best_err[:, where]
        # A difference that matters: beyond the accuracy the check needs, the finer
        # difference's rounding, at most this level's truncation error (it falls as h²)
        # and the estimate's own error.
        truncation = np.abs(self.rows[0][:, cols] - best)
        allowed = self.target[:, where] + 8 * noise + 4 * err + truncation
        return ~(np.abs(central - best) <= allowed).all(axis=0)

    def refute(self, active, cols) -> None:
        """Drop the regime of elements ``cols`` (of ``active``): the ladder goes on."""
        gone = active[cols]
        self.best[:, gone], self.best_err[:, gone] = np.nan, np.inf
        for row in self.rows:
            row[:, cols] = np.nan
        self.taylor[:, gone], self.falls[:, gone] = False, 0

    def _settled(self, k, active, best, best_err) -> tuple[np.ndarray, np.ndarray | bool]:
        """Elements whose every output has a clear outcome at this level, and which of them
        settled on a smooth estimate (to be confirmed at a finer step, see `_confirm`)."""
        lost = ~np.isfinite(self.f0[:, active])  # f(x) itself is not finite: no step helps
        if lost.all():
            return np.ones(active.size, dtype=bool), False
        if k == 0:
            return np.zeros(active.size, dtype=bool), False
        if k == 1:  # two levels: only a textbook smooth point, converged well past need
            g0, g1 = self.gaps[0][:, active], self.gaps[1][:, active]
            quiet = g1 <= np.maximum(4 * self.gap_noise[1][:, active], 1e-300)
            quiet &= g0 <= np.maximum(4 * self.gap_noise[0][:, active], 1e-300)
            with np.errstate(all="ignore"):
                clean = (g0 / g1 >= 3.2) & (g0 / g1 <= 5.0)  # the gap falls as h, no faster
            settled = (clean | quiet) & (best_err <= self.target[:, active] / 16)
            return (settled | lost).all(axis=0), ~lost.all(axis=0)
        last = np.full((self.m, active.size), k)
        shape = self._signature(active, last)
        target = self.target[:, active]
        smooth = shape == SHAPE_SMOOTH
        settled = smooth & (best_err <= target / 8)
        if self.claim is not None:  # clearly wrong at a smooth point: no need to go on
            gap = np.abs(self.claim[:, active] - best)
            settled |= smooth & (best_err <= target) & (gap > 4 * (target + best_err))
        # (rounding's rise keeps the estimate from before it, which the verdict takes as
        # smooth: it is confirmed too; at 1e12, 1e3·x + 100·sin(x/100)'s gaps rise as 1/h
        # within 64x rounding at steps of 1e8, and a wrong claim of 1e3 passed)
        rounded = (shape == SHAPE_NOISE) & np.isfinite(best_err)
        smooth = (settled | rounded | lost).all(axis=0) & (settled | rounded).any(axis=0)
        settled |= (shape == SHAPE_KINK) | (shape == SHAPE_NOISE) | (shape == SHAPE_FLAT)
        return (settled | lost).all(axis=0), smooth

    def _signature(self, columns, last) -> np.ndarray:
        """How the gap and the one-sided quotients scaled over the last levels each element
        reached (``last``: (m, E) level index), per (output, element)."""
        levels = np.arange(len(self.gaps))

        def back(series, j):  # the value ``j`` levels before each element's last
            at = np.clip(last - j, 0, len(series) - 1)
            stacked = np.stack([x[:, columns] for x in series])
            value = np.take_along_axis(stacked, at[None], axis=0)[0]
            return np.where(last - j >= 0, value, np.nan)

        depth = min(5, levels.size)
        g = [back(self.gaps, j) for j in range(depth)]  # g[0]: the finest level
        noise = [back(self.gap_noise, j) for j in range(depth)]
        target = self.target[:, columns]
        quiet = [gj <= np.maximum(4 * nj, 1e-300) for gj, nj in zip(g, noise, strict=True)]
        significant = [(gj > 8 * nj) & (gj > target) for gj, nj in zip(g, noise, strict=True)]
        with np.errstate(all="ignore"):
            ratio = [g[j + 1] / g[j] for j in range(depth - 1)]  # > 1: falling as h falls
        shape = np.full(g[0].shape, SHAPE_OPEN, dtype=np.int8)
        if depth < 3:
            return shape
        falling = [(r >= 2.5) | q for r, q in zip(ratio, quiet, strict=False)]
        shape[falling[0] & falling[1]] = SHAPE_SMOOTH
        shape[quiet[0] & quiet[1] & quiet[2]] = SHAPE_FLAT
        rising = (ratio[0] < 0.5) & (ratio[1] < 0.5) & ~significant[0]
        # (rounding's rise: within rounding, or past Taylor's regime; not steps too coarse,
        # which rise as 1/h too, and where relative steps are coarser than the first
        # absolute one, f's own rounding can exceed the estimate: sums round as terms do)
        fine = back(self.steps, 0) <= START
        rising &= self.taylor[:, columns] | (g[0] <= 64 * noise[0]) | fine
        shape[rising & (shape == SHAPE_OPEN)] = SHAPE_NOISE
        if depth >= 5:
            steady = np.ones(g[0].shape, dtype=bool)
            for j in range(4):
                steady &= significant[j]
            for r in ratio[:3]:
                steady &= (r > 0.5) & (r < 2.0)
            # At a true kink each one-sided quotient converges (its changes fall with h);
            # near a kink at distance d its far-side quotient moves like d/h instead.
            converging = steady.copy()
            for series in (self.plus, self.minus):
                q = [back(series, j) for j in range(3)]
                # (a change of a few ulps of the quotient is its own rounding: std at a
                # constant vector is |h|·c, its quotients ±c to the last bit but one)
                n0 = np.maximum(noise[0] / 4, 4 * EPS * np.abs(q[0]))
                inc0, inc1 = np.abs(q[0] - q[1]), np.abs(q[1] - q[2])
                converging &= (inc0 <= np.maximum(n0, 1e-300)) | (inc1 >= 2.5 * inc0)
            shape[converging] = SHAPE_KINK
            shape[steady & ~converging] = SHAPE_NEAR
        return shape

    def finish(self, out: Numeric, finite0: np.ndarray) -> None:
        """Classify every element from its whole ladder and fill ``out``."""
        out.estimate[:] = self.best
        out.error[:] = self.best_err
        out.magnitude = np.maximum(np.abs(np.where(finite0, self.f0, 0.0)), self.best_mag).max(
            axis=1, initial=0.0
        )
        out.resolution = self.resolution
        out.step[:] = np.nanmax(self.best_step, axis=0, initial=0.0)
        g = np.stack(self.gaps)  # (K, m, n); nan where an element had stopped
        columns = np.arange(self.n)
        last = np.maximum(np.sum(~np.isnan(g), axis=0) - 1, 0)  # each element's finest level
        shape = self._signature(columns, last)
        kind = np.full(self.best.shape, SMOOTH, dtype=np.int8)
        reason = np.zeros(self.best.shape, dtype=np.int8)
        is_kink = shape == SHAPE_KINK
        kind[is_kink] = KINK

        corrections = []

        def extrapolated(series):  # one-sided Richardson: each side is smooth (error O(h))
            stacked = np.stack(series)
            fine = np.take_along_axis(stacked, last[None], axis=0)[0]
            coarse = np.take_along_axis(stacked, np.maximum(last - 1, 0)[None], axis=0)[0]
            corrections.append(np.abs(fine - coarse) / (RATIO - 1))
            return np.where(is_kink, (RATIO * fine - coarse) / (RATIO - 1), np.nan)

        out.right[:], out.left[:] = extrapolated(self.plus), extrapolated(self.minus)
        # A kink's error: its one-sided estimates' own (the size of their last correction):
        # a claim at one end of a curved side is between them (elu at 0: its left side's
        # estimate 1.99999999998 beside the claim 2 was "not a subgradient", QA round 16)
        out.error[is_kink] = np.maximum(*corrections)[is_kink]
        step_at = np.take_along_axis(np.stack(self.steps), last[None], axis=0)[0]
        if is_kink.any():
            kink_columns = is_kink.any(axis=0)
            out.step[kink_columns] = np.nanmax(step_at[:, kink_columns], axis=0)
        near = shape == SHAPE_NEAR
        kind[near] = UNDECIDED
        reason[near] = KINK_CLOSE
        nonfinite = ~self.any_finite | ~finite0
        kind[nonfinite] = UNDECIDED
        reason[nonfinite] = NONFINITE
        noisy = ~nonfinite & ~is_kink & ~near & ~np.isfinite(self.best_err)
        kind[noisy] = UNDECIDED
        reason[noisy] = NOISE
        # (also where rounding's rise kept an earlier estimate: a jump's gap rises as 1/h
        # too, and x + 1e-9·(x > -3) at -3 passed on the estimate before it)
        rose = ~nonfinite & ~is_kink & ~near & (shape == SHAPE_NOISE)
        jump = (noisy | rose) & jumps(self, last)
        kind[jump], reason[jump] = UNDECIDED, JUMP
        if jump.any():  # the finest one-sided quotients, and the step they were taken at
            for series, side in ((self.plus, out.right), (self.minus, out.left)):
                finest = np.take_along_axis(np.stack(series), last[None], axis=0)[0]
                side[jump] = finest[jump]
            jump_columns = jump.any(axis=0)
            out.step[jump_columns] = np.nanmax(step_at[:, jump_columns], axis=0)
        out.kind[:], out.reason[:] = kind, reason
