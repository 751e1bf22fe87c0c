"""Matrix structure: trace, diagonal (and its adjoint), diag_embed, tril/triu, kron.

Every entry acts on its operands' trailing axes, with axis parameters stored counted from
the end, so a leading batch axis (finite differences' points) or leading cotangent axes
(Jacobian rows) ride along untouched: the forward itself is the batching rule.
"""

from __future__ import annotations

import numpy as np

from ...errors import AgradIndexError, AgradShapeError
from ..kernels import Array
from .core import NOTHING, Case, Op, register
from .windows import checked, trailing


def _matrix(shape, op: str) -> None:
    if len(shape) < 2:
        raise AgradShapeError(
            f"{op}: expects a matrix (2 or more dimensions), got shape {tuple(shape)}"
        )


def _dims(dim1: int, dim2: int, ndim: int, op: str) -> tuple[int, int]:
    """Two distinct axes of an ``ndim``-dimensional tensor, counted from the end."""
    for d in (dim1, dim2):
        if not -ndim <= d < ndim:
            raise AgradIndexError(
                f"{op}: dimension {d} is out of range for a tensor with {ndim} dimension(s)"
            )
    d1, d2 = dim1 % ndim - ndim, dim2 % ndim - ndim
    if d1 == d2:
        raise AgradShapeError(f"{op}: dim1 and dim2 must differ, both are {dim1}")
    return d1, d2


def _diagonal_length(n1: int, n2: int, offset: int) -> int:
    return max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))


