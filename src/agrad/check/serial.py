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
    finite = np.isfinite(array)
    with np.errstate(invalid="ignore"):
        whole = finite & (np.abs(array) < 2**53) & (array % 1 == 0)
    if whole.all():
        return array.astype(np.int64).tolist()  # the common case, at C speed
    # What json_number does to each element, on the whole array at once (a 200x200
    # Jacobian element by element took 34 ms): floats, whole numbers as ints, and the
    # non-finite ones as strings, then nested lists from the object array.
    items = array.astype(object)
    if whole.any():
        items[whole] = array[whole].astype(np.int64).astype(object)
    if not finite.all():
        items[np.isnan(array)] = "nan"
        items[array == np.inf] = "inf"
        items[array == -np.inf] = "-inf"
    return items.tolist()
