"""A quick, seeded run of the fuzzer (tests/fuzzing.py) through the CLI's error boundary:
grammar-generated and mutated programs in random command lines. No internal error, no
traceback, exit 2 always with one `error:` line, valid JSON whenever JSON is printed.
The long campaign is `python benchmarks/fuzz.py -n 100000`."""

from __future__ import annotations

import os

import pytest
from fuzzing import KNOWN, Stats, campaign, invoke

RUNS = int(os.environ.get("AGRAD_FUZZ_RUNS", "3000"))


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_programs_and_command_lines(seed):
    stats = campaign(RUNS // 2, seed, Stats())
    assert stats.runs == RUNS // 2
    assert not stats.internal, stats.internal[:3]
    assert not stats.violations, stats.violations[:3]
    assert stats.codes[0] >= stats.runs // 20  # enough runs get past the parser and checks


KNOWN_CASES: list[tuple[str, list[str]]] = [
    # one reproducer per known class: the day it is fixed, it XPASSes (strict)
]

# Fixed classes, kept as regression tests: an op along an axis of a 0-d value, or a
# reduction over one, in the batched replay of check: it runs where eval runs. Axis 0 and
# -1 of a 0-d value are PyTorch's (softmax of a number is 1, log_softmax 0, norm |x|,
# logsumexp x), so the softmax/norm/logsumexp cases run too (they were refused before).
FIXED_CASES = [
    (["check", "sum(cumsum(x))", "--set", "x=2", "--wrt", "x"], 0),
    (["check", "sum(cumprod(x))", "--set", "x=2", "--wrt", "x", "--fast"], 0),
    (["jacobian", "cumsum(x)", "--set", "x=2", "--wrt", "x"], 0),
    (["check", "sum(log_softmax(x))", "--set", "x=2", "--wrt", "x", "--fast"], 0),
    (["check", "sum(softmax(x))", "--set", "x=2", "--wrt", "x"], 0),
    (["check", "min(x, axis=0)", "--set", "x=0.5", "--wrt", "x", "--method", "forward"], 0),
    (["check", "norm(x, axis=-1)", "--set", "x=0.5", "--wrt", "x", "--method", "forward"], 0),
    (["check", "logsumexp(x, axis=-1)", "--set", "x=0.5", "--wrt", "x"], 0),
]


@pytest.mark.parametrize("argv, code", FIXED_CASES, ids=[" ".join(a[:2]) for a, _ in FIXED_CASES])
def test_fixed_internal_errors_stay_fixed(argv, code):
    got, out, err = invoke(argv)
    assert got == code and "internal error" not in err, err


@pytest.mark.parametrize(
    "key, argv",
    [
        pytest.param(k, a, marks=pytest.mark.xfail(strict=True, reason=KNOWN[k]))
        for k, a in KNOWN_CASES
    ],
    ids=[" ".join(a[:2])[:40] for _, a in KNOWN_CASES],
)
def test_known_internal_errors_still_there(key, argv):
    code, out, err = invoke(argv)
    assert code in (0, 1) and key not in err, err  # what it should do: run (or fail a check)
