"""f's own noise, measured, where the rounding model (half an ulp of each value) is wrong.

The ladder judges rounding by eps·|f|. A function computed through large terms that cancel
(sum(1e3 + g(x)) - 1e6) is quantized to the ulps of those terms, ~1e-10, while |f| is 0:
its central differences at power-of-two steps come out as exact multiples of the quantum
over h, stable from level to level, and Ridders' error estimate calls them converged (a
claim of 0 passed where the derivative is 2.9). Moré and Wild's ECnoise (2011) measures the
noise instead: f at nine equally spaced points, whose high-order differences see noise and
not a smooth f. It is measured once along a random direction (cheap: a few batched calls);
only where that finds noise well above the model is each element measured, and the
ladder's rounding widened to what was found.
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
ORDERS = range(1, 7)
_GAMMA = np.array([factorial(k) ** 2 / factorial(2 * k) for k in ORDERS])


def element_noise(
    var,
    f0: np.ndarray,
    rest: np.ndarray,
    scale: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray | None, int]:
    """The noise of each output along each element (m, n), measured for the elements
    ``rest`` where it exceeds the rounding model (elsewhere 0); None where none was found
    along a random direction (then no element is measured). Also the evaluations taken."""
    n = var.size
    if not np.isfinite(f0).all():
        return None, 0
    direction = rng.standard_normal(n) * scale
    direction /= np.max(np.abs(direction), initial=1e-300)
    along = var.along_directions(direction[None])
    sigma, size, taken = _measure(along, f0, np.zeros(1, dtype=np.intp), np.ones(1))
    # Noise a few ulps above the model's half ulp per value (sum(sin(x)·x²) over 1,000
    # inputs: pairwise summation rounds to 7 ulps of f) is f's own, along every element:
    # it is every element's floor (below ABOVE_MODEL). Unknown to the ladder, its rise as
    # 1/h at fine steps looked like the end of a smooth regime, the good estimates before
    # it were dropped, and a right gradient was undecided.
    with np.errstate(invalid="ignore"):
        floor = np.where(np.isfinite(sigma) & (sigma > FLOOR_MODEL * EPS * size), sigma, 0.0)
    if not _exceeds(sigma, size).any():
        if not floor.any():
            return None, taken
        return np.repeat(floor, n, axis=1), taken
    # (more than that: each element measured on its own, which decides; a floor from the
    # random direction would override them: sin at 1e11 varies finer than its spacing.
    # What it finds counts from FLOOR_MODEL up, as the random direction's floor does: the
    # outputs of X @ w - y round to a few ulps of their terms, 2 to 16 times eps·|f|)
    sigma, size, more = _measure(var.along_coordinates(), f0, rest, scale[rest], START)
    noise = np.zeros((f0.size, n))
    with np.errstate(invalid="ignore"):
        noise[:, rest] = np.where(_exceeds(sigma, size, FLOOR_MODEL), sigma, 0.0)
    return noise, taken + more


def _exceeds(sigma: np.ndarray, size: np.ndarray, times: float = ABOVE_MODEL) -> np.ndarray:
    return np.isfinite(sigma) & (sigma > times * EPS * size)


def _measure(along, f0, elements, scale, ladder=np.inf) -> tuple[np.ndarray, np.ndarray, int]:
    """ECnoise's σ per output and element (nan: not measured), the largest |f| seen, and
    the evaluations taken. σ must not grow at a spacing WIDER times wider: noise does not
    depend on the spacing, while a kink inside the stencil grows with it, and it can pass
    ECnoise's tests at one spacing. ``ladder``: the ladder's first step (times the scale);
    an output that does not move along an element across it is not measured further."""
    m, e = f0.size, elements.size
    taken = 0
    sigma = np.full((m, e), np.nan)
    size = np.zeros((m, e))
    spacing = FIRST * scale
    open_ = np.arange(e)
    always_flat = np.ones((m, e), dtype=bool)
    offsets = np.concatenate([OFFSETS, WIDER * OFFSETS, OFFSETS / NARROWER])
    for _ in range(ROUNDS):
        cols = np.repeat(elements[open_], offsets.size)
        with np.errstate(all="ignore"):
            moved = along(cols, (spacing[open_, None] * offsets).reshape(-1))
        moved = moved.reshape(m, open_.size, 3, OFFSETS.size)
        taken += cols.size
        center = np.broadcast_to(f0[:, None, None, None], (m, open_.size, 3, 1))
        every = np.concatenate([moved[..., :4], center, moved[..., 4:]], axis=-1)
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
        found = np.where(grows | faded, np.nan, narrow)
        # Noise is small beside f's moves across the stencil; a jump or a pole inside it is
        # not (its σ is a quarter of its size or more): neither is noise to allow for.
        with np.errstate(invalid="ignore"):
            moves = np.min(np.ptp(values, axis=-1), axis=-1)
            crowded = found * SMALL > moves
        accepted = ~(still | exact | crowded | _stepped(values[..., 0, :])) & np.isfinite(found)
        # (an output measured in an earlier round keeps its σ: an element is measured again
        # for its other outputs, and a later spacing's coincidence must not erase it; the
        # residuals X @ w - y lost a third of theirs so, and right Jacobians failed)
        first = accepted & np.isnan(sigma[:, open_])
        here = np.max(np.where(np.isfinite(values), np.abs(values), 0.0), axis=(-2, -1))
        size[:, open_] = np.where(first, here, size[:, open_])
        sigma[:, open_] = np.where(first, found, sigma[:, open_])
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
        pending = np.isnan(sigma[:, open_]) & ~independent
        pending &= np.isfinite(values).all(axis=(-2, -1))
        # Where some output is still to be measured: too few distinct values (f barely moves
        # at this spacing) or noise crowding f's moves, a wider spacing; values that moved
        # alike or spacings that disagree (a coincidence, or a kink), another one.
        still &= pending
        factor = np.where(still.any(axis=0), GROWTH, np.where(crowded.any(axis=0), CROWDED, REDRAW))
        spacing[open_] *= factor
        open_ = open_[pending.any(axis=0)]
        if not open_.size:
            break
    return sigma, size, taken


_BESIDE = np.array([0, 1, 2, 5, 6, 7])  # the moves away from the point
_AT = np.array([3, 4])  # the two moves next to it


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
