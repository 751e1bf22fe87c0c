"""JSON-safe numbers for reports (the CLI's renderer uses the same functions)."""

from __future__ import annotations

from typing import Any

import numpy as np


def json_number(v: Any) -> Any:
    """A JSON-safe number: whole numbers without a fraction, non-finite values as the
    strings "nan", "inf", "-inf" (the renderer turns them into null for --nonfinite null)."""
    v = float(v)
    if np.isfinite(v):
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def to_json(value: Any) -> Any:
    """Arrays as nested lists, scalars as numbers, non-finite numbers as strings."""
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        return json_number(float(array))
    if np.isfinite(array).all() and (np.abs(array) < 2**53).all() and (array % 1 == 0).all():
        return array.astype(np.int64).tolist()  # the common case, at C speed
    flat = [json_number(v) for v in array.reshape(-1).tolist()]
    for size in reversed(array.shape[1:]):  # regroup into nested lists, innermost first
        flat = [flat[i : i + size] for i in range(0, len(flat), size)]
    return flat if array.size else array.tolist()
