"""f's own noise, measured, where the rounding model (half an ulp of each value) is wrong.

The ladder judges rounding by eps·|f|. A function computed through large terms that cancel
(sum(1e3 + g(x)) - 1e6) is quantized to the ulps of those terms, ~1e-10, while |f| is 0:
its central differences at power-of-two steps come out as exact multiples of the quantum
over h, stable from level to level, and Ridders' error estimate calls them converged (a
claim of 0 passed where the derivative is 2.9). Moré and Wild's ECnoise (2011) measures the
noise instead: f at nine equally spaced points, whose high-order differences see noise and
not a smooth f. It is measured along a random direction (cheap: a few batched calls), at
a first spacing and again at one near the ladder's first step; only where that finds
noise well above the model is each element measured (at both), and the ladder's rounding
widened to what was found.
"""

from __future__ import annotations

from math import factorial

import numpy as np

from .steps import EPS, START

OFFSETS = np.array([-4.0, -3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 4.0])  # f(x) is the fifth point
# The first spacing, times max(1, |x_j|); not a power of two, whose multiples can round
# alike (a quantized f along dyadic steps can move by exactly equal amounts).
FIRST = 0.7213 * 2.0**-20
GROWTH = 16.0  # the spacing's factor between rounds where too few values differ
REDRAW = 1.37  # ... and where they moved by exactly equal amounts (a coincidence, retried)
ROUNDS = 5
WIDER = 16.0  # the second spacing, times the first
NARROWER = 2.0**12  # the third spacing is the first over this
AGREE = 4.0  # how much larger the wide spacing's σ may be (quantization's estimates wobble)
SMALL = 16.0  # noise at most 1/SMALL of f's range over the stencil
CROWDED = 2.9  # the spacing's factor where noise crowds the moves
ABOVE_MODEL = 16.0  # noise below this many times eps·|f| is the model's own
FLOOR_MODEL = 2.0  # ... but above this many, along a random direction, it is every element's
COARSE = START / 8 / FIRST  # the second look's spacing, times the first's
ORDERS = range(1, 7)
GRID = 4096.0  # see `quantized`
NOISE_SEED = 20111
_GAMMA = np.array([factorial(k) ** 2 / factorial(2 * k) for k in ORDERS])


def element_noise(
    var,
    f0: np.ndarray,
    rest: np.ndarray,
    scale: np.ndarray,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray | None, int, np.ndarray | None]:
    """The noise of each output along each element (m, n), measured for the elements
    ``rest`` where it exceeds the rounding model (elsewhere 0); None where none was found
    along a random direction (then no element is measured). Also the evaluations taken,
    and (m, n) where f only rounds along the element (its σ accepted by `rounds` alone). ``rng``
    draws the random direction (by default the same one: the same check, the same answer)."""
    rng = np.random.default_rng(NOISE_SEED) if rng is None else rng
    n = var.size
    if not np.isfinite(f0).all():
        return None, 0, None
    directions = rng.standard_normal((2, n)) * scale
    directions /= np.max(np.abs(directions), axis=1, initial=1e-300)[:, None]
    along = var.along_directions(directions)
    sigma, size, taken, _ = _twice(along, f0, np.zeros(1, dtype=np.intp), np.ones(1), 1)
    # Noise a few ulps above the model's half ulp per value (sum(sin(x)·x²) over 1,000
    # inputs: pairwise summation rounds to 7 ulps of f) is f's own, along every element:
    # it is every element's floor (below ABOVE_MODEL). Unknown to the ladder, its rise as
    # 1/h at fine steps looked like the end of a smooth regime, the good estimates before
    # it were dropped, and a right gradient was undecided.
    with np.errstate(invalid="ignore"):
        floor = np.where(np.isfinite(sigma) & (sigma > FLOOR_MODEL * EPS * size), sigma, 0.0)
    if not _exceeds(sigma, size).any():
        if not floor.any():
            return None, taken, None
        return np.repeat(floor, n, axis=1), taken, None
    # (more than that: each element measured on its own, which decides; a floor from the
    # random direction would override them: sin at 1e11 varies finer than its spacing.
    # What it finds counts from FLOOR_MODEL up, as the random direction's floor does: the
    # outputs of X @ w - y round to a few ulps of their terms, 2 to 16 times eps·|f|)
    noisy = _exceeds(sigma, size)  # (m, 1): the outputs a second look along each may find
    sigma, size, more, alone = _twice(var.along_coordinates(), f0, rest, scale[rest], 0, START,
                                     noisy)  # fmt: skip
    noise = np.zeros((f0.size, n))
    rounding = np.zeros((f0.size, n), dtype=bool)
    with np.errstate(invalid="ignore"):
        noise[:, rest] = np.where(_exceeds(sigma, size, FLOOR_MODEL), sigma, 0.0)
    rounding[:, rest] = alone & (noise[:, rest] > 0)
    return noise, taken + more, rounding


