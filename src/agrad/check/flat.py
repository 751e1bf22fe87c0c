"""Points where f does not move at all in float64: a claim of rounding size is right."""

from __future__ import annotations

import numpy as np

from . import steps as S
from .verdict import FAIL, FLAT, PASS, ROUNDED, ROUNDED_ULPS, RULE, UNDECIDED, rounding_size


def pass_flat(var, f0, claim, exact_values, exact, tau, verdicts, reasons) -> int:
    """Where the complex step gave the exact derivative but f does not move at all in
    float64 along the element (f(x ± h) == f(x), bit for bit, at the ladder's first step),
    a claim within rounding size of it is right, as `judge` has it for finite differences:
    sum(tanh(x)) at [20, -20] cancels f to 0, so the floor from |f| is 0, while autograd's
    1 - tanh(20)² is 0 and the truth 1.7e-17. Passes such elements (in place); returns
    the evaluations taken."""
    allowed = FLAT
    with np.errstate(all="ignore"):
        close = np.abs(claim - exact_values) <= allowed
    suspect = (verdicts == FAIL) & (reasons == RULE) & close & exact[None, :]
    cols = np.nonzero(suspect.any(axis=0))[0]
    if not cols.size:
        return 0
    h = S.START * S.element_scale(var.base.reshape(-1))[cols]
    along = var.along_coordinates()
    with np.errstate(all="ignore"):
        up, down = along(cols, h), along(cols, -h)
    f = np.asarray(f0, dtype=np.float64).reshape(-1)[:, None]
    flat = suspect[:, cols] & (up == f) & (down == f)
    for array, value in ((verdicts, PASS), (reasons, 0), (tau, allowed)):
        part = array[:, cols]
        part[flat] = value
        array[:, cols] = part
    return 2 * cols.size


def doubt_rounded(f0, claim, exact_values, exact, verdicts, reasons) -> None:
    """A "wrong rule" where the complex step is exact, off by no more than ROUNDED_ULPS
    ulps of the largest |f|: the backward's own rounding, amplified by the chain rule,
    reaches that far (`verdict.ROUNDED_ULPS`), so such an element is undecided."""
    size = rounding_size(np.asarray(f0, dtype=np.float64).reshape(-1))[:, None]
    with np.errstate(all="ignore"):
        near = np.abs(claim - exact_values) <= ROUNDED_ULPS * S.EPS * size
    doubt = (verdicts == FAIL) & (reasons == RULE) & near & exact[None, :]
    verdicts[doubt], reasons[doubt] = UNDECIDED, ROUNDED
