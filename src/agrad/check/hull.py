"""Several kinks at one point: a claim certified as a gradient of the pieces that meet there.

Where f has kinks in several coordinates at once, the valid gradients (Clarke's) are the
convex hull of the gradients of the pieces meeting at the point. A gradient measured a short
way off, inside a piece, is one of them; a claim within the hull of those measured (weights
found explicitly, within the tolerance) is certified. Nothing is certified on a guess: a
sample whose radii or steps disagree (a kink between them, curvature) is dropped, and a
claim not certified is judged along directions (`directions`): the ones each pair of
opposite samples gives, and the ones separating it from the hull found, along which more
samples are taken round by round. (QA round 18: separability judged along a few directions
passed max(x0, x1) + min(x4, x5) with a claim 0, and relu(b0 + b1) - relu(b2) with
(1, 0.9, 0).)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .steps import EPS

RADIUS = 2.0**-14  # the sample points' distance from x, times max(1, |x_j|), ...
SHRINK = 4.0  # ... then this much nearer, twice (Richardson's extrapolation); the steps' ratio
STEP = 2.0**-5  # the central difference's step, times the point's largest offset
# A sample counts where its extrapolations agree to this part of the row's scale (beyond
# the claim's tolerance), and a claim that near the hull of the samples is certified.
ACCURACY = 1e-6
# Random sign patterns, each with its opposite (|x0| + |x1|'s 0 is a midpoint): this many
# divided by the number of columns, at least MIN_PAIRS (a thin piece between two kinks is
# found by chance; in few dimensions samples are cheap)
PAIRS, MIN_PAIRS = 128, 6
# ... and as many as this many evaluations buy (see `_sample_cost`) before a claim fails
# along a direction (`directions`): a direction is a proof only where f is convex or
# concave along it, and a valid claim the first samples could not place (a piece they
# missed) failed in 2.8% of QA round 19's random maxima
AGAIN = 20_000
GUIDED = 8  # at most this many rows get a pattern from their own claim's sides
STEER = 0.05  # samples this rough (of the row's scale) steer the search
ROUGH = 1e-3  # samples this rough (of the row's scale) may place a claim in their hull
ROUNDS = 12  # rounds of samples towards a claim not yet within the hull
COLUMNS = 32  # above this many kink columns, no samples: the directions alone decide
BUDGET = 1200  # evaluations per column after which no more rounds begin (100 samples)
TESTED = 4  # the directions of the last rounds tested at the point
# A sample's chord slopes from x, over 4^-1 ... 4^-RAY of its innermost offset, must be its
# slope along the ray to CHORD of its size (beyond f's rounding over them)
RAY, CHORD = 10, 1e-3
TRIES = 3  # Lawson and Hanson's iterations, times the number of samples


@dataclass
class Hull:
    """Per output row (m,): whether its claim is certified; where it is not, the unit
    directions (D, n) from the nearest points of the measured hull towards the claim, one
    per round of samples (distinct ones, the last first: the likeliest to show a claim
    outside), by row."""

    certified: np.ndarray
    separating: dict[int, np.ndarray]
    evaluations: int
    # (m,): not certified, but within the hull of samples measured to ROUGH of the row's
    # scale (a flat hull, std's at a constant vector, has no inside to be deep in): the
    # directions decide without a separating one of their own
    inside: np.ndarray | None = None
    # by row: a direction u (n,) with the claim's slope along it outside the one-sided
    # ones the samples at x ± r·u measured, (u, slope, left, right): not a subgradient
    outside: dict | None = None


def certify(var, f0, claim, tau, columns, rows, numeric, rng, again: bool = False) -> Hull:
    """Certify the claims of ``rows`` over the kink ``columns`` (see the module's text);
    ``again``: with AGAIN's samples, before a claim fails."""
    m, n = claim.shape
    x = var.base.reshape(-1)
    # (one radius for every column: the pieces are cones at x, and a radius per column's
    # size skews them; at |x| 1e2 beside 1, half of them went unsampled, QA round 19)
    radius = RADIUS * max(1.0, float(np.max(np.abs(x[columns]))))
    certified, inside = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)
    separating: dict[int, np.ndarray] = {}
    outside: dict[int, tuple] = {}
    if columns.size > COLUMNS:  # (each sample costs 12 evaluations per column)
        for i in rows:
            separating[int(i)] = _distinct(_own(claim[i], numeric, i, columns), columns, n, rng)
        return Hull(certified, separating, 0, inside, outside)
    c = columns.size
    pairs = max(MIN_PAIRS, AGAIN // (2 * _sample_cost(c)) if again else PAIRS // c)
    around = _patterns(claim, numeric, columns, rows, rng, pairs)
    near, error, taken = _sample(var, f0, columns, around * radius)
    # The rounds stop beyond this (see `_sample_cost`). Counted beyond the
    # first samples: in 2 columns those cost 4,400 evaluations, and a budget that counted
    # them left no round, so a claim 0.4% outside the hull was never tested along the
    # direction separating it (QA round 19's fuzzer).
    budget = taken + BUDGET * columns.size
    first = len(around) - 2 * pairs  # (the random points, then their opposites)
    for k, i in enumerate(rows):
        rounds = ROUNDS if k < GUIDED else 0  # (the rows sampled towards their claims)
        g = claim[i, columns]
        sides = np.abs(np.concatenate([numeric.left[i, columns], numeric.right[i, columns]]))
        scale = max(float(np.max(np.abs(g))), float(np.nanmax(sides, initial=0.0)))
        width = tau[i, columns] + ACCURACY * scale
        # Samples to within STEER of the scale steer the search (one across a kink, off by
        # O(1), would put a wrong claim inside); only those measured to within the width
        # certify (||x|| at 0 curves as 1/r: its samples steer well and certify nothing).
        finite = np.all(np.isfinite(near[:, i]) & (error[:, i] <= STEER * scale), axis=1)
        rough, rough_error = near[finite, i], error[finite, i]
        points = _kept(near[:, i], error[:, i], width)
        ends = slice(first, first + pairs), slice(first + pairs, None)
        found_outside = _outside(g, around[ends[0]], near[ends[0], i], near[ends[1], i],
                                 error[ends[0], i] + error[ends[1], i], width)  # fmt: skip
        tried = []
        # Each round adds the gradients met along the direction from the hull's nearest
        # point towards the claim (and opposite): the pieces that could still contain it.
        for _ in range(rounds + 1):
            if len(points):
                nearest = _nearest(points, g) @ points
                certified[i] = bool(np.all(np.abs(nearest - g) <= 2.0 * width))
            if certified[i] or not len(rough):
                break
            away = g - _nearest(rough, g) @ rough
            if not np.any(np.abs(away) > 2.0 * width):  # within the rough hull
                usable = np.all(rough_error <= ROUGH * scale, axis=1)
                if usable.any():
                    certified[i], inside[i] = _within(g, rough[usable], rough_error[usable],
                                                      width)  # fmt: skip
                break
            # (tested at the point whether or not more samples follow: the hull's side
            # nearest the claim is often in a kink's surface, where no random direction is)
            tried.append(away / np.linalg.norm(away))
            if _ == rounds or taken > budget:
                break
            toward = _off_kinks(away, rng)
            found, err, more = _sample(var, f0, columns, np.stack([toward, -toward]) * radius)
            taken += more
            found_outside = found_outside or _outside(
                g, toward[None], found[:1, i], found[1:, i], err[:1, i] + err[1:, i], width
            )
            finite = np.all(np.isfinite(found[:, i]) & (err[:, i] <= STEER * scale), axis=1)
            rough = np.concatenate([rough, found[finite, i]])
            rough_error = np.concatenate([rough_error, err[finite, i]])
            points = np.concatenate([points, _kept(found[:, i], err[:, i], width)])
        if found_outside:
            d = np.zeros(n)
            d[columns] = found_outside[0]
            outside[int(i)] = (d, *found_outside[1:])
        if not certified[i]:
            own = _own(claim[i], numeric, i, columns)
            separating[int(i)] = _distinct(tried[::-1][:TESTED] + own, columns, n, rng)
    return Hull(certified, separating, taken, inside, outside)


def _within(g, points, error, width) -> tuple[bool, bool]:
    """For samples known only to within ``error``: whether ``g`` is certified (`_deep`),
    and whether it is at least within their hull (then the directions decide alone)."""
    nearest = _nearest(points, g) @ points
    return _deep(g, points, error, width), bool(np.all(np.abs(nearest - g) <= 2.0 * width))


def _off_kinks(away: np.ndarray, rng) -> np.ndarray:
    """A point's offsets along ``away``, each coordinate a little off its kink and off ties
    (a 0 would sit on the kink, and the differences across it would drop the sample)."""
    toward = away / np.max(np.abs(away)) * rng.uniform(0.9, 1.0, away.shape)
    low = np.abs(toward) < 0.1
    count = int(low.sum())
    toward[low] = rng.choice([-1.0, 1.0], count) * rng.uniform(0.1, 0.2, count)
    return toward


def _deep(g, points, error, width) -> bool:
    """Whether ``g`` lies inside the hull of ``points`` (K, c) known only to within their
    ``error`` (K, c), by twice the largest error in every coordinate: then it is inside
    the hull of the true gradients too (each moves by less than the margin). ||x|| at 0:
    its samples curve as 1/r and are good to 1e-4 or so, but its 0 is deep inside them."""
    margin = 2.0 * np.max(error, axis=0)
    for j in range(g.size):
        for sign in (-1.0, 1.0):
            z = g.copy()
            z[j] += sign * margin[j]
            if not np.all(np.abs(_nearest(points, z) @ points - z) <= width):
                return False
    return True


def _outside(g, directions, plus, minus, error, width):
    """The first of ``directions`` (P, c) along which the claim's slope lies outside the
    one-sided derivatives at x that the gradients sampled at x ± r·u give, u·v+ and u·v-
    (a sample inside a piece that reaches x along u), as (unit u, slope, left, right); None.
    Each pair is a direction test the samples make at no cost."""
    for u, up, down, err in zip(directions, plus, minus, error, strict=True):
        if not (np.all(np.isfinite(up) & np.isfinite(down)) and np.all(err <= 2.0 * width)):
            continue
        norm = np.linalg.norm(u)
        unit = u / norm
        right, left, slope = float(up @ unit), float(down @ unit), float(g @ unit)
        margin = float((4.0 * width + err) @ np.abs(unit))
        if not min(left, right) - margin <= slope <= max(left, right) + margin:
            return unit, slope, left, right
    return None


def _own(claim_row, numeric, i, columns) -> list[np.ndarray]:
    """Two directions that need no samples: the claim's own (a valid g has g·g <= f's
    slope along g: ||x||_inf's 2/n per element fails it), and the claim's offset from the
    middle of the coordinates' one-sided derivatives."""
    g = claim_row[columns]
    middle = np.nan_to_num((numeric.left[i, columns] + numeric.right[i, columns]) / 2)
    return [v / np.linalg.norm(v) for v in (g, g - middle) if np.any(v)]


def _distinct(tried: list, columns: np.ndarray, n: int, rng) -> np.ndarray:
    """The directions tried, without near repeats, each as it is and turned a little at
    random (one exactly along a kink's surface, (1, 1) through relu(x0 - x1), is not
    resolved there: rounding puts the points on either side; turned too far, one misses a
    thin hull's side)."""
    kept: list[np.ndarray] = []
    for d in tried:
        if all(abs(float(d @ e)) < 0.999 for e in kept):
            kept.append(d)
    out = np.zeros((2 * len(kept), n))
    for k, d in enumerate(kept):
        turned = d + 0.01 * rng.standard_normal(d.shape) * np.max(np.abs(d))
        out[2 * k, columns] = d
        out[2 * k + 1, columns] = turned / np.linalg.norm(turned)
    return out


def _sample(var, f0, columns, offsets) -> tuple[np.ndarray, np.ndarray, int]:
    """Gradients over the columns at x + each row of ``offsets`` (K, c), as (K, m, c), and
    their error (K, m, c). Each is taken at three radii, G(r) = G + a·r + O(r²) inside a
    piece (extrapolated twice, their difference the error), and at each with two steps,
    extrapolated too: where a kink through x lies within a step, the steps disagree (the
    radii cannot show it: scaled, the same step straddles the same kink in the same
    proportion, QA 18). A sample whose piece does not reach x (`_reaches`) is dropped."""
    taken, grads, error = 0, [], 0.0
    for k in range(3):
        moved = offsets / SHRINK**k
        coarse, _, more = _gradients(var, columns, moved, STEP)
        fine, rounding, again = _gradients(var, columns, moved, STEP / SHRINK)
        gap = (fine - coarse) / (SHRINK**2 - 1.0)  # (central differences: error ∝ h²)
        grads.append(fine + gap)
        error = error + 2.0 * np.abs(gap) + 2.0 * rounding
        taken += more + again
    far = grads[1] + (grads[1] - grads[0]) / (SHRINK - 1.0)
    near = grads[2] + (grads[2] - grads[1]) / (SHRINK - 1.0)
    error = error + np.abs(far - near)
    reaches, more = _reaches(var, f0, columns, offsets / SHRINK**2, near)
    taken += more
    return near, np.where(reaches[:, :, None], error, np.inf), taken


def _reaches(var, f0, columns, offsets, near) -> tuple[np.ndarray, int]:
    """(K, m): whether each sample's piece reaches x along its ray: f's chord slopes from x
    over fractions of the innermost offset, down to 4^-RAY of it, are the sample's slope
    along the ray. A kink off x, closer than the radii, puts every radius beyond it (they
    agree), and its far piece's gradient is no gradient at x: relu(x0) + relu(x0 - 1e-7)
    at 0 certified a claim of 2 (QA round 19); the chords below 1e-7 show the kink."""
    x = var.base.reshape(-1)
    k = len(offsets)
    fractions = 4.0 ** -np.arange(1, RAY + 1)  # (J,)
    points = np.repeat(x[None, None], k, axis=0).repeat(RAY, axis=1)  # (K, J, n)
    points[:, :, columns] += fractions[None, :, None] * offsets[:, None, :]
    values = np.asarray(var.batch(points.reshape(-1, *var.base.shape)), dtype=np.float64)
    values = values.reshape(k, RAY, -1)  # (K, J, m)
    slope = np.einsum("kmc,kc->km", near, offsets)  # along the ray, per unit of it
    size = np.einsum("kmc,kc->km", np.abs(near), np.abs(offsets))
    with np.errstate(all="ignore"):
        chords = (values - f0[None, None, :]) / fractions[None, :, None]
        rounding = 4.0 * EPS * np.maximum(np.abs(values), np.abs(f0)) / fractions[None, :, None]
        ok = np.abs(chords - slope[:, None, :]) <= CHORD * size[:, None, :] + rounding
    return np.all(ok, axis=1), k * RAY


def _kept(points: np.ndarray, error: np.ndarray, width: np.ndarray) -> np.ndarray:
    """The samples (K, c) measured to within ``width`` in every column."""
    return points[np.all(np.isfinite(points) & (error <= width), axis=1)]


def _sample_cost(c: int) -> int:
    """Evaluations of f one sample takes over ``c`` columns (`_sample`): three radii, two
    steps each, a central difference per column; then the ray's chords."""
    return 3 * 2 * 2 * c + RAY


def _patterns(claim, numeric, columns, rows, rng, pairs) -> np.ndarray:
    """Points around x (K, c), in units of the radius: one per row (up to GUIDED) on the
    side of each kink its claim takes (its left or right one-sided derivative: relu'(0) = 0
    is the piece below, so PyTorch's gradient is a piece's), then random ones, then their
    exact opposites (``pairs`` of each). Random magnitudes: off the ties between columns,
    where max's pieces meet, and from near an axis to the diagonal, where thin pieces lie."""
    c = columns.size
    guided = []
    for i in rows[:GUIDED]:
        g, lo, hi = claim[i, columns], numeric.left[i, columns], numeric.right[i, columns]
        with np.errstate(invalid="ignore"):
            toward = np.nan_to_num(np.sign(np.abs(g - lo) - np.abs(g - hi)))  # +1: right
        toward[toward == 0] = rng.choice([-1.0, 1.0], size=int(np.sum(toward == 0)))
        guided.append(toward * rng.uniform(0.5, 1.0, c))
    random = rng.choice([-1.0, 1.0], size=(pairs, c)) * rng.uniform(0.05, 1.0, (pairs, c))
    return np.concatenate([np.array(guided).reshape(-1, c), random, -random])


def _gradients(var, columns, offsets, step) -> tuple[np.ndarray, np.ndarray, int]:
    """Central differences over the columns at x + each row of ``offsets`` (K, c), each
    ``step`` times its point's largest offset: gradients (K, m, c) and their rounding
    bound (K, m, c)."""
    x = var.base.reshape(-1)
    k, c = offsets.shape
    centers = np.repeat(x[None], k, axis=0)
    centers[:, columns] += offsets
    h = step * np.max(np.abs(offsets), axis=1, keepdims=True) * np.ones((1, c))  # (K, c)
    up = np.repeat(centers[:, None, :], c, axis=1)  # (K, c, n)
    down = up.copy()
    up[:, np.arange(c), columns] += h
    down[:, np.arange(c), columns] -= h
    span = up[:, np.arange(c), columns] - down[:, np.arange(c), columns]  # (as float64 took)
    points = np.concatenate([up.reshape(k * c, -1), down.reshape(k * c, -1)])
    values = np.asarray(var.batch(points.reshape(-1, *var.base.shape)), dtype=np.float64)
    values = values.reshape(2, k, c, -1)  # (up/down, K, c, m)
    with np.errstate(all="ignore"):
        grads = ((values[0] - values[1]) / span[:, :, None]).transpose(0, 2, 1)
        size = np.max(np.abs(values), axis=0)
        rounding = (4.0 * EPS * size / span[:, :, None]).transpose(0, 2, 1)
    return grads, rounding, len(points)


def _nearest(points: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Convex weights (K,) whose combination of ``points`` (K, c) is nearest ``target``
    (least squares; Lawson and Hanson's NNLS with the weights' sum as a heavy row)."""
    size = max(float(np.max(np.abs(points))), float(np.max(np.abs(target))), 1e-300)
    points, target = points / size, target / size
    a = np.vstack([points.T, np.full((1, len(points)), 1e3)])
    b = np.concatenate([target, [1e3]])
    w = _nnls(a, b)
    total = w.sum()
    if not total > 0:
        w = np.zeros(len(points))
        w[np.argmin(np.sum((points - target) ** 2, axis=1))] = 1.0
        return w
    return w / total


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min |a w - b| over w >= 0 (Lawson and Hanson 1974, the active-set method)."""
    n = a.shape[1]
    w = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    tol = 10 * EPS * np.linalg.norm(a, 1) * max(a.shape)
    for _ in range(TRIES * n):
        gradient = a.T @ (b - a @ w)
        if passive.all() or np.max(np.where(passive, -np.inf, gradient)) <= tol:
            break
        passive[np.argmax(np.where(passive, -np.inf, gradient))] = True
        for _ in range(n):  # (at most n drops; rounding can stall the exact method)
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if np.all(z[passive] > tol):
                w = z
                break
            falling = passive & (z <= tol)
            with np.errstate(all="ignore"):
                alpha = np.nan_to_num(np.min(w[falling] / (w[falling] - z[falling])))
            w = w + alpha * (z - w)
            passive &= w > tol
        else:
            break
    return w
