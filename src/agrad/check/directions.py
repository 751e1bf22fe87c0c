"""Kinks in several coordinates at once: the claim tested along directions through them.

Each coordinate alone is not enough (max at the tie [1, 1, 0] claimed as [1, 1, 0] passes
each, and moves by 2 along e0 + e1 where f moves by 1); directions are enough where f is convex
or concave along them. Where the kinks are in separate coordinates, the coordinates
decide (`separate_kinks`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import steps as S
from .ladder import ladder
from .verdict import FAIL, KINK, STRICT_KINK, SUBGRADIENT


def subgradient_tests(var, f0, claim, numeric, tau, verdicts, reasons, rng):
    """Where an output row has kinks in several coordinates, test the claim along
    directions through them together (each coordinate alone is not enough)."""
    kinked = (verdicts == KINK) | ((verdicts == FAIL) & (reasons == STRICT_KINK))
    rows = np.nonzero(kinked.sum(axis=1) >= 2)[0]
    if not rows.size:
        return [], 0
    columns = np.nonzero(kinked[rows].any(axis=0))[0]
    directions = kink_directions(columns, var.size, rng)
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
    )
    tests = directional_verdicts(claim, directions, along, tau)
    separate = separate_kinks(numeric, columns, directions, along, tau)
    for test in tests:
        if not test.ok and separate[test.output_index]:
            test.ok, test.separate = True, True
        if not test.ok:
            row = test.output_index
            bad = kinked[row]
            verdicts[row, bad] = FAIL
            reasons[row, bad] = SUBGRADIENT
    return tests, along.evaluations


@dataclass
class DirectionTest:
    """The claim projected on one direction through the kink coordinates, against the
    one-sided directional derivatives there (one output row)."""

    output_index: int
    direction: np.ndarray  # (n,) unit vector
    projected: float
    left: float
    right: float
    ok: bool
    # The row's kinks are separate coordinates (see `separate_kinks`): the test does not
    # decide, the coordinates' own do.
    separate: bool = False


def kink_directions(columns: np.ndarray, n: int, rng: np.random.Generator, count: int = 3):
    """Unit directions through the kink coordinates: all of them together, then random
    sign patterns (a claim can pass each coordinate alone and still not be a subgradient:
    max at a tie claimed [1, 1, 0] moves by 2 along e0 + e1, the function by 1)."""
    rows = [np.zeros(n)]
    rows[0][columns] = 1.0
    for _ in range(count):
        d = np.zeros(n)
        d[columns] = rng.choice([-1.0, 1.0], size=columns.size)
        rows.append(d)
    directions = np.stack(rows)
    return directions / np.linalg.norm(directions, axis=1, keepdims=True)


def directional_verdicts(
    claim: np.ndarray, directions: np.ndarray, numeric: S.Numeric, tau: np.ndarray
) -> list[DirectionTest]:
    """Judge the claim along each direction: between the one-sided directional derivatives
    at a kink, equal to the directional derivative where it is smooth."""
    projected = claim @ directions.T  # (m, D)
    tol = np.abs(tau) @ np.abs(directions.T)
    tests = []
    for i in range(claim.shape[0]):
        for d in range(directions.shape[0]):
            kind = numeric.kind[i, d]
            p = float(projected[i, d])
            if kind == S.KINK:
                left, right = float(numeric.left[i, d]), float(numeric.right[i, d])
                margin = tol[i, d] + numeric.error[i, d]  # (the one-sided estimates' own)
                ok = min(left, right) - margin <= p <= max(left, right) + margin
            elif kind == S.SMOOTH:
                left = right = float(numeric.estimate[i, d])
                ok = abs(p - left) <= tol[i, d] + numeric.error[i, d]
            else:
                continue  # nothing to learn along an undecided direction
            tests.append(DirectionTest(i, directions[d], p, left, right, bool(ok)))
    return tests


def separate_kinks(
    per_element: S.Numeric,
    columns: np.ndarray,
    directions: np.ndarray,
    along: S.Numeric,
    tau: np.ndarray,
) -> np.ndarray:
    """Which output rows (m,) have their kinks in separate coordinates: along every tested
    direction d, f's one-sided derivatives are the sums of the coordinates' own,
    sum_j d_j·(right_j where d_j > 0, else left_j). There the set of valid gradients is
    the box of the coordinates' intervals, which the coordinates' tests decide; a direction
    can not (relu(b0) - relu(b1) at 0: the gradient of the piece b < 0, PyTorch's
    relu'(0) = 0, is valid, yet its slope along (1, -1) is outside the one-sided
    derivatives there; a ReLU layer's zero biases with a zero padding sample, QA round 17).
    Where they are not the sums (|x0 - x1|, max at a tie), the directions decide."""
    m = per_element.estimate.shape[0]
    kink = per_element.kind[:, columns] == S.KINK
    smooth = per_element.kind[:, columns] == S.SMOOTH
    decided = (kink | smooth).all(axis=1)
    right = np.where(kink, per_element.right[:, columns], per_element.estimate[:, columns])
    left = np.where(kink, per_element.left[:, columns], per_element.estimate[:, columns])
    error = np.where(kink | smooth, per_element.error[:, columns], np.inf)
    d = directions[:, columns]  # (D, c)
    up, down = np.maximum(d, 0.0), np.minimum(d, 0.0)
    # f'(x; d) and -f'(x; -d) if the coordinates' one-sided derivatives simply add up
    predicted_right = right @ up.T + left @ down.T  # (m, D)
    predicted_left = left @ up.T + right @ down.T
    measured_right = np.where(along.kind == S.KINK, along.right, along.estimate)
    measured_left = np.where(along.kind == S.KINK, along.left, along.estimate)
    slack = np.abs(tau[:, columns]) @ np.abs(d.T) + np.abs(error) @ np.abs(d.T) + along.error
    with np.errstate(invalid="ignore"):
        agree = (np.abs(measured_right - predicted_right) <= slack) & (
            np.abs(measured_left - predicted_left) <= slack
        )
    decided_along = (along.kind == S.KINK) | (along.kind == S.SMOOTH)
    return decided & (agree & decided_along).all(axis=1) & (m > 0)
