"""Inputs on tiny scales, as in SI units (QA round 20): a Coulomb energy at r = 1.5e-10 m,
a pulse 1e-13 s wide. Below |x| = 1 the ladder's steps are absolute (2^-10 down), far
wider than such a feature: they cross its pole or average it out, and right gradients
failed as "the function jumps" or "the rule is wrong", with no workaround. A jump or a
disputed estimate seen only by steps wider than |x| is now looked at again from |x|/2, as
a kink the steps straddle is. Each derivative below is written out by hand.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from agrad.check import check_numpy

K = 8.9875517923e9 * (1.602176634e-19) ** 2  # Coulomb's constant times e², J·m

FAMILIES = {
    # f(x; w) and f'(x; w): features of width w, evaluated at x of the order of w
    "gauss": (lambda x, w: np.exp(-((x / w) ** 2)),
              lambda x, w: -2 * x / w**2 * np.exp(-((x / w) ** 2))),
    "coulomb": (lambda x, w: w / x, lambda x, w: -w / x**2),
    "sine": (lambda x, w: np.sin(x / w), lambda x, w: np.cos(x / w) / w),
    "tanh": (lambda x, w: np.tanh(x / w), lambda x, w: (1 - np.tanh(x / w) ** 2) / w),
    "softplus": (lambda x, w: w * np.logaddexp(0.0, x / w), lambda x, w: 1 / (1 + np.exp(-x / w))),
}  # fmt: skip


def _ok(f, grad, x):
    name = next(iter(inspect.signature(f).parameters))  # (variables are passed by name)
    return check_numpy(f, grad, {name: np.asarray(x, dtype=np.float64)}).ok


@pytest.mark.parametrize("width", [3e-10, 1e-11, 1e-13])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_feature_as_small_as_x_is_checked_at_its_own_scale(family, width):
    fn, dfn = FAMILIES[family]
    rng = np.random.default_rng(len(family))
    x = width * rng.uniform(0.5, 2.0, 3) * (1.0 if family == "coulomb" else rng.choice([-1, 1], 3))
    weights = rng.uniform(0.5, 2.0, 3)

    def f(v):
        return float(weights @ fn(v, width))

    def right(v):
        return weights * dfn(v, width)

    assert _ok(f, right, x)
    assert not _ok(f, lambda v: 1.01 * right(v), x)
    assert not _ok(f, lambda v: right(v) * np.array([1.0, 0.0, 1.0]), x)


def test_a_coulomb_energy_in_metres():
    """Three charges on a line, their separations r in metres: E = K·sum(1/r)."""
    r = np.array([1.5e-10, 2.2e-10, 3.1e-10])
    energy = lambda v: float(K * np.sum(1.0 / v))  # noqa: E731
    assert _ok(energy, lambda v: -K / v**2, r)
    assert not _ok(energy, lambda v: K / v**2, r)  # the sign a hand derivation drops