def _twice(along, f0, elements, scale, shift, ladder=np.inf, rows=True) -> tuple[np.ndarray, ...]:
    """`_measure` at the first spacing, and again at one near the ladder's first step (along
    ``elements + shift``: the random probe's second direction) where nothing above the
    model was found. A part quantized coarser than its moves at the first spacing (0.05
    quanta per spacing) beside a smooth part that moves keeps the values distinct, so
    the spacing did not grow as it does where f is still: (1e8 + 1e-4·x0) - 1e8 + x1,
    7 quanta at the ladder's first step. And a quantized part's rounding errors along
    equally spaced points drift by a fixed fraction of its quantum: where that is near 0,
    they lie on a line, unseen by the differences (one look in eight or so)."""
    sigma, size, taken, retired, alone = _measure(along, f0, elements, scale, ladder)
    quiet = ~_exceeds(sigma, size) & ~retired & rows
    cols = np.nonzero(quiet.any(axis=0))[0]
    if cols.size:
        # Its third stencil as fine as the first look's (a feature at 1e-7 is not finer
        # than 3e-8, the second look's spacing over NARROWER: it showed as noise there
        # too), and its spacing not grown past the ladder's first steps (floor(x) at 1.5
        # is quantized, to 1: noise the ladder, which sees no jump there, does not have).
        coarse = _measure(along, f0, elements[cols] + shift, scale[cols] * COARSE,
                          ladder / COARSE, NARROWER * COARSE, grow=False)  # fmt: skip
        found = quiet[:, cols] & _exceeds(coarse[0], coarse[1], FLOOR_MODEL)
        found &= ~(coarse[0] <= sigma[:, cols])
        sigma[:, cols] = np.where(found, coarse[0], sigma[:, cols])
        size[:, cols] = np.where(found, coarse[1], size[:, cols])
        alone[:, cols] = np.where(found, coarse[4], alone[:, cols])
        taken += coarse[2]
    return sigma, size, taken, alone


def _exceeds(sigma: np.ndarray, size: np.ndarray, times: float = ABOVE_MODEL) -> np.ndarray:
    return np.isfinite(sigma) & (sigma > times * EPS * size)


