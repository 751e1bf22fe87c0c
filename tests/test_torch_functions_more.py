"""engine/arranging.py, statistics.py and numeric.py against PyTorch: values and the
gradients of every floating operand, for call forms real code uses (stacking feature
columns, medians and quantiles of a batch, running maxima, trapezoid integrals, Adam's
addcmul_/addcdiv_, EMA's lerp_, masked_fill_ of attention scores, tensordot/cross of
physics code), at ties, nan and 0-d where PyTorch defines them."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((3, 4))
V = RNG.standard_normal(4)
Q = RNG.standard_normal((3, 3))
T3 = RNG.standard_normal((2, 3, 4))
WITH_NAN = M.copy()
WITH_NAN[1, 2] = np.nan

CASES = {
    "hstack": (lambda t, a, b: t.hstack([a, b]), (M, N)),
    "hstack_1d": (lambda t, a, b: t.hstack((a, b)), (V, V[::-1])),
    "vstack": (lambda t, a, b: t.vstack([a, b]), (M, V)),
    "row_stack": (lambda t, a, b: t.row_stack([a, b]), (M, N)),
    "dstack": (lambda t, a, b: t.dstack([a, b]), (M, N)),
    "column_stack": (lambda t, a, b: t.column_stack([a, b]), (M[:, 0], N)),
    "atleast_2d": (lambda t, a: t.atleast_2d(a), (V,)),
    "atleast_3d": (lambda t, a: t.atleast_3d(a), (M,)),
    "atleast_3d_1d": (lambda t, a: t.atleast_3d(a), (V,)),
    "block_diag": (lambda t, a, b, c: t.block_diag(a, b, c), (M, V, Q[0, 0])),
    "unflatten": (lambda t, a: a.unflatten(1, (2, -1)), (M,)),
    "ravel": (lambda t, a: t.ravel(a.t()), (M,)),
    "swapdims": (lambda t, a: t.swapdims(a, 0, 2), (T3,)),
    "rot90": (lambda t, a: t.rot90(a), (M,)),
    "rot90_k3": (lambda t, a: a.rot90(3, [1, 0]), (M,)),
    "rot90_k2": (lambda t, a: t.rot90(a, 2, (0, 2)), (T3,)),
    "fliplr": (lambda t, a: t.fliplr(a), (M,)),
    "flipud": (lambda t, a: a.flipud(), (M,)),
    "repeat_interleave": (lambda t, a: a.repeat_interleave(2), (M,)),
    "repeat_interleave_dim": (lambda t, a: t.repeat_interleave(a, t.tensor([1, 0, 3]), dim=0),
                              (M,)),
    "take": (lambda t, a: t.take(a, t.tensor([[0, -1], [5, 5]])), (M,)),
    "median_all": (lambda t, a: t.median(a), (M,)),
    "median_ties": (lambda t, a: t.median(a), (np.array([1.0, 2.0, 2.0, 3.0, 2.0]),)),
    "median_dim": (lambda t, a: a.median(1).values, (M,)),
    "median_dim_keep": (lambda t, a: t.median(a, 0, keepdim=True)[0], (M,)),
    "median_nan": (lambda t, a: t.median(a), (WITH_NAN,)),
    "median_nan_dim": (lambda t, a: a.median(dim=1).values, (WITH_NAN,)),
    "kthvalue": (lambda t, a: t.kthvalue(a, 2, 1).values, (M,)),
    "kthvalue_keep": (lambda t, a: a.kthvalue(3, dim=0, keepdim=True).values, (M,)),
    "quantile": (lambda t, a: t.quantile(a, 0.3), (M,)),
    "quantile_dim": (lambda t, a: t.quantile(a, t.tensor([0.1, 0.5, 1.0], dtype=a.dtype), dim=1),
                     (M,)),
    "quantile_keep": (lambda t, a: a.quantile(0.75, dim=0, keepdim=True), (M,)),
    "quantile_nearest": (lambda t, a: t.quantile(a, 0.4, dim=1, interpolation="nearest"), (M,)),
    "quantile_midpoint": (lambda t, a: t.quantile(a, 0.4, interpolation="midpoint"), (M,)),
    "quantile_nan": (lambda t, a: t.quantile(a, 0.5, dim=1), (WITH_NAN,)),
    "nansum": (lambda t, a: t.nansum(a), (WITH_NAN,)),
    "nansum_dim": (lambda t, a: a.nansum(1), (WITH_NAN,)),
    "nanmean": (lambda t, a: t.nanmean(a, 0), (WITH_NAN,)),
    "cummax": (lambda t, a: t.cummax(a, 1).values, (M,)),
    "cummax_ties": (lambda t, a: t.cummax(a, 0).values,
                    (np.array([1.0, 3.0, 3.0, 2.0, 5.0, 5.0]),)),
    "cummin": (lambda t, a: a.cummin(0).values, (M,)),
    "cummax_nan": (lambda t, a: t.cummax(a, 1).values, (WITH_NAN,)),
    "logcumsumexp": (lambda t, a: t.logcumsumexp(a * 300, 1), (M,)),
    "trapezoid": (lambda t, a: t.trapezoid(a), (M,)),
    "trapz_dx": (lambda t, a: t.trapz(a, dx=0.5, dim=0), (M,)),
    "trapezoid_x": (lambda t, a, x: t.trapezoid(a, x), (M, np.cumsum(np.abs(V)))),
    "cumulative_trapezoid": (lambda t, a: t.cumulative_trapezoid(a), (M,)),
    "clamp_min": (lambda t, a: t.clamp_min(a, 0.1), (M,)),
    "clamp_max": (lambda t, a: a.clamp_max(0.2), (M,)),
    "divide": (lambda t, a, b: t.divide(a, b), (M, N)),
    "divide_trunc": (lambda t, a, b: a.divide(b, rounding_mode="trunc") * a, (M, N)),
    "true_divide": (lambda t, a, b: t.true_divide(a, b), (M, N)),
    "float_power": (lambda t, a, b: t.float_power(a.abs() + 1, b), (M, N)),
    "fmax": (lambda t, a, b: t.fmax(a, b), (WITH_NAN, N)),
    "fmin_ties": (lambda t, a, b: a.fmin(b), (M, M)),
    "sinc": (lambda t, a: t.sinc(a), (np.array([0.0, 0.5, -1.0, 1e-3, 2.5]),)),
    "dist": (lambda t, a, b: t.dist(a, b), (M, N)),
    "dist_p1": (lambda t, a, b: a.dist(b, 1), (M, N)),
    "tensordot": (lambda t, a, b: t.tensordot(a, b, dims=([1], [1])), (M, N)),
    "tensordot_int": (lambda t, a, b: t.tensordot(a, b, 2), (T3, M)),
    "vdot": (lambda t, a, b: t.vdot(a, b), (V, V[::-1])),
    "inner": (lambda t, a, b: t.inner(a, b), (M, N)),
    "cross": (lambda t, a, b: t.cross(a, b, dim=1), (Q, Q[::-1])),
    "linalg_cross": (lambda t, a, b: t.linalg.cross(a, b), (Q, Q[::-1])),
    "matrix_power": (lambda t, a: t.matrix_power(a, 3), (Q,)),
    "matrix_power_neg": (lambda t, a: t.linalg.matrix_power(a + 3 * t.eye(3, dtype=a.dtype), -2),
                         (Q,)),
    "index_fill": (lambda t, a: a.index_fill(1, t.tensor([0, 2]), -1.5), (M,)),
    "index_copy": (lambda t, a, b: a.index_copy(0, t.tensor([2, 0]), b[:2]), (M, N)),
    "index_put": (lambda t, a, b: a.index_put((t.tensor([0, 2]), t.tensor([1, 1])), b[0, :2]),
                  (M, N)),
    "unfold": (lambda t, a: a.unfold(1, 2, 1), (M,)),
    "unfold_step": (lambda t, a: a.unfold(2, 3, 2), (T3,)),
    "unfold_dim0": (lambda t, a: a.unfold(0, 2, 1).sin(), (T3,)),
    "sum_to_size": (lambda t, a: a.sum_to_size(1, 4), (M,)),
    "sum_to_size_lead": (lambda t, a: a.sum_to_size(3, 1), (T3[0],)),
    "fill_diagonal_": (lambda t, a: (a * 1).fill_diagonal_(2.5), (M,)),
    "fill_diagonal_wrap": (lambda t, a: t.cat([a, a, a]).fill_diagonal_(-1.0, wrap=True), (M,)),
    "index_put_acc": (lambda t, a, b: a.index_put((t.tensor([0, 0, 2]),), b, accumulate=True),
                      (M, N)),
}  # fmt: skip


def _run(lib, name):
    fn, operands = CASES[name]
    ts = [lib.tensor(np.ascontiguousarray(o), requires_grad=True) for o in operands]
    y = fn(lib, *ts)
    w = lib.tensor(np.cos(np.arange(y.numel()) + 0.7).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    return y.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in ts]


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name):
    value, grads = _run(agrad, name)
    t_value, t_grads = _run(torch, name)
    np.testing.assert_allclose(value, t_value, rtol=1e-10, atol=1e-12)
    for g, tg in zip(grads, t_grads, strict=True):
        if tg is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)


INDEXED = {
    "median_dim": lambda t, a: t.median(a, 1).indices,
    "median_nan_dim": lambda t, a: t.median(a, 1).indices,
    "kthvalue": lambda t, a: t.kthvalue(a, 2, 0).indices,
    "cummax": lambda t, a: t.cummax(a, 1).indices,
    "cummin_ties": lambda t, a: t.cummin(a.round(), 1).indices,
    "cummax_nan": lambda t, a: t.cummax(a, 1).indices,
    "unique": lambda t, a: t.unique(a.round(), return_inverse=True, return_counts=True)[1],
    "unique_values": lambda t, a: t.unique(a.round()),
    "searchsorted": lambda t, a: t.searchsorted(t.tensor([-1.0, 0.0, 0.5, 2.0]), a),
    "searchsorted_right": lambda t, a: t.searchsorted(t.tensor([-1.0, 0.0, 1.0]), a.round(),
                                                      right=True),
    "bucketize": lambda t, a: t.bucketize(a, t.tensor([-0.5, 0.0, 0.5])),
    "isin": lambda t, a: t.isin(a.round(), t.tensor([0.0, 1.0])),
    "tril_indices": lambda t, a: t.tril_indices(3, 4, 1),
    "triu_indices": lambda t, a: t.triu_indices(4, 3, -1),
    "signbit": lambda t, a: t.signbit(a),
    "repeat_counts": lambda t, a: t.repeat_interleave(t.tensor([2, 0, 1])),
}  # fmt: skip


@pytest.mark.parametrize("name", list(INDEXED))
def test_integer_and_boolean_results_match_pytorch(name):
    data = WITH_NAN if "nan" in name else M
    mine = INDEXED[name](agrad, agrad.tensor(data))
    theirs = INDEXED[name](torch, torch.tensor(data))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert str(mine.dtype) == str(theirs.dtype)


def test_inplace_methods_match_pytorch():
    """Adam's update (addcmul_, addcdiv_), an EMA (lerp_), attention masking (masked_fill_)
    and the index writers, on non-leaf tensors; gradients through them to the leaves."""
    outs = []
    for lib in (agrad, torch):
        x = lib.tensor(M, requires_grad=True)
        g = lib.tensor(N, requires_grad=True)
        m = x * 1.0
        m.addcmul_(g, g, value=0.1)
        m.addcdiv_(g, g.abs() + 1, value=-0.5)
        m.lerp_(g, 0.9)
        m.lerp_(x, lib.full_like(x, 0.25))
        m.masked_fill_(x > 1.0, -2.0)
        m.index_fill_(1, lib.tensor([3]), 0.5)
        m.index_copy_(0, lib.tensor([1]), g[:1] * 3)
        m.index_put_((lib.tensor([0]), lib.tensor([0])), g[2, 2], accumulate=True)
        (m * m).sum().backward()
        outs.append((m.detach().numpy(), x.grad.numpy(), g.grad.numpy()))
    for mine, theirs in zip(*outs, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_conversions_and_layout_methods_match_pytorch():
    x, tx = agrad.tensor(M), torch.tensor(M)
    for view in (lambda t: t, lambda t: t.t(), lambda t: t[:, ::2], lambda t: t.unsqueeze(1)):
        assert view(x).stride() == view(tx).stride()
    assert x.stride(-1) == tx.stride(-1) and x.ndimension() == tx.ndimension()
    for name in ("byte", "char", "short"):
        assert str(getattr(x, name)().dtype) == str(getattr(tx, name)().dtype)
        np.testing.assert_array_equal(getattr(x, name)().numpy(), getattr(tx, name)().numpy())
    assert x.float().element_size() == tx.float().element_size() == 4


def test_type_as_and_is_floating_point():
    x = agrad.tensor(M)
    assert x.type_as(agrad.ones(1, dtype=agrad.float32)).dtype == agrad.float32
    assert x.is_floating_point() and not agrad.tensor([1, 2]).is_floating_point()


def test_both_refuse_backward_after_addcdiv_overwrites_a_saved_value():
    for lib in (agrad, torch):
        x = lib.tensor(M, requires_grad=True)
        m = x * 1.0
        m.addcdiv_(lib.tensor(N), m.abs() + 1, value=-0.5)  # abs saved m; addcdiv_ writes m
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            m.sum().backward()


BAD = {
    "take_out_of_range": lambda t: t.take(t.tensor(M), t.tensor([12])),
    "kthvalue_k": lambda t: t.kthvalue(t.tensor(M), 5, 1),
    "rot90_dims": lambda t: t.rot90(t.tensor(M), 1, [0, 0]),
    "rot90_1d": lambda t: t.rot90(t.tensor(V)),
    "fliplr_1d": lambda t: t.fliplr(t.tensor(V)),
    "unflatten": lambda t: t.tensor(M).unflatten(1, (3, 2)),
    "block_diag_3d": lambda t: t.block_diag(t.tensor(T3)),
    "quantile_q": lambda t: t.quantile(t.tensor(M), 1.5),
    "tensordot_sizes": lambda t: t.tensordot(t.tensor(M), t.tensor(Q), dims=([1], [0])),
    "cross_size": lambda t: t.cross(t.tensor(M), t.tensor(M), dim=1),
    "matrix_power_shape": lambda t: t.matrix_power(t.tensor(M), 2),
    "repeat_interleave_size": lambda t: t.repeat_interleave(t.tensor(M), t.tensor([1, 2]), 0),
    "divide_mode": lambda t: t.divide(t.tensor(M), 2.0, rounding_mode="round"),
    "unfold_size": lambda t: t.tensor(M).unfold(1, 5, 1),
    "unfold_step": lambda t: t.tensor(M).unfold(1, 2, 0),
    "sum_to_size": lambda t: t.tensor(M).sum_to_size(2, 4),
    "fill_diagonal_1d": lambda t: t.tensor(V).fill_diagonal_(1.0),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_calls_raise_as_pytorch(name):
    with pytest.raises(Exception) as theirs:
        BAD[name](torch)
    with pytest.raises(Exception) as mine:
        BAD[name](agrad)
    assert isinstance(mine.value, agrad.AgradError), repr(mine.value)
    if isinstance(theirs.value, IndexError):
        assert isinstance(mine.value, IndexError)
