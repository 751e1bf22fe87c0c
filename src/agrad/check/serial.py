"""JSON-safe numbers and index labels for reports (the CLI's renderer uses the same)."""

from __future__ import annotations

from typing import Any

import numpy as np


def to_json(value: Any) -> Any:
    """Arrays as nested lists, scalars as numbers, non-finite numbers as strings."""
    from .report import json_number

    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        return json_number(float(array))
    if array.ndim == 1:
        return [json_number(float(v)) for v in array]
    return [to_json(row) for row in array]


def index_label(index: tuple[int, ...]) -> str:
    """An element's index as users write it: () for a scalar, (0, 1) for a matrix entry."""
    if not index:
        return "()"
    return str(index[0]) if len(index) == 1 else str(tuple(int(i) for i in index))