def _measure(along, f0, elements, scale, ladder=np.inf, narrower=NARROWER, grow=True) -> tuple:
    """ECnoise's σ per output and element (nan: not measured), the largest |f| seen, and
    the evaluations taken. σ must not grow at a spacing WIDER times wider: noise does not
    depend on the spacing, while a kink inside the stencil grows with it, and it can pass
    ECnoise's tests at one spacing. ``ladder``: the ladder's first step (times the scale);
    an output that does not move along an element across it is not measured further.
    Also where f only rounds: its σ accepted by `rounds` alone (see there)."""
    m, e = f0.size, elements.size
    taken = 0
    sigma = np.full((m, e), np.nan)
    size = np.zeros((m, e))
    spacing = FIRST * scale
    open_ = np.arange(e)
    always_flat = np.ones((m, e), dtype=bool)
    retired = np.zeros((m, e), dtype=bool)
    by_rounds = np.zeros((m, e), dtype=bool)  # f only rounds: its σ accepted by `rounds` alone
    offsets = np.concatenate([OFFSETS, WIDER * OFFSETS, OFFSETS / narrower])
    for _ in range(ROUNDS):
        cols = np.repeat(elements[open_], offsets.size)
        with np.errstate(all="ignore"):
            moved = along(cols, (spacing[open_, None] * offsets).reshape(-1))
        moved = moved.reshape(m, open_.size, 3, OFFSETS.size)
        taken += cols.size
        center = np.broadcast_to(f0[:, None, None, None], (m, open_.size, 3, 1))
        every = np.concatenate([moved[..., :4], center, moved[..., 4:]], axis=-1)
        with np.errstate(all="ignore"):  # (inf beside inf: exp(1e6·x) at the coarse look)
            estimate, still_all, exact = _ecnoise(every)
        values = every[..., :2, :]
        still, exact = still_all[..., 0], exact[..., 0]
        narrow, wide = estimate[..., 0], estimate[..., 1]
        with np.errstate(invalid="ignore"):
            grows = wide > AGREE * narrow  # (nan: the wide stencil sees f's curvature)
            # Rounding noise is the same at any spacing; a feature finer than the
            # stencil (1e-7·sin(1e7·x) at 1234.5, spacing 8.5e-4) looks like noise there
            # and smooth at a far finer one: above the model, such noise must show there
            # too, or f's values there must be too few to tell (a quantized f).
            finer = estimate[..., 2]
            above = _exceeds(narrow, np.broadcast_to(np.abs(f0)[:, None], narrow.shape))
            faded = above & ~still_all[..., 2] & ~(finer * AGREE >= narrow)
        if faded.any():
            # ... unless only a quantized part froze there, beside a smooth part that still
            # moves (another element's along a random direction, or the element's own)
            cols = np.nonzero(faded.any(axis=0))[0]
            frozen, more = _frozen(along, elements[open_[cols]], spacing[open_[cols]], narrower,
                                   every[:, cols], narrow[:, cols], finer[:, cols])  # fmt: skip
            faded[:, cols] &= ~frozen
            taken += more
        found = np.where(grows | faded, np.nan, narrow)
        # Noise is small beside f's moves across the stencil; a jump or a pole inside it is
        # not (its σ is a quarter of its size or more): neither is noise to allow for.
        with np.errstate(invalid="ignore"):
            moves = np.min(np.ptp(values, axis=-1), axis=-1)
            crowded = found * SMALL > moves
            # Unless f moved at all three spacings (65,536 times apart) and the same σ was
            # found at each: noise is the same at every spacing, a jump's or a pole's is
            # not. So is f that only rounds, terms that cancel to 0 (layer_norm(x).sum()):
            # its moves are noise alone, of a few values only, some differences exact, and
            # it was measured nowhere; the ladder, unaware, took chance agreements of
            # quanta for derivatives and jumps (gradcheck failed 80% of right gradients).
            rounds = (narrow <= AGREE * finer) & (finer <= AGREE * narrow)
            rounds &= (narrow <= AGREE * wide) & (wide <= AGREE * narrow)
            rounds &= quantized(every - every[..., 4:5]).all(axis=-1)
        if rounds.any():  # ... and that f stays within that noise at the ladder's first step
            # (a float32 part, frozen at the stencils' spacings, moves there: its slope is
            # no noise, and the ladder's finer steps, below its quantum, would see it as 0)
            ends = np.concatenate([elements[open_], elements[open_]])
            steps = np.concatenate([START * scale[open_], -START * scale[open_]])
            with np.errstate(all="ignore"):
                far = along(ends, steps).reshape(m, 2, open_.size) - f0[:, None, None]
                rounds &= np.max(np.abs(far), axis=1) <= SMALL * narrow
            taken += ends.size
        refused = ((still | exact | crowded) & ~rounds) | _stepped(values[..., 0, :])
        accepted = ~refused & np.isfinite(found)
        # (an output measured in an earlier round keeps its σ: an element is measured again
        # for its other outputs, and a later spacing's coincidence must not erase it; the
        # residuals X @ w - y lost a third of theirs so, and right Jacobians failed)
        first = accepted & np.isnan(sigma[:, open_])
        here = np.max(np.where(np.isfinite(values), np.abs(values), 0.0), axis=(-2, -1))
        size[:, open_] = np.where(first, here, size[:, open_])
        sigma[:, open_] = np.where(first, found, sigma[:, open_])
        by_rounds[:, open_] = np.where(first, still | exact | crowded, by_rounds[:, open_])
        # An output that has not moved at all, at any spacing up to one beyond the ladder's
        # first step, while others moved: its noise along the element does not matter, as
        # the ladder's steps will not move it either (an LSTM's gate weight moves a quarter
        # of its outputs, and the others kept it measured round after round: gradgradcheck
        # of an LSTM cell took 38 s, nine tenths of it here). Flat over narrower spacings
        # only, it may be quantized coarser than its moves (sum(3e6 + g(x)) where g' is
        # 1e-4): the ladder needs its noise.
        flat = (every == center[..., :1]).all(axis=(-2, -1))
        always_flat[:, open_] &= flat
        beyond = WIDER * OFFSETS[-1] * spacing[open_] >= ladder * scale[open_]
        independent = always_flat[:, open_] & beyond & ~flat.all(axis=0)
        retired[:, open_] = independent
        pending = np.isnan(sigma[:, open_]) & ~independent
        pending &= np.isfinite(values).all(axis=(-2, -1))
        # Where some output is still to be measured: too few distinct values (f barely moves
        # at this spacing) or noise crowding f's moves, a wider spacing; values that moved
        # alike or spacings that disagree (a coincidence, or a kink), another one.
        still &= pending
        factor = np.where(still.any(axis=0), GROWTH, np.where(crowded.any(axis=0), CROWDED, REDRAW))
        factor = factor if grow else REDRAW
        spacing[open_] *= factor
        open_ = open_[pending.any(axis=0)]
        if not open_.size:
            break
    return sigma, size, taken, retired, by_rounds


