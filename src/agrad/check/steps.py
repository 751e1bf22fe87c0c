"""Numeric derivatives that choose their own step: what the ladder of steps
(`ladder`) and the complex step (`complex_step`, which needs none) share.

Each *element* is one direction in input space (a coordinate, or any unit vector); its
numeric derivative is a column of the Jacobian along that direction, for every output.

The ladder: central differences at h0, h0/4, h0/16, ... with Ridders' extrapolation
(Richardson in h², an error estimate at every level), so each element gets the step its
own curvature allows. The one-sided quotients D+(h), D-(h) come from the same
evaluations; how their gap scales with h classifies the point (Farrell et al. 2013's
Taylor-remainder idea, applied to the one-sided gap): at a smooth point the gap falls in
proportion to h, at a kink it stays O(1), near a kink at distance d it collapses once
h < d, and where rounding dominates it grows. An element stops as soon as its verdict is
clear: converged and smooth (confirmed at a much finer step where the steps were coarse),
a kink over many levels, or rounding noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Element classifications.
SMOOTH, KINK, UNDECIDED = 0, 1, 2
# Why an element is undecided (JUMP: the function jumps at the point, which the verdict
# makes a failure: there is no derivative to claim).
NONFINITE, NOISE, KINK_CLOSE, JUMP = 1, 2, 3, 4
# How the one-sided gap scaled over the last levels of the ladder.
SHAPE_OPEN, SHAPE_SMOOTH, SHAPE_FLAT, SHAPE_KINK, SHAPE_NEAR, SHAPE_NOISE = range(6)

EPS = float(np.finfo(np.float64).eps)
RATIO = 4.0  # step ratio between ladder levels
START = 2.0**-10  # the first step, times max(1, |x_j|)
SMALLEST = 2.0**-46  # the last step, times max(1, |x_j|): about where x + h rounds to x
PROBE = 64.0  # an estimate settled on is confirmed at a step this much finer
MAX_LEVELS = int(np.ceil(np.log(START / SMALLEST) / np.log(RATIO))) + 1

# Evaluate f at ``len(elements)`` points, each the base point moved by ``offsets[k]`` along
# element ``elements[k]``: returns (m, len(elements)); real or complex offsets.
Along = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Numeric:
    """Numeric derivatives of m outputs along E elements, with what came with them."""

    estimate: np.ndarray  # (m, E)
    error: np.ndarray  # (m, E): estimated |estimate - true derivative|
    kind: np.ndarray  # (m, E) int8: SMOOTH, KINK or UNDECIDED
    reason: np.ndarray  # (m, E) int8: NONFINITE or NOISE where UNDECIDED
    left: np.ndarray  # (m, E): one-sided derivatives (meaningful where KINK)
    right: np.ndarray
    step: np.ndarray  # (E,): the step of the chosen estimate (0 for the complex step)
    complex_step: np.ndarray  # (E,) bool: the estimate is the complex step's
    levels: np.ndarray  # (E,): ladder levels evaluated (0: the complex step sufficed)
    magnitude: np.ndarray | None = None  # (m,): the largest |f| at the steps the estimates use
    # (m, E): the rounding noise of the coarsest extrapolated level, the best any step here
    # can do (the ladder's second level); an error estimate within it is as good as it gets.
    resolution: np.ndarray | None = None
    evaluations: int = 0
    # (E,): decided by a ladder from |x_j|/2, finer than the steps that saw a kink or jump
    # there (`straddled`): more local than any sample around the point (see `directions`)
    refined: np.ndarray | None = None
    # Per level of the ladder, for the elements still active then: kept for explanations.
    trace: list = field(default_factory=list)
    # (m, E): estimates bounded by f's band of rounding noise (`flat.bound_noisy`)
    banded: np.ndarray | None = None

    def merge(self, columns: np.ndarray, other: Numeric) -> None:
        """Take ``other``'s results (computed for ``columns``) into those columns."""
        for name in ("estimate", "error", "kind", "reason", "left", "right"):
            getattr(self, name)[:, columns] = getattr(other, name)
        if other.resolution is not None:
            if self.resolution is None:
                self.resolution = np.zeros_like(self.error)
            self.resolution[:, columns] = other.resolution
        for name in ("step", "complex_step", "levels"):
            getattr(self, name)[columns] = getattr(other, name)
        self.evaluations += other.evaluations
        self.magnitude = _larger(self.magnitude, other.magnitude)

    def adopt(self, columns: np.ndarray, other: Numeric, take: np.ndarray) -> None:
        """Take ``other``'s results (computed for ``columns``) where ``take`` (m, len(columns))
        holds: a second ladder's better estimates for some outputs of some elements."""
        for name in ("estimate", "error", "kind", "reason", "left", "right"):
            values = getattr(self, name)
            values[:, columns] = np.where(take, getattr(other, name), values[:, columns])
        if self.resolution is not None and other.resolution is not None:
            self.resolution[:, columns] = np.where(
                take, other.resolution, self.resolution[:, columns]
            )
        self.step[columns] = np.where(take.any(axis=0), other.step, self.step[columns])

    def disputed(self, claim: np.ndarray, accuracy: np.ndarray) -> np.ndarray:
        """Smooth estimates the claim is far from (beyond the accuracy and 4 errors)."""
        with np.errstate(invalid="ignore"):
            far = ~(np.abs(claim - self.estimate) <= accuracy + 4.0 * self.error)
        return (self.kind == SMOOTH) & far

    def rough(self, accuracy: np.ndarray) -> np.ndarray:
        """Smooth estimates not accurate enough for ``accuracy``."""
        with np.errstate(invalid="ignore"):
            return (self.kind == SMOOTH) & ~(self.error <= accuracy)

    @classmethod
    def empty(cls, m: int, n: int) -> Numeric:
        nan = np.full((m, n), np.nan)
        return cls(
            nan.copy(),
            np.full((m, n), np.inf),
            np.full((m, n), UNDECIDED, dtype=np.int8),
            np.full((m, n), NONFINITE, dtype=np.int8),
            nan.copy(),
            nan.copy(),
            np.zeros(n),
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=np.int16),
        )


