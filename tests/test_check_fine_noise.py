"""Factors frozen over fine steps, and failures seen at coarse steps only, at large offsets.

1. A factor quantized far coarser than f's own rounding, frozen over fine steps:
   GELU-tanh 0.5·x·(1 + tanh(u)) at x ≈ -6.5, where 1 + tanh(u) is ~1e-11 in quanta of
   1.1e-16. Over steps finer than a quantum's width f is exactly 0.5·(1 + tanh(u))·x, so
   the differences give the slope of a gradient that forgets the product rule: that wrong
   gradient passed and the right one failed as "the rule is wrong" (QA round 36, F1).
2. Features at a large offset (a layer norm of rows N(0, 1) + 1e5 ... 1e7): f curves over 1
   while its noise (x - mean(x) rounds to 1e-10) is unknown to the ladder. Right Jacobians
   may be undecided there (QA round 34, F1: measuring that noise from the probe's finest
   spacing was tried on 2026-12-08 and removed the same day: it took fine features,
   a 1e-8 triangle wave beside sin(x), for noise too, and wrong claims passed, QA round
   37), but never fail; wrong ones never pass. A failure seen only at steps above 1 is
   doubted by steps below 1; at steps of an ulp of x the mean freezes and f's slope is
   the wrong Jacobian's, so they do not confirm it: undecided, and said so.
3. Fine features beside a smooth f (sin(x) + 1e-8·sin(1e6·x) at 82): the ladder settles
   on sin's slope at steps of 3e-4, where the feature is jitter of 1e-5; estimates settled
   below 2^-10 at |x| below 1024 were not confirmed at finer steps (to save evaluations),
   and a claim forgetting the feature's 1e-2 passed (QA round 37).

Oracle: algebra (the layer norm's Jacobian in closed form; GELU's derivative), and the
known-wrong gradients below, each wrong by far more than the tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from agrad.check import check_numpy

EPS = 1e-5


def _layer_norm(x):
    c = x - x.mean(axis=-1, keepdims=True)
    return c / np.sqrt((c**2).mean(axis=-1, keepdims=True) + EPS)


def _layer_norm_jacobian(x, mean_term=True, scale=1.0):
    """d out[r, i] / d x[s, j], (rows, n, rows, n): zero across rows."""
    rows, n = x.shape
    c = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((c**2).mean(axis=-1, keepdims=True) + EPS)
    xhat = c * rstd
    jac = np.zeros((rows, n, rows, n))
    for r in range(rows):
        block = np.eye(n) - (1.0 / n if mean_term else 0.0) - np.outer(xhat[r], xhat[r]) / n
        jac[r, :, r, :] = scale * rstd[r, 0] * block
    return jac


def _verdict(f, grad, x) -> str:
    return check_numpy(f, grad, {"x": x}).variables["x"].verdict


def _rows(seed: int, offset: float) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((3, 6)) + offset


@pytest.mark.parametrize("offset", [1e5, 1e6])
def test_a_layer_norm_jacobian_at_a_large_offset_never_fails(offset):
    verdicts = [_verdict(_layer_norm, _layer_norm_jacobian, _rows(s, offset)) for s in range(12)]
    assert "fail" not in verdicts


@pytest.mark.parametrize("offset", [1e5, 1e6, 1e7])
@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(lambda x: _layer_norm_jacobian(x, mean_term=False), id="forgets-the-mean"),
        pytest.param(lambda x: _layer_norm_jacobian(x, scale=1 + 1e-4), id="1e-4-off"),
    ],
)
def test_a_wrong_layer_norm_jacobian_at_a_large_offset_never_passes(offset, wrong):
    for seed in range(3):
        assert _verdict(_layer_norm, wrong, _rows(seed, offset)) != "pass"


K = 0.7978845608028654  # sqrt(2/pi)


def _gelu(x):
    return np.sum(0.5 * x * (1 + np.tanh(K * (x + 0.044715 * x**3))))


def _gelu_grad(x):
    t = np.tanh(K * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * 0.044715 * x**2)


def _gelu_grad_without_product_rule(x):
    return 0.5 * (1 + np.tanh(K * (x + 0.044715 * x**3)))


# Where 1 + tanh(u) is 1e-11 to 1e-12: quantized at 1.1e-16, its stairs narrower than the
# ladder's first step (at -7 and below they are wider: every step sees one stair, the
# differences cannot tell, and the gradients are below 1e-13; left as they are)
SATURATED = [-6.3, -6.4503, -6.52944572, -6.55, -6.6]


@pytest.mark.parametrize("x", SATURATED)
def test_a_gelu_gradient_that_forgets_the_product_rule_never_passes(x):
    assert _verdict(_gelu, _gelu_grad_without_product_rule, np.array([x])) != "pass"


@pytest.mark.parametrize("x", SATURATED)
def test_the_right_gelu_gradient_is_not_failed_where_a_factor_is_quantized(x):
    assert _verdict(_gelu, _gelu_grad, np.array([x])) in ("pass", "undecided")


def test_a_failure_at_coarse_steps_only_is_not_confirmed_by_a_frozen_mean():
    # The ladder fails a Jacobian forgetting the mean at steps above 1 only; steps below 1
    # are asked to confirm. They went down to an ulp of x, where mean(x) freezes and f's
    # slope is the Jacobian with the mean held, the wrong one's: it "agreed" with the claim.
    # It stays undecided (the truth is not resolved there), and says why.
    def forgets_the_mean(x):
        return _layer_norm_jacobian(x, mean_term=False)

    said = []
    for seed in range(3):
        variable = check_numpy(_layer_norm, forgets_the_mean, {"x": _rows(seed, 1e7)}).variables[
            "x"
        ]
        assert variable.verdict != "pass"
        said.append(variable.diagnosis.message)
    # (not "their error estimate exceeds the tolerance", which it said, with an estimate
    # a third of the tolerance)
    assert any("steps below 1 do not confirm them" in message for message in said)


# (x, k): sin(x) + (1e-2/k)·sin(k·x), a feature adding up to 1e-2 to the slope; points
# from QA round 37's scan where the claim forgetting it passed before. (It still passes at
# 16 of its 120 points, 5 fewer: at |x| above 1024, where estimates were confirmed before
# too, the confirming steps are as blind to the feature; a known gap, in the README.)
FINE = [(82.41320672377572, 1e6), (77.82416572512278, 1e7)]


@pytest.mark.parametrize(("x", "k"), FINE)
def test_a_claim_forgetting_a_fine_feature_does_not_pass(x, k):
    def f(x):
        return float(np.sum(np.sin(x) + 1e-2 / k * np.sin(k * x)))

    def right(x):
        return np.cos(x) + 1e-2 * np.cos(k * x)

    assert _verdict(f, lambda x: np.cos(x), np.array([x])) != "pass"
    assert _verdict(f, right, np.array([x])) != "fail"


def test_a_claim_forgetting_a_fine_triangle_wave_does_not_pass():
    def tri(t):
        return 4 * np.abs(t - np.floor(t + 0.5)) - 1

    for x in (88.06968306292929, 48.02520488874422, 856.7434108467146):

        def f(x):
            return float(np.sum(np.sin(x) + 1e-9 * tri(1e7 * x)))

        assert _verdict(f, lambda x: np.cos(x), np.array([x])) != "pass"
