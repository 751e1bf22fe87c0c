"""Matrix products. One `matmul` entry covers NumPy's 1-D, 2-D and batched rules;
its grad_fn name follows PyTorch's (DotBackward0, MvBackward0, MmBackward0, ...)."""

from __future__ import annotations

import numpy as np

from ...errors import AgradShapeError
from .. import batching
from .core import BINARY, PRODUCT, Case, Op, register

_MATMUL_NAMES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0",
                 (1, 2): "SqueezeBackward4"}  # fmt: skip


def _matmul_name(node):
    a, b = node.a0, node.a1  # (arrays, or stand-ins that know their ndim)
    ranks = (
        a.ndim if type(a) is np.ndarray else np.ndim(a),
        b.ndim if type(b) is np.ndarray else np.ndim(b),
    )
    return _MATMUL_NAMES.get(ranks, "UnsafeViewBackward0")


def _matmul_vjp(ns, g, out, a, b, needs=(True, True)):
    ga = gb = None
    if a.ndim == 1 and b.ndim == 1:
        ga, gb = g[..., None] * b, g[..., None] * a
    elif a.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
        if needs[0]:  # one product for a whole block of rows when b is a matrix
            ga = (
                ns.matmul(g, ns.swapaxes(b, -1, -2))
                if b.ndim == 2
                else ns.matmul(g[..., None, :], ns.swapaxes(b, -1, -2))[..., 0, :]
            )
        if needs[1]:
            gb = a[:, None] * g[..., None, :]
    elif b.ndim == 1:  # (..., m, k) @ (k,) -> (..., m)
        if needs[0]:
            ga = g[..., :, None] * b
        if needs[1]:
            gb = (
                ns.matmul(g, a)
                if a.ndim == 2
                else ns.matmul(ns.swapaxes(a, -1, -2), g[..., :, None])[..., 0]
            )
    else:  # (an array's own swapaxes: the namespace's costs a call more, on every step)
        if needs[0]:
            ga = ns.matmul(
                g, b.swapaxes(-1, -2) if type(b) is np.ndarray else ns.swapaxes(b, -1, -2)
            )
        if needs[1]:
            gb = ns.matmul(
                a.swapaxes(-1, -2) if type(a) is np.ndarray else ns.swapaxes(a, -1, -2), g
            )
    return ga, gb


def _torch_matmul_text(a: tuple, b: tuple) -> str | None:
    """PyTorch's message for the un-batched cases (its batched ones name its kernels)."""
    if len(a) == len(b) == 1:
        return (
            f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the "
            f"same number of elements, but got {a[0]} and {b[0]} elements respectively"
        )
    if len(a) == 2 and len(b) == 1:
        return f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({b[0]})"
    if len(a) <= 2 and len(b) == 2:
        rows = a[0] if len(a) == 2 else 1
        return f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a[-1]} and {b[0]}x{b[1]})"
    return None


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """NumPy's matmul shape rule, with an error that names both shapes."""
    if not a or not b:
        raise AgradShapeError(
            f"matmul: operands must have at least 1 dimension, got shapes "
            f"{tuple(a)} and {tuple(b)}; use * for scalars",
            torch="both arguments to matmul need to be at least 1D, but they are "
            f"{len(a)}D and {len(b)}D",
        )
    k_a = a[-1]
    k_b = b[-2] if len(b) > 1 else b[0]
    if k_a != k_b:
        raise AgradShapeError(
            f"matmul: shapes {tuple(a)} and {tuple(b)} are not aligned: {k_a} (last dimension "
            f"of the left) != {k_b} ({'first' if len(b) == 1 else 'second-to-last'} dimension "
            "of the right)",
            torch=_torch_matmul_text(tuple(a), tuple(b)),
        )
    try:
        batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    except ValueError:
        raise AgradShapeError(
            f"matmul: batch dimensions of {tuple(a)} and {tuple(b)} cannot be broadcast together"
        ) from None
    rows = (a[-2],) if len(a) > 1 else ()
    cols = (b[-1],) if len(b) > 1 else ()
    return tuple(batch) + rows + cols


register(
    Op("matmul", _matmul_name, np.matmul, _matmul_vjp, matmul_shape, arity=2, needs_mask=True,
       saves=PRODUCT, same_dtype=True,
       explain="d(A@B)/dA = g@Bᵀ, d(A@B)/dB = Aᵀ@g", batch=batching.matmul, grows=True,
       within_operands=True,
       family=BINARY, language=True, doc="matrix product (also @), 1-D, 2-D or batched",
       cases=(Case(((3,), (3,))), Case(((2, 3), (3,))), Case(((3,), (3, 2))),
              Case(((2, 3), (3, 4))), Case(((2, 2, 3), (3, 4))), Case(((2, 2, 3), (1, 3, 2))))),
)  # fmt: skip