def _rows_cols(k: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(k) + max(-offset, 0), np.arange(k) + max(offset, 0)


# ---- trace ----------------------------------------------------------------------------------


def _trace_forward(x: Array) -> Array:
    return np.trace(x, axis1=-2, axis2=-1)


def _trace_vjp(ns, g, out, x):
    eye = np.eye(x.shape[-2], x.shape[-1], dtype=x.dtype)
    return (g[..., None, None] * eye,)


def _trace_shape(shape):
    if len(shape) != 2:  # PyTorch's trace refuses batches (NumPy's would trace the first axes)
        raise AgradShapeError(f"trace: expected a matrix, but got a tensor of shape {tuple(shape)}")
    return ()


# ---- diagonal and its adjoint -----------------------------------------------------------


def _diagonal_forward(x: Array, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Array:
    """A view of ``x``, as PyTorch's: writes through it reach ``x`` (`engine.views`)."""
    d = np.diagonal(x, offset, dim1, dim2)  # (NumPy marks it read-only, x's memory or not)
    if np.ndim(x) and x.flags.writeable and d.size:
        d = d.view()
        d.flags.writeable = True  # (allowed: its memory is the writable x's)
    return d


def _diagonal_vjp(ns, g, out, x, offset=0, dim1=0, dim2=1):
    return (ns.diagonal_backward(g, tuple(x.shape), offset, dim1, dim2),)


def _diagonal_shape(shape, offset=0, dim1=0, dim2=1):
    d1, d2 = _dims(dim1, dim2, len(shape), "diagonal")
    n = len(shape)
    rest = [s for i, s in enumerate(shape) if i not in (d1 + n, d2 + n)]
    return (*rest, _diagonal_length(shape[d1], shape[d2], offset))


def _diagonal_backward_forward(g: Array, shape: tuple, offset: int, dim1: int, dim2: int):
    """Zeros of ``shape`` (after g's leading batch axes) with ``g`` on the diagonal."""
    lead = g.shape[: g.ndim - (len(shape) - 1)]
    z = np.zeros(lead + tuple(shape), dtype=g.dtype)
    view = np.moveaxis(z, (dim1, dim2), (-2, -1))
    rows, cols = _rows_cols(g.shape[-1], offset)
    view[..., rows, cols] = g
    return z


def _diagonal_backward_vjp(ns, g, out, gd, shape, offset, dim1, dim2):
    return (ns.diagonal(g, offset, dim1, dim2),)


def _diagonal_backward_shape(g_shape, shape, offset, dim1, dim2):
    return tuple(g_shape[: len(g_shape) - (len(shape) - 1)]) + tuple(shape)


def _diag_embed_forward(x: Array, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Array:
    n = x.shape[-1] + abs(offset)
    z = np.zeros((*x.shape[:-1], n, n), dtype=x.dtype)
    rows, cols = _rows_cols(x.shape[-1], offset)
    z[..., rows, cols] = x
    return np.moveaxis(z, (-2, -1), (dim1, dim2))


def _diag_embed_vjp(ns, g, out, x, offset=0, dim1=-2, dim2=-1):
    return (ns.diagonal(g, offset, dim1, dim2),)


def _diag_embed_shape(shape, offset=0, dim1=-2, dim2=-1):
    if not shape:
        raise AgradIndexError("diag_embed: expects at least one dimension, got a scalar")
    ndim = len(shape) + 1
    d1, d2 = _dims(dim1, dim2, ndim, "diag_embed")
    n = shape[-1] + abs(offset)
    out = list(shape[:-1])
    for d in sorted((d1 + ndim, d2 + ndim)):
        out.insert(d, n)
    return tuple(out)


def _diagonal_prepare(x, offset=0, dim1=0, dim2=1):
    _diagonal_shape(np.shape(x), offset, dim1, dim2)  # (checked before anything runs)
    d1, d2 = _dims(dim1, dim2, np.ndim(x), "diagonal")
    return {"offset": int(offset), "dim1": d1, "dim2": d2}


def _diag_embed_prepare(x, offset=0, dim1=-2, dim2=-1):
    _diag_embed_shape(np.shape(x), offset, dim1, dim2)
    d1, d2 = _dims(dim1, dim2, np.ndim(x) + 1, "diag_embed")
    return {"offset": int(offset), "dim1": d1, "dim2": d2}


# ---- triangles --------------------------------------------------------------------------------


def _tril_forward(x: Array, diagonal: int = 0) -> Array:
    return np.tril(x, diagonal)


def _triu_forward(x: Array, diagonal: int = 0) -> Array:
    return np.triu(x, diagonal)


def _tril_vjp(ns, g, out, x, diagonal=0):
    return (ns.tril(g, diagonal),)


def _triu_vjp(ns, g, out, x, diagonal=0):
    return (ns.triu(g, diagonal),)


def _triangle_shape(name):
    def rule(shape, diagonal=0):
        _matrix(shape, name)
        return tuple(shape)

    return rule


# ---- kron ---------------------------------------------------------------------------------------


def _kron_core(a, b, ndim: int):
    """kron over the last ``ndim`` axes (padded with ones); leading axes broadcast."""
    a = np.reshape(a, a.shape[:-ndim] + (1,) * max(0, ndim - a.ndim) + a.shape[-ndim:])
    b = np.reshape(b, b.shape[:-ndim] + (1,) * max(0, ndim - b.ndim) + b.shape[-ndim:])
    lead = np.broadcast_shapes(a.shape[:-ndim], b.shape[:-ndim])
    ia = (Ellipsis, *[k for _ in range(ndim) for k in (slice(None), None)])
    ib = (Ellipsis, *[k for _ in range(ndim) for k in (None, slice(None))])
    prod = a[ia] * b[ib]
    sizes = tuple(m * n for m, n in zip(a.shape[-ndim:], b.shape[-ndim:], strict=True))
    return prod.reshape(tuple(lead) + sizes)


def _kron_forward(a: Array, b: Array) -> Array:
    return _kron_core(np.asarray(a), np.asarray(b), max(np.ndim(a), np.ndim(b), 1))


def _kron_vjp(ns, g, out, a, b):
    ndim = out.ndim
    pa = (1,) * (ndim - a.ndim) + tuple(a.shape)
    pb = (1,) * (ndim - b.ndim) + tuple(b.shape)
    lead = tuple(g.shape[: g.ndim - ndim])
    g4 = g.reshape(lead + tuple(k for m, n in zip(pa, pb, strict=True) for k in (m, n)))
    a4 = a.reshape(tuple(k for m in pa for k in (m, 1)))
    b4 = b.reshape(tuple(k for n in pb for k in (1, n)))
    a_axes = tuple(range(-2 * ndim, 0, 2))
    b_axes = tuple(range(-2 * ndim + 1, 0, 2))
    ga = ns.sum(g4 * b4, axis=b_axes).reshape(lead + tuple(a.shape))
    gb = ns.sum(g4 * a4, axis=a_axes).reshape(lead + tuple(b.shape))
    return ga, gb


def _kron_shape(a, b):
    ndim = max(len(a), len(b), 1)
    pa = (1,) * (ndim - len(a)) + tuple(a)
    pb = (1,) * (ndim - len(b)) + tuple(b)
    return tuple(m * n for m, n in zip(pa, pb, strict=True))


def _kron_batch(op, values, params, size):
    (a, ba), (b, bb) = values
    ndim = max(a.ndim - ba, b.ndim - bb, 1)
    if ba and a.ndim - 1 < ndim:  # pad the point's own axes after the batch axis
        a = a.reshape(a.shape[:1] + (1,) * (ndim - a.ndim + 1) + a.shape[1:])
    if bb and b.ndim - 1 < ndim:
        b = b.reshape(b.shape[:1] + (1,) * (ndim - b.ndim + 1) + b.shape[1:])
    if ba != bb:  # the unbatched one gains a leading axis of 1
        a, b = (a, b[None]) if ba else (a[None], b)
    return _kron_core(a, b, ndim)


SQUARE = (Case(((3, 3),)), Case(((2, 4),)))  # (torch.trace takes 2-D only)
register(
    Op("trace", "TraceBackward0", _trace_forward, _trace_vjp, _trace_shape, saves=NOTHING,
       explain="d trace(A)/dA = I (the gradient g on the diagonal)", batch=trailing,
       prepare=checked(_trace_shape),
       language=True, doc="sum of the diagonal of a matrix", cases=SQUARE),
    Op("diagonal", "DiagonalBackward0", _diagonal_forward, _diagonal_vjp, _diagonal_shape,
       saves=NOTHING, explain="d diagonal(A)/dA puts g back on the diagonal, zeros elsewhere",
       batch=trailing, language=True, doc="the diagonal (offset, dim1, dim2) as the last axis",
       prepare=_diagonal_prepare, view=True,
       cases=(Case(((3, 3),), {"dim1": -2, "dim2": -1}), Case(((2, 4),), {"offset": 1,
              "dim1": -2, "dim2": -1}), Case(((3, 2, 3),), {"offset": -1, "dim1": -3,
              "dim2": -1}))),
    Op("diagonal_backward", "DiagonalBackwardBackward0", _diagonal_backward_forward,
       _diagonal_backward_vjp, _diagonal_backward_shape, saves=NOTHING, batch=None,
       explain="the diagonal of g", public=False, method=False, grows=True,
       cases=(Case(((3,),), {"shape": (3, 3), "offset": 0, "dim1": -2, "dim2": -1}),
              Case(((3, 2),), {"shape": (2, 3, 4), "offset": -1, "dim1": -1, "dim2": -3}))),
    Op("diag_embed", "DiagEmbedBackward0", _diag_embed_forward, _diag_embed_vjp,
       _diag_embed_shape, saves=NOTHING, explain="d diag_embed(v)/dv reads g's diagonal",
       batch=trailing, grows=True, doc="vectors on the diagonal of new matrices",
       prepare=_diag_embed_prepare,
       cases=(Case(((3,),)), Case(((2, 3),), {"offset": 1}),
              Case(((2, 3),), {"offset": -1, "dim1": -3, "dim2": -1}))),
    Op("tril", "TrilBackward0", _tril_forward, _tril_vjp, _triangle_shape("tril"),
       saves=NOTHING, prepare=checked(_triangle_shape("tril")), batch=trailing,
       explain="d tril(A)/dA keeps g's lower triangle",
       language=True, doc="lower triangle (on and below diagonal k)",
       cases=(Case(((3, 3),)), Case(((2, 4),), {"diagonal": 1}), Case(((2, 3, 3),)))),
    Op("triu", "TriuBackward0", _triu_forward, _triu_vjp, _triangle_shape("triu"),
       saves=NOTHING, prepare=checked(_triangle_shape("triu")), batch=trailing,
       explain="d triu(A)/dA keeps g's upper triangle",
       language=True, doc="upper triangle (on and above diagonal k)",
       cases=(Case(((3, 3),)), Case(((4, 2),), {"diagonal": -1}), Case(((2, 3, 3),)))),
    Op("kron", "UnsafeViewBackward0", _kron_forward, _kron_vjp, _kron_shape, arity=2,
       explain="d kron(A,B)/dA[i,j] = sum of g's (i,j) block times B (and so for B)",
       batch=_kron_batch, grows=True, within_operands=True, language=True, doc="Kronecker product",
       cases=(Case(((2, 2), (2, 3))), Case(((3,), (2,))), Case(((2,), (2, 2))),
              Case(((2, 1, 2), (2, 2))))),
)  # fmt: skip
