"""A feature of f finer than the ladder's steps must not let a wrong gradient pass.

Above |x| = 1 the ladder's steps are relative (2^-10·|x| first): at 1e12 they are 1e8 and
coarser, and a term A·sin(x/λ) with λ far below them averages out of every difference, so
that c·x + A·sin(x/λ) looks like c·x. A settled estimate is confirmed at finer steps, once
at h/64 (which at 1e12 still averages such a term out); now at the finest step f's own
rounding tolerates for the accuracy the check needs, and at one 32x finer still (QA round
11 found 1e3·x + sin(x) at 1e12; a sweep of this family found wrong claims passing up to
566 ulps of f).

The oracle is algebra: d/dx (c·x + A·sin(x/λ)) = c + (A/λ)·cos(x/λ). What finite
differences can see has a floor: a feature of amplitude A within a few hundred rounding
errors of f (|f| ≈ c·|x|) is invisible to any step whose rounding is within the tolerance.
The cases below keep 1,000 ulps of f above that floor, and a claim off by at least 10x the
tolerance; correct claims must never fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from agrad.check import check_numpy

EPS = float(np.finfo(np.float64).eps)
SLOPE = 1e3  # c: the smooth part's slope; the default rtol (1e-5) makes the tolerance 1e-2


def _cases():
    rng = np.random.default_rng(11)
    for scale in (1e6, 1e9, 1e12):
        for wavelength in 10.0 ** np.arange(0.0, 8.5, 0.5):
            for amplitude in (wavelength, 0.1 * wavelength):  # slopes of 1 and 0.1
                for x in scale * rng.uniform(1.0, 10.0, 2):
                    if amplitude < 1000 * EPS * SLOPE * x:
                        continue  # below what any finite difference can see here
                    yield pytest.param(
                        x,
                        wavelength,
                        amplitude,
                        id=f"x={x:.3g},λ={wavelength:.3g},A={amplitude:.3g}",
                    )


CASES = list(_cases())


def _f(wavelength, amplitude):
    return lambda x: np.sum(SLOPE * x + amplitude * np.sin(x / wavelength))


def _gradient(x, wavelength, amplitude):
    return SLOPE + amplitude / wavelength * np.cos(x / wavelength)


def _verdict(x, wavelength, amplitude, claim):
    report = check_numpy(_f(wavelength, amplitude), claim, {"x": np.array(x)})
    return report.variables["x"].verdict


def test_the_family_reaches_the_large_inputs():
    # (the filter must leave cases at 1e12, where the relative steps are coarsest)
    assert sum(1 for case in CASES if case.values[0] > 1e12) >= 10
    assert len(CASES) >= 60 and len(WRONG) >= 40


# (where the fine term's slope is 10x the tolerance or more: forgetting it is wrong)
WRONG = [case for case in CASES if abs(_gradient(*case.values) - SLOPE) >= 10 * 1e-5 * SLOPE]


@pytest.mark.parametrize(("x", "wavelength", "amplitude"), WRONG)
def test_forgetting_the_fine_term_never_passes(x, wavelength, amplitude):
    truth = _gradient(x, wavelength, amplitude)
    verdict = _verdict(x, wavelength, amplitude, lambda x: np.full_like(x, SLOPE))
    assert verdict != "pass", (truth, verdict)


@pytest.mark.parametrize(("x", "wavelength", "amplitude"), CASES)
def test_the_right_gradient_never_fails(x, wavelength, amplitude):
    verdict = _verdict(x, wavelength, amplitude, lambda x: _gradient(x, wavelength, amplitude))
    assert verdict in ("pass", "undecided"), verdict


def test_an_estimate_kept_through_rounding_is_confirmed_too():
    # 1e3·x + 100·sin(x/100) at 2.6e12 (47 ulps of f): the ladder's gaps rise as 1/h
    # within 64x rounding at steps of 1e8, so it stopped there as "rounding" and kept the
    # estimate before, unconfirmed: the claim 1e3 (the truth is 999.12) passed.
    x = 2646489922081.4683
    # (fail, or undecided where the failing step's own rounding, eps·(|f| + |x·∂f|) over
    # it, is within a quarter of the claim's distance: 47 ulps is near the floor)
    assert _verdict(x, 100.0, 100.0, lambda x: np.full_like(x, SLOPE)) != "pass"
    assert _verdict(x, 100.0, 100.0, lambda x: _gradient(x, 100.0, 100.0)) != "fail"
