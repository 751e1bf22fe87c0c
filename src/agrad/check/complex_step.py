"""The complex step: f'(x)·d = Im f(x + ih·d)/h, exact to rounding (Squire & Trapp 1998).

It has no cancellation, so no step to choose; it holds only where f is holomorphic near
the real point, which the caller decides (the op table knows which ops have kinks).
Its real part is compared with f(x) and a second step is taken, so a branch cut or a
kernel that is not holomorphic shows up as disagreement, and that element is left
UNDECIDED for the caller to hand to the ladder (`ladder.ladder`).
"""

from __future__ import annotations

import numpy as np

from .steps import EPS, SMOOTH, Along, Numeric, _close, _magnitude, _per_element

COMPLEX_STEPS = (1e-20, 1e-26)  # two steps: a step-dependent result means the complex step lies
SAMPLE = 16  # elements that take the second complex step


def complex_step(along: Along, f0: np.ndarray, n: int, scale: np.ndarray) -> Numeric:
    """The complex-step derivative along each of ``n`` elements; elements where it does not
    hold up (a real part that is not f(x), a step-dependent result) stay UNDECIDED for the
    caller to hand to the ladder. ``f0``: f at the base, (m,) or per element (m, n).

    The second step, which exposes a derivative that scales like 1/h (a kernel that is not
    holomorphic), is taken on a sample of elements: such a fault is the op's, so it shows
    on every element through that op; if any sampled element disagrees, on all of them.
    """
    f0 = _per_element(f0, n)
    m = f0.shape[0]
    result = Numeric.empty(m, n)
    elements = np.arange(n)
    h1, h2 = (s * scale for s in COMPLEX_STEPS)
    with np.errstate(all="ignore"):
        v1 = along(elements, 1j * h1)
        d1 = v1.imag / h1
        # The real part is f(x) - h²f''/2 + ...: equal to f(x) but for a branch cut
        # crossed or a kernel that is not holomorphic (both differ at O(1)), and for the
        # rounding of the terms f sums, which complex arithmetic rounds otherwise: at the
        # size of x_j·∂f/∂x_j, however small f is after they cancel (the residual X @ w - y
        # of a fitted model, 1e-9 from terms of 1, was refused and the ladder failed it)
        terms = np.where(np.isfinite(d1), np.abs(d1) * scale, 0.0).sum(axis=1, keepdims=True)
        slack = 1e-20 * (1.0 + np.abs(f0)) + 64 * EPS * terms
        good = _close(v1.real, f0, 1e-9, slack) & np.isfinite(d1) & np.isfinite(f0)
        sample = np.unique(np.linspace(0, n - 1, min(n, SAMPLE)).astype(int)) if n else elements
        d2 = np.full(d1.shape, np.nan)
        d2[:, sample] = along(sample, 1j * h2[sample]).imag / h2[sample]
        if not _close(d1[:, sample], d2[:, sample], 1e-9).all():
            d2 = along(elements, 1j * h2).imag / h2
            sample = elements
        same = np.ones(d1.shape, dtype=bool)
        same[:, sample] = _close(d1[:, sample], d2[:, sample], 1e-9)
    good &= same
    result.evaluations = n + sample.size
    column_ok = good.all(axis=0)
    err = np.where(np.isnan(d2), 0.0, np.abs(d1 - d2)) + 8 * EPS * np.abs(d1)
    result.estimate[:, column_ok] = d1[:, column_ok]
    result.error[:, column_ok] = err[:, column_ok]
    result.kind[:, column_ok] = SMOOTH
    result.reason[:, column_ok] = 0
    result.complex_step[column_ok] = True
    result.magnitude = _magnitude(v1.real)
    return result