_POWERS = np.arange(-4.0, 5.0)[:, None] ** np.arange(3)  # the stencil's points, in spacings


def _frozen(along, elements, spacing, narrower, every, narrow, finer) -> tuple[np.ndarray, int]:
    """(m, e): f's moves over the fine spacing (the third stencil's) at each of the nine
    points of the first are those of one smooth f, but for a few a quantum larger (a
    jump inside them): its noise is a quantized part's, which the fine spacing is too
    fine to move. (f = (1e6 + 1e-3·x0) - 1e6 + x1 quantized to 1.2e-10: along a random
    direction its σ faded at the fine spacing, where only x1 moved; no element was
    measured, the ladder descended below the quantum, a claim of 0 for x0 passed and
    the right one failed, QA round 18 F1.) A feature finer than the first spacing moves
    f unlike a line there: 1 + cos(1e7·x) at points 6.9e-7 apart, over 1.7e-10."""
    m, e = every.shape[0], elements.size
    fine = spacing / narrower
    with np.errstate(all="ignore"):
        moved = along(np.repeat(elements, OFFSETS.size),
                      (spacing[:, None] * OFFSETS + fine[:, None]).reshape(-1))  # fmt: skip
        moved = moved.reshape(m, e, OFFSETS.size)
        after = np.concatenate([moved[..., :4], every[..., 2, 5:6], moved[..., 4:]], axis=-1)
        values = every[..., 0, :]
        moves = after - values  # (m, e, 9)
        # (a jump inside a move: a quantum, 3.5σ; the smooth part's moves differ by far less)
        kept = np.abs(moves - np.median(moves, axis=-1, keepdims=True)) <= narrow[..., None]
        # (a parabola: the smooth part's moves curve at the coarse look's spacing)
        w = kept[..., None] * _POWERS  # (m, e, 9, 3)
        normal = np.einsum("...ik,il->...kl", w, _POWERS)
        normal[kept.sum(axis=-1) < 6] = np.eye(3)  # (too few: not frozen, below)
        right = np.einsum("...ik,...i->...k", w, np.where(kept, moves, 0.0))
        fit = np.linalg.solve(normal, right[..., None])[..., 0] @ _POWERS.T
        off = np.max(np.where(kept, np.abs(moves - fit), 0.0), axis=-1)
        count = kept.sum(axis=-1)
        size = np.max(np.abs(np.concatenate([values, after], axis=-1)), axis=-1)
        rounding = np.maximum(np.nan_to_num(finer, nan=0.0), EPS * size)
        # (or a quantized factor: 0.5·x·(1 + tanh(u)) at x = -6.5, where 1 + tanh(u) is
        # 1.4e-13 in quanta of 1.1e-16, frozen over the fine spacing: the moves there are
        # the other factor's, one per quantum, within 1e-3 of each other. A fine feature
        # the first spacing saw as noise σ moves f unlike that: a sin(k·x) by a·k·fine,
        # far more than σ/16 over the spacing, times the fine spacing.)
        stray = np.nan_to_num(narrow, nan=0.0) / (16 * narrower)
        frozen = (count >= 6) & (off <= np.maximum(8 * rounding, stray))
    return frozen & np.isfinite(after).all(axis=-1), e * OFFSETS.size


