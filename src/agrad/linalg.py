"""``agrad.linalg``: torch.linalg's names for the op table's matrix functions."""

from __future__ import annotations

from typing import Any

from .engine.functions import API

det = API["det"]
slogdet = API["slogdet"]
inv = API["inverse"]
solve = API["solve"]
cholesky = API["cholesky"]
diagonal = API["diagonal"]
matmul = API["matmul"]
vector_norm = API["norm"]
matrix_power = API["matrix_power"]


def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    """Σ x·y along ``dim``, broadcasting the rest (real tensors)."""
    return API["sum"](API["mul"](x, y), dim)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:  # noqa: A002
    """torch.linalg.cross: along ``dim`` (-1 by default, where torch.cross picks a size-3 dim)."""
    return API["cross"](input, other, dim)


__all__ = ["cholesky", "cross", "det", "diagonal", "inv", "matmul", "matrix_power", "slogdet",
           "solve", "vecdot", "vector_norm"]  # fmt: skip
