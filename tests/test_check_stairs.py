"""Staircases finer than the ladder's steps (`agrad.check.stairs`).

round(x·1e6)/1e6 + x between two stairs is x plus a constant: its derivative is 1, as
autograd (and PyTorch) say; every step the ladder starts with crosses stairs and measures
the average slope, 2, and the check failed the right gradient as "the rule is wrong" (QA
round 26). Truth below is algebra: between stairs, floor, ceil, trunc and round are
constant and frac(y) is y less a constant; the points are drawn away from any stair (at
least 1e-3 of a stair's width), so the derivative exists there.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

# (program with S the stairs' scale, the derivative between stairs at x)
FAMILIES = [
    ("round(x*S)/S + x", lambda x, s: 1.0),
    ("floor(x*S)/S*x + sin(x)", lambda x, s: np.floor(x * s) / s + np.cos(x)),
    ("ceil(x*S)/S + x*x", lambda x, s: 2 * x),
    ("trunc(x*S)/S - 3*x", lambda x, s: -3.0),
    ("frac(x*S)/S + x", lambda x, s: 2.0),  # frac's slope 1 between stairs: 1/S·S + 1
    ("round(x*S)*exp(x)/S", lambda x, s: np.round(x * s) * np.exp(x) / s),
    ("remainder(x*S, 3)/S + x", lambda x, s: 2.0),
]


def _points(scale: float, count: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    points = []
    while len(points) < count:
        x = float(rng.uniform(-4, 4))
        fraction = (x * scale) % 1.0
        if min(fraction, 1 - fraction, abs(fraction - 0.5)) > 1e-3:  # away from any stair
            points.append(x)
    return points


def _check(cli, program: str, x: float, *extra: str) -> tuple[int, dict]:
    result = cli(["check", program, "--wrt", "x", "--set", f"x={x!r}", "--format", "json", *extra])
    return result.code, json.loads(result.out)


@pytest.mark.parametrize(("family", "truth"), FAMILIES, ids=[f for f, _ in FAMILIES])
@pytest.mark.parametrize("scale", [1e3, 1e6])
def test_a_right_gradient_between_fine_stairs_passes(cli, family, truth, scale):
    program = family.replace("S", repr(scale))
    for x in _points(scale, 3, seed=int(scale) % 97):
        code, report = _check(cli, program, x)
        worst = report["variables"]["x"]
        assert code == 0, (program, x, worst)
        claim = worst["worst"][0]["analytic"] if worst["worst"] else None
        if claim is not None:  # the claim itself is the derivative (an independent check)
            assert claim == pytest.approx(truth(x, scale), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("scale", [1e9])
def test_stairs_near_float64s_resolution_pass_or_are_undecided_not_a_wrong_rule(cli, scale):
    # stairs 1e-9 apart: below them f's rounding may be too large for the tolerance (then
    # undecided); the staircase's slope is no evidence that the rule is wrong
    for x in _points(scale, 3, seed=5):
        code, report = _check(cli, f"round(x*{scale!r})/{scale!r} + x", x)
        var = report["variables"]["x"]
        assert (code, var["verdict"]) in ((0, "pass"), (1, "undecided")), (x, var)
        assert var.get("diagnosis", {}).get("kind") != "rule", (x, var)


def test_a_large_term_beside_the_stairs_is_undecided_not_a_wrong_rule(cli):
    # round(x·1e6 + 0.3) + x: stairs of height 1 every 1e-6: the average slope is 1e6 + 1,
    # the derivative 1; f ~ 4e6 swamps the slope below the stairs
    for x in _points(1e6, 3, seed=7):
        code, report = _check(cli, "round(x*1e6 + 0.3) + x", x)
        var = report["variables"]["x"]
        assert code == 1, (x, var)
        assert var["verdict"] == "undecided" and var["diagnosis"]["kind"] != "rule", (x, var)
        assert var["worst"][0]["numeric"] == pytest.approx(1.0, abs=0.2)


@pytest.mark.parametrize("wrong", ["2", "1.001", "0", "-1"])
def test_a_wrong_hand_gradient_between_stairs_fails(cli, wrong):
    # the staircase's average slope (2) is the classic wrong answer: it must fail
    for x in _points(1e6, 3, seed=11):
        code, report = _check(cli, "round(x*1e6)/1e6 + x", x, "--expect", f"x={wrong}")
        assert code == 1 and not report["ok"], (x, wrong)


def test_the_right_hand_gradient_between_stairs_passes(cli):
    for x in _points(1e6, 3, seed=11):
        code, report = _check(cli, "round(x*1e6)/1e6 + x", x, "--expect", "x=1")
        assert code == 0 and report["ok"], (x, report)


@pytest.mark.parametrize("x", ["0.0000015", "-0.0000025", "2.0000005"])
def test_a_stair_at_the_point_still_fails_as_a_jump(cli, x):
    # x·1e6 a half-integer (as float64 rounds it): round's stair is at the point (or within
    # ulps of it); no finer step is clear of it
    code, report = _check(cli, "round(x*1e6)/1e6 + x", float(x))
    var = report["variables"]["x"]
    assert code == 1 and var["verdict"] == "fail", var
    assert var["diagnosis"]["kind"] == "jump", var


def test_float32_programs_keep_the_staircase_undecided(cli):
    # (the finer ladder assumes float64's rounding: float32 programs are not refined)
    for x in _points(1e3, 2, seed=3):
        code, report = _check(cli, "round(x*1e3)/1e3 + x", x, "--dtype", "float32")
        assert code == 1 and report["variables"]["x"]["verdict"] != "pass"


@pytest.mark.parametrize(("claim", "ok"), [("3.5", False), ("-3.2", False), ("3", True),
                                           ("0", True), ("-2.9", True)])  # fmt: skip
def test_a_kink_beside_fine_stairs_has_its_own_one_sided_derivatives(cli, claim, ok):
    # 3|x - 0.3| + round(x·1e6)/1e6 at 0.3: round is constant within 5e-7 of the point,
    # so the one-sided derivatives are -3 and 3; measured across the stairs they were
    # [-1.95, 4.05], and 3.5 passed as a subgradient (QA round 29)
    code, report = _check(cli, "3*abs(x - 0.3) + round(x*1e6)/1e6", 0.3, "--expect", f"x={claim}")
    assert report["ok"] is ok and code == (0 if ok else 1), report["variables"]["x"]
    assert report["variables"]["x"]["kinks"][0]["one_sided"] == pytest.approx([-3, 3], rel=1e-6)
