"""The checker on an adversarial corpus of claims whose truth is known (tests/check_corpus.py).

A correct claim must pass (or, at a true kink, be noted as a kink); a wrong one must fail.
Nothing may be undecided here: every pair was chosen so that some finite difference can
decide it. The same pairs through torch.autograd.gradcheck are in benchmarks/bench_corpus.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from check_corpus import CORRECT, WRONG, pairs

from agrad.check import check_numpy

PAIRS = [pytest.param(p, id=p.name) for dtype in ("float64", "float32") for p in pairs(dtype)]


def check(pair):
    return check_numpy(lambda x: pair.func(x), lambda x: pair.claim(x), {"x": pair.x})


@pytest.mark.parametrize("pair", PAIRS)
def test_verdict_matches_the_truth(pair):
    report = check(pair)
    v = report.variables["x"]
    if pair.truth == CORRECT:
        assert v.verdict in ("pass", "kink"), (v.verdict, v.counts(), v.diagnosis)
        assert report.ok
        if not pair.kink:
            assert v.verdict == "pass", "a kink reported at a differentiable point"
    else:
        assert v.verdict == "fail", (v.verdict, v.counts())
        assert not report.ok
        assert v.diagnosis is not None and v.diagnosis.message


def test_the_corpus_has_both_kinds_everywhere():
    """Each family has correct and wrong claims, in both dtypes (a corpus of only correct
    or only wrong claims would make 0 false passes or 0 false alarms trivial)."""
    for dtype in ("float64", "float32"):
        truths = [p.truth for p in pairs(dtype)]
        assert truths.count(CORRECT) >= 20 and truths.count(WRONG) >= 40


@pytest.mark.parametrize("name", ["sin(x)x² n=1000", "exp(1e4 x)", "relu at ±1e-9"])
def test_a_correct_claim_rounded_to_float32_passes_in_float32_only_for_its_precision(name):
    """A float32 claim of a float64 function: the rule is right, so its failure (if any)
    must be called a precision problem, never a wrong rule."""
    pair = next(p for p in pairs("float64") if p.name == name)
    x32 = pair.x.astype(np.float32)
    report = check_numpy(
        lambda x: pair.func(x), lambda x: pair.claim(x).astype(np.float32), {"x": x32}
    )
    v = report.variables["x"]
    assert v.verdict in ("pass", "kink") or v.diagnosis.kind == "precision"
