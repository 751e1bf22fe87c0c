"""agrad.nn.functional's further losses and distances (nn/losses_more.py) against PyTorch:
values and the gradients to every operand that takes one (targets included), for each
reduction, at points on their edges (|d| = delta, margins hit exactly, zero targets, a
zero vector for the cosine, variances below eps), in float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3))
P = np.abs(RNG.standard_normal((4, 3))) + 0.1  # positive
LOGP = np.log(np.full((4, 3), 1 / 3))
SIGN = np.array([1.0, -1.0, 1.0, -1.0])
EDGE = X.copy()
EDGE[0, 0], EDGE[1, 1] = Y[0, 0] + 1.0, Y[1, 1] - 1.0  # |d| == delta == 1 exactly
ZERO_ROW = X.copy()
ZERO_ROW[2] = 0.0
SMALL_VAR = P.copy()
SMALL_VAR[0, :] = 1e-9  # below eps: clamped for the value, the gradient passes

# name -> (fn(F, *tensors), operands, which operands require grad)
CASES = {
    "kl_div_batchmean": (lambda F, x, t: F.kl_div(x, t, reduction="batchmean"),
                         (LOGP + X * 0.1, P / P.sum(1, keepdims=True)), (0, 1)),
    "kl_div_zero_target": (lambda F, x, t: F.kl_div(x, t * (t > 0.5), reduction="sum"),
                           (LOGP, P), (0,)),
    "kl_div_log_target": (lambda F, x, t: F.kl_div(x, t, reduction="none", log_target=True),
                          (LOGP + X * 0.1, LOGP), (0, 1)),
    "kl_div_mean": (lambda F, x, t: F.kl_div(x, t), (X, P), (0, 1)),
    "huber": (lambda F, x, y: F.huber_loss(x, y), (X, Y), (0, 1)),
    "huber_edges": (lambda F, x, y: F.huber_loss(x, y, reduction="sum"), (EDGE, Y), (0, 1)),
    "huber_delta": (lambda F, x, y: F.huber_loss(x, y, reduction="none", delta=0.3), (X, Y), (0,)),
    "poisson_nll": (lambda F, x, t: F.poisson_nll_loss(x, t), (X, P * 3), (0, 1)),
    "poisson_nll_full": (lambda F, x, t: F.poisson_nll_loss(x, t, full=True, reduction="sum"),
                         (X, P * 3), (0, 1)),
    "poisson_nll_rates": (lambda F, x, t: F.poisson_nll_loss(x, t, log_input=False),
                          (P, P[::-1] * 2), (0, 1)),
    "gaussian_nll": (lambda F, x, t, v: F.gaussian_nll_loss(x, t, v), (X, Y, P), (0, 1, 2)),
    "gaussian_nll_small_var": (lambda F, x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
                               (X, Y, SMALL_VAR), (0, 1, 2)),
    "gaussian_nll_per_sample": (lambda F, x, t, v: F.gaussian_nll_loss(x, t, v[:, 0]),
                                (X, Y, P), (0, 1, 2)),
    "soft_margin": (lambda F, x, y: F.soft_margin_loss(x, y), (X, np.sign(Y)), (0,)),
    "margin_ranking": (lambda F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.2),
                       (X[:, 0], X[:, 1], SIGN), (0, 1)),
    "margin_ranking_at_margin": (lambda F, a, b, y: F.margin_ranking_loss(a, b, y, 0.5),
                                 (np.array([1.0, 2.0]), np.array([0.5, 2.5]),
                                  np.array([1.0, -1.0])), (0, 1)),
    "hinge_embedding": (lambda F, x, y: F.hinge_embedding_loss(x, y, reduction="sum"),
                        (X[:, 0] + 0.5, SIGN), (0,)),
    "cosine_embedding": (lambda F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1),
                         (X, Y, SIGN), (0, 1)),
    "cosine_similarity": (lambda F, a, b: F.cosine_similarity(a, b), (X, Y), (0, 1)),
    "cosine_similarity_zero_row": (lambda F, a, b: F.cosine_similarity(a, b, dim=1),
                                   (ZERO_ROW, Y), (0, 1)),
    "cosine_similarity_dim0": (lambda F, a, b: F.cosine_similarity(a, b[0], dim=0),
                               (X, Y), (0, 1)),
    "pairwise_distance": (lambda F, a, b: F.pairwise_distance(a, b), (X, Y), (0, 1)),
    "pairwise_distance_p1": (lambda F, a, b: F.pairwise_distance(a, b, p=1, keepdim=True),
                             (X, Y), (0, 1)),
    "triplet_margin": (lambda F, a, p, n: F.triplet_margin_loss(a, p, n), (X, Y, X[::-1]),
                       (0, 1, 2)),
    "triplet_margin_swap": (lambda F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True,
                                                                      reduction="none"),
                            (X, Y, X[::-1] * 0.5), (0, 1, 2)),
}  # fmt: skip


def _run(lib, name, dtype):
    fn, operands, wanted = CASES[name]
    ts = [
        lib.tensor(np.ascontiguousarray(o), dtype=getattr(lib, dtype), requires_grad=k in wanted)
        for k, o in enumerate(operands)
    ]
    y = fn(lib.nn.functional, *ts)
    w = lib.tensor(np.cos(np.arange(y.numel()) + 0.3).reshape(tuple(y.shape)), dtype=y.dtype)
    (y * w).sum().backward()
    return y.detach().numpy(), [ts[k].grad.numpy() for k in wanted]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name, dtype):
    value, grads = _run(agrad, name, dtype)
    t_value, t_grads = _run(torch, name, dtype)
    tol = 1e-10 if dtype == "float64" else 3e-5
    np.testing.assert_allclose(value, t_value, rtol=tol, atol=tol)
    for g, tg in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(g, tg, rtol=tol, atol=tol)


def test_gaussian_nll_refuses_negative_or_misshapen_variance_as_pytorch():
    for lib in (agrad, torch):
        F = lib.nn.functional
        x = lib.tensor(X)
        with pytest.raises(ValueError, match="negative"):
            F.gaussian_nll_loss(x, x, -lib.tensor(P))
        with pytest.raises(ValueError, match="incorrect size"):
            F.gaussian_nll_loss(x, x, lib.tensor(P[:, :2]))


MODULES = [
    ("KLDivLoss", {"reduction": "batchmean"}, (LOGP, P / P.sum(1, keepdims=True))),
    ("HuberLoss", {"delta": 0.5}, (X, Y)),
    ("PoissonNLLLoss", {}, (X, P)),
    ("GaussianNLLLoss", {}, (X, Y, P)),
    ("SoftMarginLoss", {}, (X, np.sign(Y))),
    ("MarginRankingLoss", {"margin": 0.1}, (X[:, 0], X[:, 1], SIGN)),
    ("HingeEmbeddingLoss", {}, (X[:, 0], SIGN)),
    ("CosineEmbeddingLoss", {}, (X, Y, SIGN)),
    ("TripletMarginLoss", {"margin": 0.5}, (X, Y, X[::-1])),
    ("CosineSimilarity", {"dim": 1}, (X, Y)),
    ("PairwiseDistance", {}, (X, Y)),
]


@pytest.mark.parametrize("name,kwargs,operands", MODULES)
def test_loss_modules_match_pytorch(name, kwargs, operands):
    operands = [np.ascontiguousarray(o) for o in operands]
    mine = getattr(agrad.nn, name)(**kwargs)(*(agrad.tensor(o) for o in operands))
    theirs = getattr(torch.nn, name)(**kwargs)(*(torch.tensor(o) for o in operands))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert repr(getattr(agrad.nn, name)(**kwargs)) == repr(getattr(torch.nn, name)(**kwargs))
