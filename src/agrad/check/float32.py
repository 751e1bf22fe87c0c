"""A float32 claim beside its function's float64 twin: the finite differences that judge a
float32 claim are taken in float64 (`checker`), which is right only where the function in
float32 is that function, rounded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .diagnosis import diagnose
from .verdict import CLAIM_NONFINITE, COTANGENT, ELSEWHERE, FAIL, REENTRANT

if TYPE_CHECKING:
    from .options import CheckOptions
    from .report import CheckReport
    from .targets import Target

# How far a float32 function may be from its float64 twin at the point, in units of the
# largest |f|: float32 rounding leaves a few ulps (1.2e-7 each), a long sum more; beyond
# a hundredth, the function computes something else in float32 (QA round 14: f + 5·sum(x)
# only when given float32 passed its float64 twin's gradient).
TWIN_GAP = 1e-2


def float32_twin(target: Target, report: CheckReport, options: CheckOptions) -> None:
    """A float32 claim is judged by finite differences of the function in float64: only
    right where the function in float32 is that function, rounded. Where its values at
    the point differ beyond that, every element they judged fails, saying so (undecided,
    --allow-undecided would pass it; "rule" or "precision" would read the twin as the
    function)."""
    own = getattr(target, "own_value", None)
    if target.dtype == "float64" or own is None or not report.variables:
        return
    mine = np.asarray(own(), dtype=np.float64).reshape(-1)
    twin = target.function(target.names[0]).value()
    if mine.shape != twin.shape:
        return
    scale = float(np.max(np.abs(twin[np.isfinite(twin)]), initial=0.0))
    with np.errstate(invalid="ignore"):
        gap = np.where(np.isfinite(mine) == np.isfinite(twin), np.abs(mine - twin), np.inf)
    gap = np.where(np.isnan(mine) & np.isnan(twin), 0.0, gap)
    if not (np.nan_to_num(gap, nan=np.inf) > TWIN_GAP * max(scale, 1e-300)).any():
        return
    worst = int(np.argmax(np.nan_to_num(gap, nan=np.inf)))
    for var in report.variables.values():
        # Every verdict the float64 differences gave (a failure's "rule" or "precision" too:
        # they read the twin as the function); not what the backward alone shows.
        passed = ~np.isin(var.reasons, (COTANGENT, REENTRANT, CLAIM_NONFINITE))
        var.verdicts[passed], var.reasons[passed] = FAIL, ELSEWHERE
        var.elsewhere = (float(mine[worst]), float(twin[worst]))
        if passed.any():
            var.diagnosis = diagnose(var, target.function(var.name), twin, options)
