"""Finite-difference Jacobians of a function of arrays.

Central differences by default (error O(eps^2)); forward differences (O(eps));
Richardson extrapolation of central differences (O(eps^4)), which also yields
an error estimate from the difference between its two step sizes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ArrayFn = Callable[[np.ndarray], np.ndarray]


def default_eps(dtype: np.dtype, method: str = "central") -> float:
    """A step near the optimum for the dtype: cbrt(machine eps) for central differences."""
    eps = float(np.finfo(dtype).eps) if np.dtype(dtype).kind == "f" else 2.2e-16
    return eps ** (1 / 2 if method == "forward" else 1 / 3 if method == "central" else 1 / 5)


def numeric_jacobian(
    f: ArrayFn, x: np.ndarray, eps: float, method: str = "central"
) -> tuple[np.ndarray, np.ndarray | None]:
    """J[i, j] = d f(x).flat[i] / d x.flat[j]; with ``richardson``, also an error estimate.

    ``f`` is called with a perturbed copy of ``x`` (never ``x`` itself) and must
    return an array; x is restored by construction.
    """
    base = np.array(x, dtype=x.dtype, copy=True)
    flat = base.reshape(-1)
    f0 = np.asarray(f(base)).reshape(-1) if method == "forward" else None
    columns, errors = [], []
    for j in range(flat.size):
        if method == "richardson":
            d1 = _central(f, base, flat, j, eps)
            d2 = _central(f, base, flat, j, eps / 2)
            columns.append(d2 + (d2 - d1) / 3.0)
            errors.append(np.abs(d2 - d1) / 3.0)
        elif method == "forward":
            keep = flat[j]
            flat[j] = keep + eps
            up = np.asarray(f(base)).reshape(-1)
            flat[j] = keep
            columns.append((up - f0) / eps)
        else:
            columns.append(_central(f, base, flat, j, eps))
    n_out = columns[0].size if columns else np.asarray(f(base)).size
    jac = np.stack(columns, axis=1) if columns else np.zeros((n_out, 0))
    err = np.stack(errors, axis=1) if errors else None
    return jac, err


def _central(f: ArrayFn, base: np.ndarray, flat: np.ndarray, j: int, eps: float) -> np.ndarray:
    keep = flat[j]
    flat[j] = keep + eps
    up = np.asarray(f(base), dtype=np.float64).reshape(-1)
    flat[j] = keep - eps
    down = np.asarray(f(base), dtype=np.float64).reshape(-1)
    flat[j] = keep
    return (up - down) / (2.0 * eps)
