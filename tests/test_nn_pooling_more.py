"""LPPool1d/2d and AdaptiveMaxPool1d/2d (and their functional forms) against PyTorch:
values, input gradients and indices, float64 to 1e-10; windows that do not divide the input
(overlapping adaptive windows), output larger than the input, ties (the first maximum takes
the gradient, as in PyTorch's kernel), p = 1, 1.5, 2, inf, zeros under lp pooling,
unbatched inputs, float32, reprs and bad calls. The snippets mirror a global max pool head
(AdaptiveMaxPool2d(1)) and a "power average" pooling layer."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(17)


def _run(lib, fn, x):
    t = lib.tensor(x, requires_grad=True)
    result = fn(lib, t)
    out, extra = (result[0], [result[1].numpy()]) if isinstance(result, tuple) else (result, [])
    w = lib.tensor(np.cos(np.arange(out.numel()) * 0.7).reshape(tuple(out.shape)))
    (out * w.to(out.dtype)).sum().backward()
    return [out.detach().numpy(), t.grad.numpy(), *extra]


def _agree(fn, x, tol=1e-10):
    for g, w in zip(_run(agrad, fn, x), _run(torch, fn, x), strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


X4 = RNG.standard_normal((2, 3, 7, 5))
POSITIVE = np.abs(X4) + 0.1
X3 = RNG.standard_normal((2, 3, 10))
TIES = np.array([[[[1.0, 1.0, 0.0], [1.0, 2.0, 2.0], [2.0, 0.0, 2.0]]]])

CASES = {
    "adaptive_max2d_divides": (lambda L, x: L.nn.AdaptiveMaxPool2d((7, 5))(x), X4),
    "adaptive_max2d_overlap": (lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (3, 2)), X4),
    "adaptive_max2d_global": (lambda L, x: L.nn.AdaptiveMaxPool2d(1)(x), X4),
    "adaptive_max2d_larger": (lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (9, 6)), X4),
    "adaptive_max2d_none": (lambda L, x: L.nn.AdaptiveMaxPool2d((None, 2))(x), X4),
    "adaptive_max2d_indices": (
        lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (3, 4), return_indices=True),
        X4,
    ),
    "adaptive_max2d_unbatched": (lambda L, x: L.nn.AdaptiveMaxPool2d((2, 3))(x[0]), X4),
    "adaptive_max2d_ties": (
        lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 2, return_indices=True),
        TIES,
    ),
    "adaptive_max1d": (lambda L, x: L.nn.AdaptiveMaxPool1d(4)(x), X3),
    "adaptive_max1d_indices": (
        lambda L, x: L.nn.AdaptiveMaxPool1d(3, return_indices=True)(x),
        X3,
    ),
    "lp2d_p2": (lambda L, x: L.nn.LPPool2d(2, 3, stride=2)(x), X4),
    "lp2d_p1_rect": (lambda L, x: L.nn.functional.lp_pool2d(x, 1, (2, 3)), POSITIVE),
    "lp2d_p15_ceil": (lambda L, x: L.nn.LPPool2d(1.5, 2, ceil_mode=True)(x), POSITIVE),
    "lp2d_inf": (lambda L, x: L.nn.functional.lp_pool2d(x, math.inf, 2), X4),
    "lp1d_p2": (lambda L, x: L.nn.LPPool1d(2, 3)(x), X3),
    "lp1d_p3_stride": (lambda L, x: L.nn.functional.lp_pool1d(x, 3, 4, stride=2), X3),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name):
    fn, x = CASES[name]
    _agree(fn, x)


def test_float32():
    _agree(CASES["lp2d_p2"][0], X4.astype(np.float32), tol=2e-6)
    _agree(CASES["adaptive_max2d_overlap"][0], X4.astype(np.float32), tol=2e-6)


def test_lp_pool_of_zeros_has_pytorchs_gradient():
    # (Σ 0)^(1/2): PyTorch's composition gives inf·0 = nan in the gradient; so does agrad's
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 2:, 2:] = RNG.standard_normal((2, 2))
    got = _run(agrad, lambda L, t: L.nn.functional.lp_pool2d(t, 2, 2), x)
    want = _run(torch, lambda L, t: L.nn.functional.lp_pool2d(t, 2, 2), x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)  # (nan where PyTorch's is)


def test_reprs_match_pytorch():
    for make in (
        lambda nn: nn.LPPool2d(2, 3),
        lambda nn: nn.LPPool1d(1.5, 2, 1),
        lambda nn: nn.AdaptiveMaxPool2d((2, 3)),
        lambda nn: nn.AdaptiveMaxPool1d(4, True),
        lambda nn: nn.AdaptiveMaxPool2d((None, 3)),
    ):
        assert repr(make(agrad.nn)) == repr(make(torch.nn))


def test_bad_calls_raise_as_pytorch():
    for lib in (torch, agrad):
        with pytest.raises(RuntimeError):
            lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3), 2)
        assert tuple(lib.nn.functional.adaptive_max_pool2d(lib.ones(1, 2, 3, 3), 0).shape) == (
            1,
            2,
            0,
            0,
        )  # not an error: an empty output
