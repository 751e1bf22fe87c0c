"""Kinks in several coordinates at once: the claim certified as a gradient of the pieces
meeting there (`hull`), or else tested along directions through them.

Each coordinate alone is not enough (max at the tie [1, 1, 0] claimed as [1, 1, 0] passes
each, and moves by 2 along e0 + e1 where f moves by 1). Along a direction d, a valid
gradient's slope lies between the one-sided directional derivatives where f is convex or
concave along d; elsewhere a valid gradient can fall outside (relu(b0) - relu(b1) at 0:
PyTorch's (0, 0) along (1, -1)), which the certificate avoids. Among the directions is the
one from the nearest point of the measured hull towards the claim, the likeliest to show a
wrong claim (relu(x0 + 2·x1) claimed (1, 1) is outside only along (2, -1), QA round 18).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import steps as S
from .hull import certify
from .ladder import ladder
from .verdict import (
    FAIL,
    KINK,
    KINK_CLOSE,
    RULE,
    SEVERAL_KINKS,
    STRICT_KINK,
    SUBGRADIENT,
    UNDECIDED,
    one_sided_rounding,
)

# Up to this many elements, the directions and the certificate cover all of them: a
# coordinate can be smooth along its axis where f is not (-2·relu(x0 - x1 + 2·x2) +
# 2·relu(-x0 - x1 - x2) is -2·x0 along x0), and a claim of its axis derivative be wrong.
EVERY = 16


def subgradient_tests(var, f0, claim, numeric, tau, verdicts, reasons, rng):
    """Where an output row has kinks in several coordinates, certify its claim from the
    gradients around the point, or test it along directions through the kinks: a failure
    there fails the row's kink elements (not a subgradient); where none fails and none of
    the directions that separate the claim from the gradients found was resolved, they are
    undecided."""
    # A kink whose one-sided quotients rounding blurred counts, and one whose claim is
    # outside its one-sided derivatives: a certificate decides them. (Where f has kinks of
    # both kinds, a valid gradient can be: 0.5·relu(x0 + 2·x1) - 2·relu(-2·x0 - 2·x1) has
    # the piece x0 + 2·x1 < 0 < x0 + x1, whose gradient's x0 is 0, outside [0.5, 4]).
    close = (verdicts == UNDECIDED) & (reasons == KINK_CLOSE)
    # So does a derivative along an axis where f is smooth along it but not at the point
    # (kinks that cancel along the axis), in a row that has a kink.
    outside = (verdicts == FAIL) & (reasons == SUBGRADIENT)
    kinked = (verdicts == KINK) | ((verdicts == FAIL) & (reasons == STRICT_KINK)) | close
    kinked |= outside
    # (not an axis derivative decided at steps finer than |x_j|, below the samples' radius:
    # max(x0, x1) at [1e-15, 0] is x0 there, and the hull of the tie's pieces around it
    # certified [0.5, 0.5], QA round 22)
    local = np.zeros(var.size, dtype=bool) if numeric.refined is None else numeric.refined
    outside |= (verdicts == FAIL) & (reasons == RULE) & kinked.any(axis=1, keepdims=True)
    outside &= ~local[None, :]
    kinked |= outside
    # Up to EVERY elements, every coordinate takes part, and one kink is enough: kinks that
    # cancel along an axis leave f smooth there, where it is not (QA 18). Beyond, a row
    # needs kinks in two coordinates, and only those take part.
    every = 1 < var.size <= EVERY
    rows = np.nonzero(kinked.sum(axis=1) >= (1 if every else 2))[0]
    if not rows.size:
        return [], 0, []
    columns = np.arange(var.size) if every else np.nonzero(kinked[rows].any(axis=0))[0]
    hull = certify(var, f0, claim, tau, columns, rows, numeric, rng)
    certified = rows[hull.certified[rows]]
    _settle(certified, close | outside, verdicts, reasons)
    rows = rows[~hull.certified[rows]]
    if not rows.size:
        return [], hull.evaluations, certified.tolist()
    fixed = kink_directions(columns, var.size, rng)
    owner = [-1] * len(fixed)  # (which row's separating direction each is; -1: every row's)
    blocks = [fixed]
    for i, block in hull.separating.items():
        blocks.append(block)
        owner += [i] * len(block)
    directions = np.vstack(blocks)
    x = var.base.reshape(-1)
    start = S.START * max(1.0, float(np.max(np.abs(x[columns]))))
    projected = claim @ directions.T
    accuracy = np.abs(tau) @ np.abs(directions.T)
    along = ladder(
        var.along_directions(directions),
        f0,
        np.arange(len(directions)),
        np.full(len(directions), start),
        accuracy,
        projected,
        noise=_moved_rounding(claim, numeric, x, directions) / 3.0,  # (the ladder's 3σ)
    )
    owner = np.array(owner)
    evaluations = hull.evaluations + along.evaluations
    tests = []
    x_scale = float(np.max(np.abs(x[columns]), initial=0.0))
    for test in directional_verdicts(claim, directions, along, tau, x_scale):
        if test.output_index in rows and owner[test.index] in (-1, test.output_index):
            tests.append(test)
    for row, (u, slope, left, right) in hull.outside.items():  # (the samples' own tests)
        if row in rows:
            tests.append(DirectionTest(row, -1, u, slope, left, right, False))
    # Before failing a claim, many more samples: a piece the first ones missed can make it
    # valid (a direction proves nothing where f is neither convex nor concave along it).
    failing = np.array(sorted({t.output_index for t in tests if not t.ok}), dtype=np.intp)
    if failing.size:
        again = certify(var, f0, claim, tau, columns, failing, numeric, rng, again=True)
        evaluations += again.evaluations
        late = failing[again.certified[failing]]
        if late.size:
            _settle(late, close | outside, verdicts, reasons)
            certified = np.concatenate([certified, late])
            rows = rows[~np.isin(rows, late)]
            tests = [t for t in tests if t.output_index not in late]
    for row in rows:
        bad = kinked[row]
        if any(not t.ok for t in tests if t.output_index == row):
            verdicts[row, bad] = FAIL
            reasons[row, bad] = SUBGRADIENT
        elif not hull.inside[row] and not any(
            t.output_index == row and t.index >= 0 and owner[t.index] == row for t in tests
        ):
            verdicts[row, bad] = UNDECIDED
            reasons[row, bad] = SEVERAL_KINKS
    return tests, evaluations, sorted(certified.tolist())


def _settle(rows, doubted, verdicts, reasons) -> None:
    """Certified rows: their elements whose kink or axis derivative was in doubt are kinks
    with a valid subgradient (the others keep their verdicts)."""
    settled = doubted[rows]
    verdicts[rows] = np.where(settled, KINK, verdicts[rows])
    reasons[rows] = np.where(settled, 0, reasons[rows])


def _moved_rounding(claim, numeric, x, directions) -> np.ndarray:
    """(m, D): how far f can be off at x + h·d, which float64 rounds in every coordinate d
    moves (by up to half an ulp of x_j, times f's slope along it): the coordinates' steps
    are the ones float64 takes, a direction's are not. Beside it f's own rounding can be
    small (f ≈ 0.2 at x = (-1.5, -0.5), slopes near 5: eight times), and the one-sided
    quotients then never looked converged: the ladder went down to steps of 3e-13, where
    their error hid a claim 0.4% outside the hull (QA round 19's fuzzer)."""
    slopes = np.abs(claim)
    for side in (numeric.left, numeric.right, numeric.estimate):
        slopes = np.maximum(slopes, np.nan_to_num(np.abs(side), nan=0.0, posinf=0.0))
    moved = (directions != 0).astype(np.float64)  # (D, n)
    return 0.5 * S.EPS * (slopes * np.abs(x)[None, :]) @ moved.T


@dataclass
class DirectionTest:
    """The claim projected on one direction through the kink coordinates, against the
    one-sided directional derivatives there (one output row)."""

    output_index: int
    index: int  # the direction's, in the tested block (-1: a pair of the samples, see hull)
    direction: np.ndarray  # (n,) unit vector
    projected: float
    left: float
    right: float
    ok: bool


def kink_directions(columns: np.ndarray, n: int, rng: np.random.Generator, count: int = 3):
    """Unit directions through the kink coordinates: all of them together, then up to
    ``count`` other random sign patterns, no two on one line (d and -d are one test: both
    one-sided derivatives are measured; repeats left three columns on one line, QA 18)."""
    c = columns.size
    patterns = [np.ones(c)]
    for _ in range(8 * count):
        if len(patterns) > count or len(patterns) >= 2 ** (c - 1):
            break
        p = rng.choice([-1.0, 1.0], size=c)
        if not any(np.array_equal(p, q) or np.array_equal(p, -q) for q in patterns):
            patterns.append(p)
    directions = np.zeros((len(patterns), n))
    directions[:, columns] = patterns
    return directions / np.linalg.norm(directions, axis=1, keepdims=True)


def directional_verdicts(
    claim: np.ndarray,
    directions: np.ndarray,
    numeric: S.Numeric,
    tau: np.ndarray,
    x_scale: float = 0.0,
) -> list[DirectionTest]:
    """Judge the claim along each direction: between the one-sided directional derivatives
    at a kink, equal to the directional derivative where it is smooth. A step along a
    direction is what float64 makes of x + h·d, off by ulps of ``x_scale`` (the largest
    |x_j|) in each coordinate: a slope's share of that is in the margin (at x = 1e3 a claim
    equal to a one-sided derivative failed by 1e-10, QA round 19)."""
    projected = claim @ directions.T  # (m, D)
    tol = np.abs(tau) @ np.abs(directions.T)
    rounding = one_sided_rounding(numeric)
    if x_scale:
        step = np.where(numeric.step > 0, numeric.step, np.inf)[None, :]
        sides = np.maximum(np.abs(numeric.left), np.abs(numeric.right))
        with np.errstate(invalid="ignore"):
            rounding = rounding + 2.0 * S.EPS * x_scale * np.nan_to_num(sides) / step
    tests = []
    for i in range(claim.shape[0]):
        for d in range(directions.shape[0]):
            kind = numeric.kind[i, d]
            p = float(projected[i, d])
            if kind == S.KINK:
                left, right = float(numeric.left[i, d]), float(numeric.right[i, d])
                margin = tol[i, d] + max(numeric.error[i, d], rounding[i, d])  # (their own)
                ok = min(left, right) - margin <= p <= max(left, right) + margin
            elif kind == S.SMOOTH:
                left = right = float(numeric.estimate[i, d])
                ok = abs(p - left) <= tol[i, d] + numeric.error[i, d]
            else:
                continue  # nothing to learn along an undecided direction
            tests.append(DirectionTest(i, d, directions[d], p, left, right, bool(ok)))
    return tests
