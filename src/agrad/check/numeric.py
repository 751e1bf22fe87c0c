"""Finite differences of a function of one array, column by column.

Central differences by default (error O(h^2)); forward differences (O(h));
Richardson extrapolation of central differences (O(h^4)), which also yields an
error estimate. The one-sided quotients on either side come for free from the
same evaluations, and show where a function has a kink (relu or abs at 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

ArrayFn = Callable[[np.ndarray], np.ndarray]
METHODS = ("central", "forward", "richardson")


def default_eps(dtype: np.dtype, method: str = "central") -> float:
    """The step that balances truncation and rounding error for the dtype:
    eps^(1/2) forward, eps^(1/3) central, eps^(1/5) Richardson."""
    machine = float(np.finfo(dtype).eps)
    return machine ** {"forward": 1 / 2, "central": 1 / 3, "richardson": 1 / 5}[method]


@dataclass
class Differences:
    """Numeric Jacobian (outputs x inputs) and what came with it."""

    jacobian: np.ndarray
    left: np.ndarray | None = None  # (f(x) - f(x - h)) / h
    right: np.ndarray | None = None  # (f(x + h) - f(x)) / h
    error: np.ndarray | None = None  # Richardson's estimate of |numeric - true|
    evaluations: int = 0


def differences(
    f: ArrayFn,
    x: np.ndarray,
    eps: float,
    method: str = "central",
    relative: bool = True,
    batched: ArrayFn | None = None,
) -> Differences:
    """Differentiate ``f`` at ``x`` numerically, one input element at a time.

    The step for element j is ``eps * max(1, |x_j|)`` when ``relative`` (so large
    inputs are not perturbed below their rounding), else ``eps``. ``f`` receives a
    perturbed copy of ``x``; ``x`` itself is never modified. ``batched``, when given,
    evaluates ``f`` at a block of points stacked along a new first axis: the same
    differences then take a few larger NumPy calls instead of two small ones per element.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if batched is not None:
        from ..engine.batching import Unbatchable

        try:
            return _differences_batched(batched, x, eps, method, relative)
        except Unbatchable:
            pass  # an op without a batching rule: one evaluation per point below
    base = np.array(x, dtype=np.float64, copy=True)
    flat = base.reshape(-1)
    f0 = _value(f, base)
    m, n = f0.size, flat.size
    jac, left, right = np.empty((m, n)), np.empty((m, n)), np.empty((m, n))
    error = np.empty((m, n)) if method == "richardson" else None
    evaluations = 1
    for j in range(n):
        keep = flat[j]
        h = eps * max(1.0, abs(keep)) if relative else eps
        if method == "forward":  # one evaluation per element; no left quotient
            flat[j] = keep + h
            right[:, j] = jac[:, j] = (_value(f, base) - f0) / h
            left[:, j] = right[:, j]
            flat[j] = keep
            evaluations += 1
            continue
        up, down = _pair(f, base, flat, j, keep, h)
        evaluations += 2
        right[:, j] = (up - f0) / h
        left[:, j] = (f0 - down) / h
        if method == "central":
            jac[:, j] = (up - down) / (2.0 * h)
        else:
            coarse = (up - down) / (2.0 * h)
            up2, down2 = _pair(f, base, flat, j, keep, h / 2.0)
            evaluations += 2
            fine = (up2 - down2) / h
            jac[:, j] = fine + (fine - coarse) / 3.0
            error[:, j] = np.abs(fine - coarse) / 3.0
    return Differences(jac, left, right, error, evaluations)


# Points per batched call x elements each: small enough that a block stays in cache
# (large blocks run NumPy slower per element than many small calls).
BLOCK_ELEMENTS = 2**14


def _differences_batched(
    fb: ArrayFn, x: np.ndarray, eps: float, method: str, relative: bool
) -> Differences:
    base = np.array(x, dtype=np.float64, copy=True)
    flat = base.reshape(-1)
    n = flat.size
    steps = eps * np.maximum(1.0, np.abs(flat)) if relative else np.full(n, eps)
    f0 = np.array(fb(base[None]), dtype=np.float64).reshape(-1)
    m = f0.size
    jac, left, right = np.empty((m, n)), np.empty((m, n)), np.empty((m, n))
    error = np.empty((m, n)) if method == "richardson" else None
    chunk = max(1, min(n, BLOCK_ELEMENTS // max(n, 1)))
    evaluations = 1
    for start in range(0, n, chunk):
        cols = np.arange(start, min(n, start + chunk))
        h = steps[cols]
        rows = np.arange(cols.size)
        block = np.repeat(flat[None], cols.size, axis=0)

        def at(offset: np.ndarray, cols=cols, rows=rows, block=block) -> np.ndarray:
            block[rows, cols] = flat[cols] + offset  # as the one-point path: keep + h
            out = np.array(fb(block.reshape(cols.size, *base.shape)), dtype=np.float64)
            return out.reshape(cols.size, m).T

        up = at(h)
        evaluations += cols.size
        right[:, cols] = (up - f0[:, None]) / h
        if method == "forward":
            jac[:, cols] = left[:, cols] = right[:, cols]
            continue
        down = at(-h)
        evaluations += cols.size
        left[:, cols] = (f0[:, None] - down) / h
        coarse = (up - down) / (2.0 * h)
        if method == "central":
            jac[:, cols] = coarse
        else:
            fine = (at(h / 2.0) - at(-h / 2.0)) / h
            evaluations += 2 * cols.size
            jac[:, cols] = fine + (fine - coarse) / 3.0
            error[:, cols] = np.abs(fine - coarse) / 3.0
    return Differences(jac, left, right, error, evaluations)


def _pair(
    f: ArrayFn, base: np.ndarray, flat: np.ndarray, j: int, keep: float, h: float
) -> tuple[np.ndarray, np.ndarray]:
    flat[j] = keep + h
    up = _value(f, base)
    flat[j] = keep - h
    down = _value(f, base)
    flat[j] = keep
    return up, down


def _value(f: ArrayFn, x: np.ndarray) -> np.ndarray:
    """f(x) as a flat float64 copy: f may return a view of x, which is perturbed next."""
    return np.array(f(x), dtype=np.float64, copy=True).reshape(-1)
