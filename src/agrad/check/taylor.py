"""The Taylor remainder test: a verdict that needs no step.

Along a direction v, r(h) = |f(x + hv) - f(x) - h·J v| falls like h² when J is the
derivative and like h when it is not (pyadjoint's ``taylor_test``; PETSc's Jacobian test;
Farrell, Ham, Funke & Rognes, SIAM J. Sci. Comput. 35(4), 2013). Halving h and reading
the convergence rate log2(r(h)/r(h/2)) off the table decides without choosing a step:
rate 2 is right, rate 1 is wrong. Where the residual is at rounding level from the first
step on, f is linear along v and the claim exact to rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .steps import EPS

HALVINGS = 24  # from the first step down by 2^24 (1.7e7): high curvature reaches rate 2


@dataclass
class TaylorRow:
    step: float
    residual: float
    rate: float | None  # log2 of the previous residual over this one


@dataclass
class TaylorResult:
    """One direction's table and what it says."""

    verdict: str  # "pass", "fail" or "undecided"
    rows: list[TaylorRow] = field(default_factory=list)
    message: str = ""
    slope: float = 0.0  # r(h)/h where the rate is 1: the size of the error along v
    rate: float = 0.0  # the rate the verdict read (mean of the last reliable ones)

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "message": self.message,
            "table": [{"step": r.step, "residual": r.residual, "rate": r.rate} for r in self.rows],
        }


def taylor(
    along: Callable[[np.ndarray], np.ndarray],
    f0: float,
    slope: float,
    first_step: float,
    tolerance: float,
    halvings: int = HALVINGS,
) -> TaylorResult:
    """Residuals of the linearisation ``f0 + h·slope`` of the scalar ``t -> along(t)``
    (f projected on an output direction, along an input direction) at halving steps."""
    steps = first_step / 2.0 ** np.arange(halvings + 1)
    with np.errstate(all="ignore"):
        values = np.asarray(along(steps), dtype=np.float64).reshape(-1)
        residual = np.abs(values - f0 - steps * slope)
    noise = 16 * EPS * (np.abs(values) + abs(f0) + np.abs(steps * slope))
    rows, previous = [], None
    for h, r in zip(steps, residual, strict=True):
        rate = None
        if previous is not None and previous > 0 and r > 0:
            with np.errstate(all="ignore"):
                rate = float(np.log2(previous / r))
        rows.append(TaylorRow(float(h), float(r), rate))
        previous = r
    result = TaylorResult("undecided", rows)
    if not np.isfinite(values).any() or not np.isfinite(f0):
        result.message = "f is not finite along this direction"
        return result
    reliable = np.isfinite(residual) & (residual > noise)
    if not reliable.any():
        result.verdict = "pass"
        result.message = "the residual is at rounding level at every step: exact to rounding"
        return result
    rates = [
        rows[k].rate
        for k in range(1, len(rows))
        if reliable[k] and reliable[k - 1] and rows[k].rate is not None
    ]
    if len(rates) < 2:
        result.message = "too few steps above rounding noise to read a rate"
        return result
    tail = rates[-2:]
    result.rate = float(np.mean(tail))
    last = int(np.nonzero(reliable)[0][-1])
    result.slope = float(residual[last] / steps[last])
    if min(tail) >= 1.7:
        result.verdict = "pass"
        result.message = f"the residual falls at rate {np.mean(tail):.2f} (2: the derivative)"
    elif max(abs(t - 1.0) for t in tail) <= 0.3 and result.slope > tolerance:
        result.verdict = "fail"
        result.message = (
            f"the residual falls at rate {np.mean(tail):.2f}, not 2: the claimed derivative "
            f"is off by about {result.slope:.3g} along this direction"
        )
    else:
        result.message = (
            f"the rate does not settle (last rates {', '.join(f'{t:.2f}' for t in tail)})"
        )
    return result
