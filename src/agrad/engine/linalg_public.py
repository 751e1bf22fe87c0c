"""The public functions of the matrix entries (agrad.trace, agrad.det, agrad.einsum, ...),
with PyTorch's names and signatures; `agrad.linalg` re-exports the ``torch.linalg`` ones.
Tensor methods and aliases come from the entries (`public.generate`)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..errors import AgradShapeError, AgradValueError
from .args import as_tensor, first
from .escapes import read_values
from .ops import TABLE, apply
from .public import public
from .tensor import Tensor

OP = TABLE
SignLogAbsDet = namedtuple("SignLogAbsDet", ["sign", "logabsdet"])


@public()
def trace(x: Any) -> Tensor:
    """Sum of the diagonal of a matrix (of the last two axes, for a batch)."""
    return apply(OP["trace"], first(x))


@public()
def diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of ``dim1`` and ``dim2`` (shifted by ``offset``), as the last axis."""
    return apply(OP["diagonal"], first(x), offset=offset, dim1=dim1, dim2=dim2)


@public(method=True)
def diag(x: Any, diagonal: int = 0) -> Tensor:
    """A vector's diagonal matrix, or a matrix's diagonal (torch.diag)."""
    x = first(x)
    if x.ndim == 1:
        return apply(OP["diag_embed"], x, offset=diagonal, dim1=0, dim2=1)
    if x.ndim == 2:
        return apply(OP["diagonal"], x, offset=diagonal, dim1=0, dim2=1)
    raise AgradShapeError(f"diag: expects a 1-D or 2-D tensor, got shape {x.shape}")


@public()
def diag_embed(x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The last axis of ``x`` on the diagonal of new matrices (dims ``dim1``, ``dim2``)."""
    return apply(OP["diag_embed"], first(x), offset=offset, dim1=dim1, dim2=dim2)


def _triangle(name: str):
    def fn(x: Any, diagonal: int = 0) -> Tensor:
        return apply(OP[name], first(x), diagonal=int(diagonal))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {'lower' if name == 'tril' else 'upper'} triangle from diagonal ``k``."
    return public()(fn)


tril, triu = _triangle("tril"), _triangle("triu")


@public()
def kron(a: Any, b: Any) -> Tensor:
    """The Kronecker product (over all dimensions, as torch.kron)."""
    return apply(OP["kron"], first(a), first(b))


@public()
def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation: ``einsum("ij,jk->ik", A, B)`` (operands also as one list)."""
    if not isinstance(equation, str):
        raise AgradValueError("einsum: the first argument is the equation, e.g. 'ij,jk->ik'")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return apply(OP["einsum"], *(first(x) for x in operands), equation=equation)


@public()
def det(x: Any) -> Tensor:
    """The determinant of a square matrix (or of each in a batch)."""
    return apply(OP["det"], first(x))


@public()
def slogdet(x: Any) -> SignLogAbsDet:
    """(sign, log|det|) of a square matrix; the second carries the gradient inv(A)ᵀ."""
    x = first(x)
    logabsdet = apply(OP["slogdet"], x)
    read_values(x)  # the sign: an untracked result that changes with the values
    sign = np.sign(np.linalg.det(x._array)) if x._array.size else np.ones(x.shape[:-2])
    return SignLogAbsDet(as_tensor(np.asarray(sign, dtype=x.dtype)), logabsdet)


@public(method=True)
def logdet(x: Any) -> Tensor:
    """log det(A): nan where the determinant is negative, -inf where it is 0 (as PyTorch)."""
    sign, logabsdet = slogdet(x)
    negative = as_tensor(sign._array < 0)
    return apply(OP["where"], negative, np.asarray(np.nan, dtype=logabsdet.dtype), logabsdet)


@public()
def inverse(x: Any) -> Tensor:
    """The inverse of a square matrix (torch.inverse, torch.linalg.inv)."""
    return apply(OP["inv"], first(x))


@public()
def solve(a: Any, b: Any) -> Tensor:
    """x with ``a @ x = b``; ``b`` a vector (or batch of them) or a matrix, as PyTorch's."""
    return apply(OP["solve"], first(a), first(b))


@public()
def cholesky(x: Any, upper: bool = False) -> Tensor:
    """The lower Cholesky factor L (A = L Lᵀ) of a symmetric positive-definite matrix; of the
    symmetric part (A + Aᵀ)/2 when A is not symmetric (PyTorch reads the lower triangle)."""
    return apply(OP["cholesky"], first(x), upper=bool(upper))
