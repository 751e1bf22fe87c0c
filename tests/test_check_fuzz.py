"""A seeded fuzzer of the checker: random functions (tests/check_fuzz.py), their exact
gradients from PyTorch's autograd (an independent implementation), and claims that are
right or broken. A right claim must never fail; a broken one must never pass.
benchmarks/fuzz_check.py runs the same for longer and reports the counts.
"""

from __future__ import annotations

import numpy as np
import pytest
from check_fuzz import exact_gradient, random_function, wrong_claims

from agrad.check import check_numpy

pytest.importorskip("torch")


def verdicts(fn, x, claim):
    report = check_numpy(lambda x: fn.numpy(x), lambda x: claim, {"x": x})
    return report.variables["x"].verdict


@pytest.mark.parametrize("seed", range(40))
def test_random_smooth_functions(seed):
    rng = np.random.default_rng(seed)
    fn = random_function(rng)
    x = rng.uniform(-2, 2, fn.n)
    g = exact_gradient(fn, x)
    assert verdicts(fn, x, g) == "pass", (fn.text, x)
    for name, claim in wrong_claims(g, rng).items():
        assert verdicts(fn, x, claim) == "fail", (fn.text, name, x)


@pytest.mark.parametrize("seed", range(40, 60))
def test_random_functions_with_kinks_away_from_them(seed):
    """relu and abs in the tree, at random points (almost surely not on a kink): the
    gradient is PyTorch's, which is the derivative there."""
    rng = np.random.default_rng(seed)
    fn = random_function(rng, kinks=True)
    x = rng.uniform(-2, 2, fn.n)
    g = exact_gradient(fn, x)
    assert verdicts(fn, x, g) in ("pass", "kink"), (fn.text, x)
    for name, claim in wrong_claims(g, rng).items():
        assert verdicts(fn, x, claim) == "fail", (fn.text, name, x)
