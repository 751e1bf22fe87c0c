"""``agrad.linalg``: torch.linalg's names for the op table's matrix functions."""

from __future__ import annotations

from .engine.functions import API

det = API["det"]
slogdet = API["slogdet"]
inv = API["inverse"]
solve = API["solve"]
cholesky = API["cholesky"]
diagonal = API["diagonal"]
matmul = API["matmul"]
vector_norm = API["norm"]

__all__ = ["cholesky", "det", "diagonal", "inv", "matmul", "slogdet", "solve", "vector_norm"]
