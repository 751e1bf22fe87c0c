"""A saturated output (QA round 21): tanh(W @ x) with a pre-activation of 9.7 has a
derivative row of 3e-8 beside an output of 1, which finite differences resolve only to
its rounding over the step, 6e-5 of itself: undecided at rtol 1e-5, honestly, and the
diagnosis now says which rtol decides it. The Jacobian by hand: (1 - tanh²(Wx))·W."""

from __future__ import annotations

import re

import numpy as np

from agrad.check import check_numpy
from agrad.check.verdict import FAIL

W = np.array([[3.0, -2.0, 4.0], [0.5, 0.2, -0.1], [-5.0, 1.0, 2.0]])
X = np.array([1.5, -1.0, 0.8])  # W @ X = [9.7, 0.47, -6.9]


def layer(x):
    return np.tanh(W @ x)


def jacobian(x):
    return (1 - np.tanh(W @ x) ** 2)[:, None] * W


def test_the_diagnosis_names_the_rtol_that_decides_and_it_does():
    report = check_numpy(layer, jacobian, {"x": X})
    variable = report.variables["x"]
    assert variable.verdict == "undecided"
    found = re.search(r"rtol=([0-9.e+-]+) decides", variable.diagnosis.message)
    assert found, variable.diagnosis.message
    rtol = float(found.group(1))
    assert 1e-5 < rtol <= 1e-3
    assert check_numpy(layer, jacobian, {"x": X}, rtol=rtol).ok

    # ... where a claim 1% off in the saturated row still fails
    def off(x):
        j = jacobian(x)
        j[0] *= 1.01
        return j

    assert not check_numpy(layer, off, {"x": X}, rtol=rtol).ok


def test_no_rtol_is_suggested_where_the_claim_disagrees():
    def off(x):
        j = jacobian(x)
        j[0, 1] *= 1.0 + 2e-4  # beyond the differences' error (6e-5), within four of them
        return j

    report = check_numpy(layer, off, {"x": X})
    variable = report.variables["x"]
    assert variable.verdict == "undecided"
    assert "decides them" not in variable.diagnosis.message


def test_a_log_softmax_jacobian_with_a_dominant_logit_never_fails_right_claims():
    """log_softmax(z) with z spread ±40: the dominant output is -8e-9, computed as
    z_k - logsumexp(z) at the size of z, and its derivative along a small logit, -s_j =
    -5e-20, lies below that rounding; the differences give exactly 0, and the right claim
    failed as a wrong rule (QA round 22). J = I - softmax(z), by hand."""
    z = np.array([-12.1, 3.3, -20.0, -31.2, 0.5, 14.1])

    def log_softmax(z):
        v = z
        top = v.max()
        return v - top - np.log(np.sum(np.exp(v - top)))

    def jacobian(z):
        v = z
        s = np.exp(v - v.max())
        s /= s.sum()
        return np.eye(v.size) - s[None, :]

    report = check_numpy(log_softmax, jacobian, {"z": z})
    assert (report.variables["z"].verdicts != FAIL).all()

    def off(z):
        j = jacobian(z)
        j[0, 0] *= 1.01
        return j

    assert check_numpy(log_softmax, off, {"z": z}).variables["z"].verdict == "fail"
