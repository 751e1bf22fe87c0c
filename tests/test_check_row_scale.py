"""Small elements beside large ones in one gradient row (QA round 20).

A claim passes within rtol of itself plus 64 ulps of its row's largest derivative: what a
float64 backward's rounding can leave in an element computed from terms of the row's size.
It was 1e-12 of the row (4,500 ulps), so an element below that was not checked at all:
a least-squares fit of a degree-5 polynomial on raw t in [0, 1000] passed its intercept's
gradient with the sign flipped (-0.072 beside 8.4e12), and -sum(log(p)) at p = 1e-13
passed the other elements dropped, though finite differences resolved them to 1e-13.
Every expected value below is the algebra's; nothing is taken from the checker.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from agrad.check import check_numpy

T = np.linspace(0.0, 1000.0, 50)
POWERS = np.vander(T, 6, increasing=True)  # 1, t, ..., t^5: raw features, not scaled
Y = 3.0 + 0.02 * T + np.random.default_rng(5).standard_normal(50)


def _loss(c):
    r = POWERS @ c - Y
    return float(r @ r) / len(T)


def _loss_grad(c):
    return 2.0 * POWERS.T @ (POWERS @ c - Y) / len(T)


def _ok(f, grad, x):
    name = next(iter(inspect.signature(f).parameters))  # (variables are passed by name)
    return check_numpy(f, grad, {name: np.asarray(x, dtype=np.float64)}).ok


@pytest.mark.parametrize("at", [[3.0, 0.01, 0, 0, 0, 0], [2.5, 0.021, 1e-6, 0, 0, 0]])
def test_a_polynomial_fit_on_raw_features_checks_its_intercept(at):
    right = _loss_grad(np.asarray(at, dtype=np.float64))
    assert np.abs(right).max() / abs(right[0]) > 1e11  # the row spans eleven decades or more
    assert _ok(_loss, _loss_grad, at)

    def flipped(c):
        g = _loss_grad(c)
        g[0] = -g[0]
        return g

    def dropped(c):
        g = _loss_grad(c)
        g[0] = 0.0
        return g

    assert not _ok(_loss, flipped, at)
    assert not _ok(_loss, dropped, at)
    # 9.35 beside 2.8e15 (at the first point) is within 64 ulps of the row: a backward
    # computing it from terms that large could leave that much, so it is undecided, said why
    report = check_numpy(_loss, flipped, {"c": np.asarray(at, dtype=np.float64)})
    element = report.to_dict()["variables"]["c"]["worst"][0]
    assert element["input_index"] == [0]
    assert (element["verdict"], element["reason"]) in (
        ("fail", "rule"),
        ("undecided", "within the rounding at its row's scale"),
    )
    if element["verdict"] == "undecided":
        assert "terms as large as" in report.variables["c"].diagnosis.message


@pytest.mark.parametrize("k", [8, 10, 11, 12, 13])
def test_a_negative_log_likelihood_beside_a_tiny_probability(k):
    p = np.array([10.0**-k, 0.5, 0.3, 0.9])

    def nll(q):
        return float(-np.sum(np.log(q)))

    def right(q):
        return -1.0 / q

    def others_flipped(q):
        g = 1.0 / q
        g[0] = -g[0]
        return g

    def others_dropped(q):
        return np.array([-1.0 / q[0], 0.0, 0.0, 0.0])

    def one_off(q):  # 1% off in one element beside the row's 10^k
        g = -1.0 / q
        g[2] *= 1.01
        return g

    assert _ok(nll, right, p)
    assert not _ok(nll, others_flipped, p)
    assert not _ok(nll, others_dropped, p)
    if k <= 11:  # (1% of 3.3 is 0.033: above 64 ulps of the row up to 10^11)
        assert not _ok(nll, one_off, p)


@pytest.mark.parametrize("seed", range(10))
def test_generated_rows_spanning_many_decades(seed):
    """sum(c_j·log(x_j)) with one x_j tiny: its derivative c_j/x_j is the row's scale, f
    stays small, so finite differences resolve every element; each wrong claim whose error
    exceeds 64 ulps of the row must not pass."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    x = rng.uniform(0.2, 3.0, n)
    x[rng.integers(n)] = 10.0 ** -rng.uniform(6, 13)
    c = rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 2.0, n)

    def f(v):
        return float(c @ np.log(v))

    truth = c / x
    scale = np.abs(truth).max()
    assert _ok(f, lambda v: c / v, x)
    small = int(np.argmin(np.abs(truth)))
    for wrong in (-truth[small], 0.0, 1.1 * truth[small]):
        if abs(wrong - truth[small]) <= 4 * 64 * np.finfo(float).eps * scale:
            continue  # (within the row's rounding: not what this test is about)
        claim = truth.copy()
        claim[small] = wrong

        def bad(v, claim=claim):
            return claim.copy()

        assert not _ok(f, bad, x), (x, small, wrong)