_BESIDE = np.array([0, 1, 2, 5, 6, 7])  # the moves away from the point
_AT = np.array([3, 4])  # the two moves next to it


def quantized(moves: np.ndarray) -> np.ndarray:
    """(..., k) moves of f from its value at the point -> (...): all on a grid of at most
    GRID steps across their range (rounding's quanta, or a float32 part's), not moves of
    full precision (a smooth or fine feature's). False where none moved."""
    with np.errstate(all="ignore"):
        mantissa, exponent = np.frexp(moves)
        whole = (mantissa * 2.0**53).astype(np.int64)
        lowest = (whole & -whole).astype(np.float64) * np.exp2(exponent - 53.0)
        quantum = np.min(np.where(moves != 0, lowest, np.inf), axis=-1)
        span = np.ptp(moves, axis=-1)
        return np.isfinite(moves).all(axis=-1) & (span > 0) & (span <= GRID * quantum)


def _stepped(values: np.ndarray) -> np.ndarray:
    """(..., 9) values with a step at the point: f's moves along the stencil (8) follow a
    straight line but for one next to the point, off it by 8 times the others' scatter
    (x + 1e-4·(x > 0) at 0, whose jump a stencil wide enough took for noise of σ 2e-5,
    and the jump then hid under it as "not accurate enough"). Noise scatters every move
    alike; a smooth f's moves lie on the line."""
    moves = np.diff(values, axis=-1)
    beside = moves[..., _BESIDE]
    with np.errstate(all="ignore"):
        t = _BESIDE - _BESIDE.mean()
        slope = (beside * t).sum(axis=-1) / (t**2).sum()
        mean = beside.mean(axis=-1)
        scatter = np.abs(beside - mean[..., None] - slope[..., None] * t).max(axis=-1)
        expected = mean[..., None] + slope[..., None] * (_AT - _BESIDE.mean())
        excess = np.abs(moves[..., _AT] - expected).max(axis=-1)
        rounding = 16 * EPS * np.abs(values).max(axis=-1)
        return excess > 8 * scatter + rounding


def _ecnoise(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """σ from the difference table of nine equally spaced values (..., 9): the lowest order
    whose estimate agrees within 4x with the next two and whose differences do not share
    one strict sign (noise); nan where no order qualifies (the smooth part dominates).
    Also where too few values differ to tell (``still``), and where a difference of order
    2 or more is exactly 0 (``exact``: a quantized f whose moves happened to round alike,
    or a low-degree polynomial evaluated exactly; either way, no measurement)."""
    ordered = np.sort(values, axis=-1)
    distinct = 1 + np.sum(np.diff(ordered, axis=-1) != 0, axis=-1)
    still = distinct < 5
    finite = np.isfinite(values).all(axis=-1)
    diffs = values
    sig, changes, exact = [], [], np.zeros(values.shape[:-1], dtype=bool)
    for k, gamma in zip(ORDERS, _GAMMA, strict=True):
        diffs = np.diff(diffs, axis=-1)
        with np.errstate(all="ignore"):
            sig.append(np.sqrt(gamma * np.mean(diffs**2, axis=-1)))
        # (a smooth f's high differences share one strict sign; noise's do not)
        changes.append(~((diffs > 0).all(axis=-1) | (diffs < 0).all(axis=-1)))
        if k >= 2:
            exact |= np.all(diffs == 0, axis=-1)
    sigma = np.full(values.shape[:-1], np.nan)
    for k in range(len(sig) - 3, -1, -1):  # the lowest qualifying order wins
        trio = np.stack(sig[k : k + 3])
        agree = trio.max(axis=0) <= 4 * trio.min(axis=0)
        sigma = np.where(agree & changes[k], sig[k], sigma)
    return np.where(finite, sigma, np.nan), still & finite, exact & finite & ~still
