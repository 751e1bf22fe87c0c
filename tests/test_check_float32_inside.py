"""A NumPy function that computes in float32 inside, checked with float64 values (QA round
20): its differences cannot reach float64's tolerance, so the check is undecided, and the
diagnosis says why (f's values are float32 numbers) and what to do instead."""

from __future__ import annotations

import numpy as np

from agrad.check import check_numpy

W = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)


def inside_float32(x):
    return float(np.sum(np.tanh(x.astype(np.float32) @ W)))


def in_float64(x):
    return float(np.sum(np.tanh(x @ W.astype(np.float64))))


def gradient(x):  # d/dx sum(tanh(x @ W)) = W @ (1 - tanh²), by hand
    t = np.tanh(x @ W.astype(np.float64))
    return W.astype(np.float64) @ (1 - t * t)


X = np.array([0.1, -0.5, 0.3, 1.2, -0.7])


def test_a_float32_function_is_undecided_and_told_why():
    report = check_numpy(inside_float32, gradient, {"x": X})
    assert not report.ok
    assert report.variables["x"].verdict == "undecided"
    assert "float32 numbers" in report.variables["x"].diagnosis.message


def test_its_float64_version_passes_and_a_wrong_rule_still_fails():
    assert check_numpy(in_float64, gradient, {"x": X}).ok
    assert not check_numpy(in_float64, lambda x: 1.01 * gradient(x), {"x": X}).ok
    report = check_numpy(inside_float32, lambda x: 1.1 * gradient(x), {"x": X})
    assert report.variables["x"].verdict == "fail"


def test_the_hint_is_not_given_for_a_float64_function():
    def noisy(x):  # float64 throughout, rounding swamped by a large constant
        return float(1e10 + 1e-3 * np.sum(x**2))

    report = check_numpy(noisy, lambda x: 2e-3 * x, {"x": X})
    assert "float32 numbers" not in report.variables["x"].diagnosis.message
