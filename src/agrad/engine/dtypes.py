"""Dtypes as NumPy dtype objects under PyTorch's names, and the default float dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

# PyTorch's names; `agrad/__init__.py` exports them (agrad.float32, agrad.float, ...).
DTYPES: dict[str, np.dtype] = {
    "float16": np.dtype("float16"), "half": np.dtype("float16"),
    "float32": np.dtype("float32"), "float": np.dtype("float32"),
    "float64": np.dtype("float64"), "double": np.dtype("float64"),
    "int8": np.dtype("int8"), "int16": np.dtype("int16"), "short": np.dtype("int16"),
    "int32": np.dtype("int32"), "int": np.dtype("int32"),
    "int64": np.dtype("int64"), "long": np.dtype("int64"),
    "uint8": np.dtype("uint8"), "bool": np.dtype("bool"),
}  # fmt: skip

_DEFAULT = [np.dtype("float64")]


def get_default_dtype() -> np.dtype:
    """The dtype of floating tensors created from Python numbers (float64 unless changed)."""
    return _DEFAULT[0]


def set_default_dtype(dtype: Any) -> None:
    """Change the default floating dtype (float32 or float64), as torch.set_default_dtype."""
    d = np.dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _DEFAULT[0] = d


def to_dtype(dtype: Any) -> np.dtype | None:
    """A NumPy dtype from an agrad/NumPy dtype or its name; None stays None."""
    return None if dtype is None else np.dtype(dtype)
