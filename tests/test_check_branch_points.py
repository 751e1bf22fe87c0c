"""The complex step must not be trusted through a branch point.

sqrt, log and fractional powers are analytic, but their complex extensions have a branch
point at 0: sqrt(sum(v**2)) at v = 0 evaluates sqrt(-h²) = ih under the complex step and
returned the one-sided slope 1 with full confidence, so the claim [1, 1] (not a
subgradient of the 2-norm: its norm is above 1) was called right, and std's [s, s, s] at a
constant vector likewise (found by QA, 2026-12-02). The guarded ops give nan there, and the
finite differences take over and see the kink. The oracle is algebra: each program below
has a kink at the point, and each claim has a slope along some direction that no
one-sided directional derivative there matches.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from agrad.cli import run as cli_run

S = 3**-0.5


def _check(program: str, value: str, expect: str | None = None) -> dict:
    argv = ["check", program, "--wrt", "x", "--set", f"x={value}", "--format", "json"]
    if expect is not None:
        argv += ["--expect", f"x={expect}"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli_run(argv)
    return json.loads(out.getvalue())


AT_A_BRANCH_POINT = {  # program, point, a claim that is not a subgradient there
    "sqrt": ("sqrt(sum(x**2))", "[0, 0]", "[1, 1]"),
    "pow_half": ("sum(x**2)**0.5", "[0, 0]", "[1, 1]"),
    "pow_three_halves": ("sum(x**2)**1.5 + sqrt(sum(x**2))", "[0, 0]", "[1, 1]"),
    "rsqrt_of_shifted": ("1 / rsqrt(sum(x**2))", "[0, 0]", "[1, 1]"),
    "std": ("std(x)", "[1, 1, 1]", f"[{S}, {S}, {S}]"),
    "std_scaled": ("3 * std(2 * x)", "[0.5, 0.5, 0.5]", f"[{6 * S}, {6 * S}, {6 * S}]"),
}


@pytest.mark.parametrize("case", sorted(AT_A_BRANCH_POINT))
def test_a_one_sided_slope_is_not_called_right_at_a_branch_point(case):
    program, point, claim = AT_A_BRANCH_POINT[case]
    report = _check(program, point, claim)
    verdict = report["variables"]["x"]["expect"]["verdict"]
    # (the old verdict: "autograd disagrees with the formula and finite differences (which
    # agree)": the one-sided slope taken for the derivative, the formula for right)
    assert "which agree" not in verdict and "all agree" not in verdict, verdict
    assert not report["ok"]


AWAY = {  # the same ops away from their branch points: still the complex step
    "sqrt": ("sqrt(sum(x**2) + 1)", "[0.3, -2]"),
    "log": ("sum(log(x**2 + 1))", "[0.3, -2]"),
    "log1p": ("sum(log1p(x**2))", "[0.3, -2]"),
    "pow": ("sum((x**2 + 1)**0.5)", "[0.3, -2]"),
    "std": ("std(x)", "[1, 2, 4]"),
}


@pytest.mark.parametrize("case", sorted(AWAY))
def test_away_from_branch_points_the_complex_step_still_decides(case):
    program, point = AWAY[case]
    report = _check(program, point)
    x = report["variables"]["x"]
    assert report["ok"], x
    assert x["evaluations_per_element"] <= 2, x["evaluations_per_element"]
