"""Linear algebra for matrix calculus: det, slogdet, inv, solve, cholesky.

Each acts on the last two axes (leading ones are a batch), as NumPy's and PyTorch's do, so
the forward is its own batching rule and cotangents with leading Jacobian-row axes flow
through the VJPs unchanged. The VJPs are written with the op table's own ops (inv, solve,
matmul), so ``create_graph=True`` differentiates them again. The complex forwards are the
holomorphic extensions the checker's complex step needs (slogdet's log|det| and
cholesky's factor, which NumPy computes with conjugates).
"""

from __future__ import annotations

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from ..kernels import Array
from .core import INPUTS_AND_OUTPUT, OUTPUT, Op, Saves, register, special
from .windows import checked, trailing


def _square(shape, op: str) -> None:
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise AgradShapeError(
            f"{op}: expects a square matrix (or a batch of them) in the last two dimensions, "
            f"got shape {tuple(shape)}"
        )


def _square_shape(name: str, keep: bool):
    def rule(shape, **_):
        _square(shape, name)
        return tuple(shape) if keep else tuple(shape[:-2])

    return rule


def _mT(ns, x):
    return ns.swapaxes(x, -1, -2)


def _poisoned(x: Array, result: Array, core: int) -> Array:
    """``result`` with every matrix of the batch whose input ``x`` holds a nan made all nan
    (``core``: the result's own trailing axes). Every entry of an inverse, a solution or a
    log-determinant depends on every entry of the matrix; LAPACK may still leave some
    finite, which would be a number from nowhere. PyTorch gives nan throughout."""
    bad = np.isnan(x).any(axis=(-1, -2))
    if not bad.any():
        return result
    return np.where(bad.reshape(bad.shape + (1,) * core), np.nan, result)


def _inverse(ns, x, op: str):
    """inv(x) for a VJP: a singular matrix is an error that says so, not a LinAlgError."""
    try:
        return ns.inv(x)
    except np.linalg.LinAlgError:
        raise AgradValueError(
            f"{op}: the matrix is singular, and agrad computes this gradient through its "
            "inverse; perturb the matrix or check it away from singular points"
        ) from None


# ---- det and slogdet ----------------------------------------------------------------------


def _det_forward(x: Array) -> Array:
    return np.linalg.det(x)


def _det_vjp(ns, g, out, x):
    # d det(A)/dA = det(A)·inv(A)ᵀ, the cofactor matrix; at a singular matrix (no inverse)
    # the cofactors from the SVD, as PyTorch gives them
    if isinstance(x, np.ndarray):
        try:
            inverse = np.linalg.inv(x)
        except np.linalg.LinAlgError:
            return (g[..., None, None] * _cofactors(x),)
        return ((g * out)[..., None, None] * np.swapaxes(inverse, -1, -2),)
    return (((g * out)[..., None, None]) * _mT(ns, _inverse(ns, x, "det")),)


