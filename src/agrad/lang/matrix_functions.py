"""The language's matrix functions written by hand (the rest are generated from the op
table's entries), and PyTorch's ``pow``. Each signature is its usage line."""

from __future__ import annotations

from ..engine import functions as F
from ..engine.kernels import Array
from ..engine.tensor import Tensor
from .functions import Operands, Value, to_tensor


def diag(x: Array, diagonal: int = 0) -> Tensor:
    """a vector's diagonal matrix, or a matrix's diagonal"""
    return F.diag(x, diagonal)


def logdet(x: Array) -> Tensor:
    """log of the determinant (nan where it is negative); its gradient is inv(x).T"""
    return F.logdet(x)


def solve(a: Array, b: Array) -> Tensor:
    """x with a @ x = b (b a vector or a matrix)"""
    return F.solve(a, b)


def einsum(equation: str, *operands: Operands) -> Tensor:
    """Einstein summation: einsum("ij,jk->ik", A, B)"""
    return F.einsum(equation, *operands)


def pow(a: Value, b: Value) -> Tensor:  # noqa: A001 - PyTorch's name
    """a ** b (PyTorch's pow)"""
    base = a if isinstance(a, (int, float)) and not isinstance(a, bool) else to_tensor(a)
    exponent = b if isinstance(b, (int, float)) and not isinstance(b, bool) else to_tensor(b)
    if not isinstance(base, Tensor):
        return to_tensor(exponent).__rpow__(base)
    return F.pow(base, exponent)


FUNCTIONS = (diag, logdet, solve, einsum, pow)
