"""PyTorch functions agrad composes from its ops (engine/composites.py), against PyTorch:
values, the gradient of every differentiable operand, and the bad calls PyTorch refuses.

The calls mirror common PyTorch code: attention scores with bmm/baddbmm, a linear layer
with addmm, Adam-style updates with addcmul/addcdiv, EMA with lerp, k-NN with cdist,
channel-last with movedim, coordinate grids with meshgrid."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
A = RNG.standard_normal((2, 3, 4))
B = RNG.standard_normal((2, 4, 5))
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
C = RNG.standard_normal((3, 5))

# name -> (fn(lib, *tensors), operands); every operand requires grad
CASES = {
    "bmm": (lambda t, a, b: t.bmm(a, b), (A, B)),
    "bmm_method": (lambda t, a, b: a.bmm(b), (A, B)),
    "baddbmm": (lambda t, c, a, b: t.baddbmm(c, a, b, beta=0.5, alpha=2.0), (C, A, B)),
    "addmm": (lambda t, c, m, n: t.addmm(c, m, n), (C, M, N)),
    "addmm_scaled": (lambda t, c, m, n: t.addmm(c[0], m, n, beta=-1.5, alpha=0.25), (C, M, N)),
    "addmm_beta0_ignores_nan": (
        lambda t, c, m, n: t.addmm(c.detach() * float("nan"), m, n, beta=0) + 0 * c,
        (C, M, N),
    ),
    "addmv": (lambda t, c, m, v: t.addmv(c[:, 0], m, v, alpha=3.0), (C, M, V)),
    "addcmul": (lambda t, x, a, b: t.addcmul(x, a, b, value=-0.5), (M, M * 2, M[0])),
    "addcdiv": (lambda t, x, a, b: x.addcdiv(a, b.abs() + 1, value=0.1), (M, M[::-1], M)),
    "lerp_scalar": (lambda t, a, b: t.lerp(a, b, 0.3), (M, M[::-1])),
    "lerp_high_weight": (lambda t, a, b: a.lerp(b, 0.75), (M, M[::-1])),
    "lerp_tensor_weight": (lambda t, a, b, w: t.lerp(a, b, w), (M, M[::-1], np.abs(M) / 3)),
    "narrow": (lambda t, x: x.narrow(1, 1, 2), (M,)),
    "narrow_negative_start": (lambda t, x: t.narrow(x, 0, -2, 2), (M,)),
    "movedim": (lambda t, x: t.movedim(x, 0, -1), (A,)),
    "movedim_many": (lambda t, x: x.movedim((0, 1), (2, 0)), (A,)),
    "moveaxis": (lambda t, x: t.moveaxis(x, -1, 0), (A,)),
    "broadcast_tensors": (lambda t, a, b: sum(t.broadcast_tensors(a, b)), (M, V)),
    "meshgrid_ij": (lambda t, a, b: sum(t.meshgrid(a, b, indexing="ij")), (V, C[0])),
    "meshgrid_xy": (lambda t, a, b: sum(t.meshgrid([a, b], indexing="xy")), (V, C[0])),
    "diff": (lambda t, x: t.diff(x), (M,)),
    "diff_n2_dim0": (lambda t, x: x.diff(n=2, dim=0), (M,)),
    "diff_prepend": (lambda t, x, p: t.diff(x, dim=1, prepend=p), (M, M[:, :1])),
    "cdist": (lambda t, a, b: t.cdist(a, b), (M, N.T)),
    "cdist_p1": (lambda t, a, b: t.cdist(a, b, p=1.0), (M, N.T)),
    "cdist_batched": (lambda t, a, b: t.cdist(a, b), (A, B.transpose(0, 2, 1))),
    "var_mean": (lambda t, x: sum(t.var_mean(x, 1)), (M,)),
    "std_mean_correction0": (lambda t, x: sum(t.std_mean(x, 0, correction=0)), (M,)),
    "aminmax": (lambda t, x: sum(t.aminmax(x, dim=1)), (M,)),
    "aminmax_all": (lambda t, x: t.aminmax(x).max - t.aminmax(x).min, (M,)),
    "deg2rad": (lambda t, x: t.deg2rad(x), (M,)),
    "rad2deg": (lambda t, x: x.rad2deg(), (M,)),
}


def _run(lib, name):
    fn, operands = CASES[name]
    ts = [lib.tensor(np.ascontiguousarray(o), requires_grad=True) for o in operands]
    y = fn(lib, *ts)
    w = lib.tensor(np.sin(np.arange(int(np.prod(y.shape))) + 1.0).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    return y.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name):
    value, grads = _run(agrad, name)
    t_value, t_grads = _run(torch, name)
    np.testing.assert_allclose(value, t_value, rtol=1e-12, atol=1e-12)
    for g, tg in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)


def test_lerp_values_agree_to_an_ulp_and_reach_the_end_exactly():
    """PyTorch computes lerp from the nearer end (its kernel may fuse a multiply-add, so the
    last bits can differ); at weight 1 both give end exactly, where a + w·(b - a) may not."""
    a = RNG.standard_normal(1000) * 1e3
    b = RNG.standard_normal(1000)
    w = RNG.uniform(-0.5, 1.5, 1000)
    mine = agrad.lerp(agrad.tensor(a), agrad.tensor(b), agrad.tensor(w)).numpy()
    theirs = torch.lerp(torch.tensor(a), torch.tensor(b), torch.tensor(w)).numpy()
    scale = np.maximum(np.abs(a), np.abs(b))  # ulps of the operands (the result may cancel)
    assert np.all(np.abs(mine - theirs) <= 1e-15 * scale)
    ends = agrad.lerp(agrad.tensor(a), agrad.tensor(b), 1.0).numpy()
    np.testing.assert_array_equal(ends, b)


def test_cdist_gradient_at_zero_distance_is_finite_as_pytorchs():
    """Two equal rows: distance 0, where sqrt's derivative is infinite. PyTorch's
    gradient there is 0; a composite of sqrt would give nan."""
    rows = np.array([[1.0, 2.0], [0.5, -1.0]])
    for lib in (agrad, torch):
        a = lib.tensor(rows, requires_grad=True)
        lib.cdist(a, lib.tensor(rows)).sum().backward()
        assert np.isfinite(a.grad.numpy()).all()
    a = agrad.tensor(rows, requires_grad=True)
    agrad.cdist(a, agrad.tensor(rows)).sum().backward()
    t = torch.tensor(rows, requires_grad=True)
    torch.cdist(t, torch.tensor(rows)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.0])


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf"])
def test_boolean_tests_match_pytorch(name):
    mine = getattr(agrad, name)(agrad.tensor(SPECIAL))
    theirs = getattr(torch, name)(torch.tensor(SPECIAL))
    assert mine.dtype == agrad.bool
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    np.testing.assert_array_equal(getattr(agrad.tensor(SPECIAL), name)().numpy(), theirs.numpy())


def test_count_nonzero_matches_pytorch():
    x = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, -1.0]])
    for dim in (None, 0, 1, (0, 1)):
        mine = agrad.count_nonzero(agrad.tensor(x), dim=dim)
        theirs = torch.count_nonzero(torch.tensor(x), dim=dim)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        assert mine.dtype == agrad.int64


BAD = {
    "bmm_2d": lambda t: t.bmm(t.tensor(M), t.tensor(N)),
    "bmm_batch": lambda t: t.bmm(t.tensor(A), t.tensor(B[:1])),
    "bmm_inner": lambda t: t.bmm(t.tensor(A), t.tensor(A)),
    "addmm_inner": lambda t: t.addmm(t.tensor(C), t.tensor(M), t.tensor(M)),
    "narrow_too_long": lambda t: t.tensor(M).narrow(1, 3, 2),
    "narrow_start": lambda t: t.tensor(M).narrow(0, 5, 1),
    "narrow_0d": lambda t: t.tensor(1.0).narrow(0, 0, 1),
    "movedim_count": lambda t: t.tensor(A).movedim((0, 1), 2),
    "movedim_repeat": lambda t: t.tensor(A).movedim((0, 0), (1, 2)),
    "movedim_range": lambda t: t.tensor(A).movedim(3, 0),
    "broadcast_tensors": lambda t: t.broadcast_tensors(t.tensor(M), t.tensor(N)),
    "meshgrid_2d": lambda t: t.meshgrid(t.tensor(M), t.tensor(V), indexing="ij"),
    "meshgrid_indexing": lambda t: t.meshgrid(t.tensor(V), indexing="ji"),
    "diff_0d": lambda t: t.diff(t.tensor(1.0)),
    "cdist_1d": lambda t: t.cdist(t.tensor(V), t.tensor(V)),
    "cdist_columns": lambda t: t.cdist(t.tensor(M), t.tensor(N)),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_calls_raise_as_pytorch(name):
    with pytest.raises(Exception) as theirs:
        BAD[name](torch)
    with pytest.raises(Exception) as mine:
        BAD[name](agrad)
    assert isinstance(mine.value, agrad.AgradError), repr(mine.value)
    assert isinstance(mine.value, (RuntimeError, IndexError, ValueError))
    if isinstance(theirs.value, IndexError):
        assert isinstance(mine.value, IndexError)