def difference_rounding(f0: np.ndarray, moved: np.ndarray, spread=0.0) -> np.ndarray:
    """What rounding may put between f's values on either side of x (see `tolerable_step`):
    a central difference at step h is off by up to this over 2h."""
    return 4 * EPS * (np.abs(f0) + np.abs(moved)) + 2 * spread


def tolerable_step(f0: np.ndarray, target: np.ndarray, moved: np.ndarray, spread=0.0) -> np.ndarray:
    """Per element (columns of (m, E) ``f0`` and ``target``), the finest step at which a
    central difference's rounding allowance (8x its rounding, see the ladder's
    `quotient`) stays within the accuracy ``target`` for every output; inf where a target
    is 0. f rounds as |f| does and as its arguments do: ``moved`` (m, E), |x_j| times the
    derivative, is what rounding x_j (and 3·x_j, ...) by a few ulps moves f by, over eps
    (cos(3x) at 5e7 rounds 3x by 1e-8: differences at steps of 1e-6 are off by 1e-2).
    Finer steps exist, but no difference there decides to that accuracy."""
    rounding = difference_rounding(f0, moved, spread)
    with np.errstate(all="ignore"):
        step = np.where(target > 0, 4 * rounding / target, np.inf)
    return np.nan_to_num(step, nan=np.inf).max(axis=0, initial=0.0)


def _magnitude(values: np.ndarray) -> np.ndarray:
    finite = np.where(np.isfinite(values), np.abs(values), 0.0)
    return finite.max(axis=1, initial=0.0)


def _larger(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None or b is None:
        return b if a is None else a
    return np.maximum(a, b)


def _per_element(f0: np.ndarray, n: int) -> np.ndarray:
    f0 = np.asarray(f0, dtype=np.float64)
    return np.broadcast_to(f0[:, None], (f0.size, n)) if f0.ndim == 1 else f0


def _close(a: np.ndarray, b: np.ndarray, rtol: float, slack: float | np.ndarray = 1e-300):
    return np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + slack


def element_scale(x: np.ndarray) -> np.ndarray:
    """Each coordinate's scale for its steps: |x_j|, and at least 1 (steps are absolute
    for small inputs, relative for large ones)."""
    return np.maximum(1.0, np.abs(np.asarray(x, dtype=np.float64).reshape(-1)))


def central(along, elements, h, actual, spread=0.0):
    """The central difference along ``elements`` at steps ``h``, and its rounding."""
    hp, hm = (h, h) if actual is None else actual(elements, h)
    with np.errstate(all="ignore"):
        return quotient(along(elements, hp), along(elements, -hm), hp, hm, spread)


def quotient(up, down, hp, hm, spread=0.0):
    """The central quotient of ``up`` and ``down`` and its rounding: its two values, each
    rounded to half an ulp, with a factor 2 to spare (and off by f's measured ``spread``)."""
    rounding = 2 * EPS * (np.abs(up) + np.abs(down)) + 2 * spread
    return (up - down) / (hp + hm), rounding / (hp + hm)


SHORT = 8  # bits of a number too short to tell float32 from float64 by


def in_float32(values: np.ndarray, whole: bool = False, large: bool = False) -> bool:
    """Whether every finite value is a float32 number and, unless ``whole``, one of them is
    not a whole number (whole numbers are float32 numbers whatever computes them): f or a
    backward that computes in float32 inside, whose rounding is float32's. (``whole``: where
    taking float64's rounding for float32's would pass a wrong claim.)"""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = values[np.isfinite(values)]
    with np.errstate(all="ignore"):
        same = finite.astype(np.float32).astype(np.float64) == finite
    # (``large``: from 2^23 up every float32 number is whole, and one there with float32's
    # 24 bits is as telling as a fraction, QA round 29: a float32 backward of gradients
    # ~3e7 "was not linear in grad_output")
    # (a number of a few bits, 2^-51 or 0.75, is every precision's: f of terms that cancel
    # to an ulp of 1 is no float32 computation, and was diagnosed as one)
    mantissa = np.frexp(finite)[0] * 2.0**SHORT
    telling = (finite != np.round(finite)) & (mantissa != np.round(mantissa))
    if large:
        telling |= np.abs(finite) >= 2.0**23
    return bool(same.all() and (whole or np.any(telling)))


def put(array: np.ndarray, cols: np.ndarray, where: np.ndarray, value: Any) -> None:
    """``array[:, cols]`` takes ``value`` (a number, or an array of that block's shape) where
    ``where`` holds."""
    array[:, cols] = np.where(where, value, array[:, cols])
