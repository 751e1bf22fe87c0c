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


KNOWN_CASES = [  # one reproducer per known class: the day it is fixed, it XPASSes (strict)
    ("AxisError: axis", ["check", "sum(cumsum(x))", "--set", "x=2", "--wrt", "x"]),
    ("AxisError: axis", ["check", "sum(log_softmax(x))", "--set", "x=2", "--wrt", "x", "--fast"]),
]  # fmt: skip


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