def _cofactors(x: np.ndarray) -> np.ndarray:
    """adj(A)ᵀ from A = U·S·Vᵀ: det(U)·det(V)·U·diag(∏_{j≠i} s_j)·Vᵀ (defined when A is
    singular, where det(A)·inv(A)ᵀ is not)."""
    u, s, vt = np.linalg.svd(x)
    n = s.shape[-1]
    others = np.prod(np.where(np.eye(n, dtype=bool), 1.0, s[..., None, :]), axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return sign[..., None, None] * ((u * others[..., None, :]) @ vt)


def _slogdet_forward(x: Array) -> Array:
    return _poisoned(x, np.linalg.slogdet(x)[1], 0)


def _slogdet_complex(x):
    # log|det| continued holomorphically: log(det(x)·sign(det(Re x))).
    sign = np.sign(np.linalg.det(np.real(x)))
    return np.log(np.linalg.det(x) * sign)


def _slogdet_vjp(ns, g, out, x):
    # d log|det(A)|/dA = inv(A)ᵀ
    inverse = _inverse(ns, x, "slogdet")
    if isinstance(inverse, np.ndarray):
        inverse = _poisoned(x, inverse, 2)
    return (g[..., None, None] * _mT(ns, inverse),)


# ---- inv and solve ------------------------------------------------------------------------


def _inv_forward(x: Array) -> Array:
    return _poisoned(x, np.linalg.inv(x), 2)


def _inv_vjp(ns, g, out, x):
    # d inv(A) = -inv(A)·dA·inv(A): the VJP is -inv(A)ᵀ·g·inv(A)ᵀ
    t = _mT(ns, out)
    return (-ns.matmul(ns.matmul(t, g), t),)


def _is_vector(a_shape, b_shape) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-D, or has A's batch shape
    and one dimension less than A."""
    return len(b_shape) == 1 or tuple(b_shape) == tuple(a_shape[:-1])


def _solve_forward(a: Array, b: Array, vector: bool | None = None) -> Array:
    if vector is None:
        vector = _is_vector(np.shape(a), np.shape(b))
    if vector:
        return _poisoned(a, np.linalg.solve(a, np.asarray(b)[..., None])[..., 0], 1)
    return _poisoned(a, np.linalg.solve(a, b), 2)


def _solve_vjp(ns, g, out, a, b, vector=False):
    # x = inv(A)·B: gB = inv(A)ᵀ·g, gA = -gB·xᵀ
    try:
        gb = ns.solve(_mT(ns, a), g, vector)
    except np.linalg.LinAlgError:
        raise AgradValueError("solve: the matrix is singular; its gradient is undefined") from None
    if isinstance(gb, np.ndarray):
        gb = _poisoned(a, gb, 1 if vector else 2)
    if vector:
        return -(gb[..., :, None] * out[..., None, :]), gb
    return -ns.matmul(gb, _mT(ns, out)), gb


def _solve_shape(a, b, vector=None):
    _square(a, "solve")
    if vector is None:
        vector = _is_vector(a, b)
    core = 1 if vector else 2
    if len(b) < core or b[-core] != a[-1]:
        raise AgradShapeError(
            f"solve: A of shape {tuple(a)} and B of shape {tuple(b)} do not match: B's "
            f"{'last' if vector else 'second-to-last'} dimension must be {a[-1]}"
        )
    try:
        lead = np.broadcast_shapes(tuple(a[:-2]), tuple(b[: len(b) - core]))
    except ValueError:
        raise AgradShapeError(
            f"solve: the batch dimensions of {tuple(a)} and {tuple(b)} cannot be broadcast"
        ) from None
    return tuple(lead) + tuple(b[len(b) - core :])


def _solve_prepare(a, b, vector=None):
    if vector is None:
        vector = _is_vector(np.shape(a), np.shape(b))
    _solve_shape(np.shape(a), np.shape(b), vector)
    return {"vector": bool(vector)}


def _solve_batch(op, values, params, size):
    """A batched operand gains singleton axes after the batch axis, so that its matrix-batch
    axes line up with the other operand's (NumPy aligns them from the right)."""
    (a, ba), (b, bb) = values
    core_b = 1 if params["vector"] else 2
    lead = max(a.ndim - ba - 2, b.ndim - bb - core_b)
    if ba:
        a = a.reshape(a.shape[:1] + (1,) * (lead - (a.ndim - 3)) + a.shape[1:])
    if bb:
        b = b.reshape(b.shape[:1] + (1,) * (lead - (b.ndim - 1 - core_b)) + b.shape[1:])
    if bb and not ba:  # a stack of vectors with no stack of matrices: keep b's axes aligned
        a = a.reshape((1,) * (b.ndim - core_b - (a.ndim - 2)) + a.shape)
    return op.forward(a, b, params["vector"])


# ---- cholesky ---------------------------------------------------------------------------------


def _symmetric(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def _cholesky_forward(x: Array, upper: bool = False) -> Array:
    # The factor of the symmetric part: for a symmetric input (the only valid one) that is
    # PyTorch's value, and its derivative is then the symmetric gradient PyTorch gives.
    if not np.isfinite(x).all():  # NumPy would factor a nan; PyTorch refuses it (and inf)
        raise AgradValueError(
            "the matrix holds inf or nan, so it is not positive-definite; "
            "check the input for overflow or missing values"
        )
    factor = np.linalg.cholesky(_symmetric(x))
    return np.swapaxes(factor, -1, -2) if upper else factor


def _cholesky_complex(x, upper: bool = False):
    """The unblocked Cholesky algorithm without conjugates (holomorphic in x)."""
    a = _symmetric(np.asarray(x, dtype=complex))
    n = a.shape[-1]
    factor = np.zeros_like(a)
    for j in range(n):
        row = factor[..., j, :j]
        pivot = np.sqrt(a[..., j, j] - np.sum(row * row, axis=-1))
        factor[..., j, j] = pivot
        below = a[..., j + 1 :, j] - np.sum(factor[..., j + 1 :, :j] * row[..., None, :], axis=-1)
        factor[..., j + 1 :, j] = below / pivot[..., None]
    return np.swapaxes(factor, -1, -2) if upper else factor


def _cholesky_vjp(ns, g, out, x, upper=False):
    # A = L·Lᵀ: S = L⁻ᵀ·Φ(Lᵀ·ḡ)·L⁻¹ with Φ the lower triangle, diagonal halved; gA = (S+Sᵀ)/2
    factor, g_factor = (_mT(ns, out), _mT(ns, g)) if upper else (out, g)
    eye = np.eye(x.shape[-1], dtype=x.dtype)
    p = ns.matmul(_mT(ns, factor), g_factor)
    phi = ns.tril(p, -1) + 0.5 * (p * eye)
    inverse = ns.inv(factor)
    s = ns.matmul(ns.matmul(_mT(ns, inverse), phi), inverse)
    return (0.5 * (s + _mT(ns, s)),)


# ---- test values: well-conditioned, and symmetric positive definite -----------------------


def _uniform(shape, seed):
    """Values spread over (-1, 1) like uniform draws, from a Weyl sequence: made at import,
    they must not need numpy.random (see engine.generator)."""
    k = np.arange(1, int(np.prod(shape)) + 1) + 100 * seed
    return (np.modf(k * 0.6180339887498949 + seed * 0.41421356237309515)[0] * 2 - 1).reshape(shape)


def _general(*shape, seed=0):
    return _uniform(shape, seed) + 1.5 * np.eye(shape[-1])


def _spd(*shape, seed=0):
    m = _uniform(shape, seed)
    return m @ np.swapaxes(m, -1, -2) + np.eye(shape[-1])


GENERAL = (special(_general(2, 2)), special(_general(3, 3, seed=1)),
           special(_general(2, 3, 3, seed=2)))  # fmt: skip
# Seed 3 for the 2x2: its inverse rounds to an exactly symmetric matrix, as a symmetric
# one's should, so a transposed gradient is recognised as the no-op it is here.
SPD = (special(_spd(2, 2, seed=3)), special(_spd(3, 3, seed=1)), special(_spd(2, 3, 3, seed=2)))
UPPER = (special(_spd(3, 3, seed=4), upper=True),)
SOLVE = (special(_general(3, 3), [0.5, -1.0, 2.0]),
         special(_general(3, 3, seed=1), np.arange(6.0).reshape(3, 2) - 2.5),
         special(_general(2, 3, 3, seed=2), [[1.0, 0.5, -1.0], [0.3, 2.0, 1.0]]),
         special(_general(2, 2, seed=3), [[1.0, -0.5], [0.25, 2.0]], vector=False))  # fmt: skip

_SHAPES = {name: _square_shape(name, keep) for name, keep in
           (("det", False), ("slogdet", False), ("inv", True), ("cholesky", True))}  # fmt: skip
register(
    Op("det", "LinalgDetBackward0", _det_forward, _det_vjp, _SHAPES["det"],
       prepare=checked(_SHAPES["det"]),
       saves=INPUTS_AND_OUTPUT, explain="d det(A)/dA = det(A)·inv(A)ᵀ", batch=trailing,
       language=True, doc="determinant (of the last two axes)", cases=GENERAL),
    Op("slogdet", "LinalgSlogdetBackward0", _slogdet_forward, _slogdet_vjp,
       _SHAPES["slogdet"], prepare=checked(_SHAPES["slogdet"]),
       explain="d log|det(A)|/dA = inv(A)ᵀ", batch=trailing,
       complex_forward=_slogdet_complex, public="slogdet",
       doc="log of the determinant's absolute value", cases=GENERAL + SPD[:1]),
    Op("inv", "LinalgInvExBackward0", _inv_forward, _inv_vjp, _SHAPES["inv"],
       prepare=checked(_SHAPES["inv"]),
       saves=OUTPUT, explain="d inv(A) = -inv(A)·dA·inv(A): gA = -inv(A)ᵀ·g·inv(A)ᵀ",
       batch=trailing, public="inverse", language="inv", doc="matrix inverse", cases=GENERAL),
    Op("solve", "LinalgSolveExBackward0", _solve_forward, _solve_vjp, _solve_shape, arity=2,
       saves=Saves((0,), True), explain="x = inv(A)·B: gB = inv(A)ᵀ·g, gA = -gB·xᵀ",
       prepare=_solve_prepare, batch=_solve_batch, method=False,
       doc="x with A·x = B (B a vector or a matrix)", cases=SOLVE),
    Op("cholesky", "LinalgCholeskyExBackward0", _cholesky_forward, _cholesky_vjp,
       _SHAPES["cholesky"], prepare=checked(_SHAPES["cholesky"]),
       saves=OUTPUT, batch=trailing,
       explain="A = L·Lᵀ: gA = sym(L⁻ᵀ·Φ(Lᵀ·ḡ)·L⁻¹), Φ the lower triangle, diagonal halved",
       complex_forward=_cholesky_complex, language=True,
       doc="lower Cholesky factor of a symmetric positive-definite matrix", cases=SPD + UPPER),
)  # fmt: skip
