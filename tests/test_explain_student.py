"""`agrad eval --explain` as a student reads it (issue 13): the chain rule with numbers.

Every expected line is the hand derivation of the seed tutorial's example,
2·(1·1+0−5)·1 + 2·(1·2+0−7)·2 = −28, worked out by algebra, not copied from agrad's output:
w·x = [1, 2], + b = [1, 2], − y = [−4, −5], the square's local derivative 2·[−4, −5] =
[−8, −10], times x = [1, 2] gives [−8, −20], summed −28; for b the sum is −8 + −10 = −18.
"""

from __future__ import annotations

import json

import pytest

TUTORIAL = ["sum((w*x+b-y)**2)", "--wrt", "w,b", "--set", "x=[1,2]", "--set", "y=[5,7]",
            "--set", "w=1", "--set", "b=0"]  # fmt: skip


def _explain(cli, *argv):
    result = cli(["eval", *argv, "--explain"])
    assert result.code == 0, result.err
    assert result.err == ""
    return result.out


def test_the_tutorial_can_be_redone_line_by_line(cli):
    out = _explain(cli, *TUTORIAL)
    lines = [line.strip() for line in out.splitlines()]
    expected = [  # in order: the forward values each rule uses, the rule evaluated, the sums
        "a = PowBackward0 = [16, 25]",  # (1·1+0−5)² = 16, (1·2+0−7)² = 25
        "a = SubBackward0 = [-4, -5]",  # w·x + b − y
        "rule: d(a**2)/da = 2·a**(2-1)",
        "→ SubBackward0 (step 3): g·2·a**(2-1) = [1, 1]·[-8, -10] = [-8, -10]",
        "a = AddBackward0 = [1, 2], y = [5, 7] (a constant)",
        "a = MulBackward0 = [1, 2], b = 0",
        "summed over the batch: -8 + -10 = -18",
        "w = 1, x = [1, 2] (a constant)",  # the operands of w·x, named
        "rule: d(w*x)/dw = x, d(w*x)/dx = w",  # which operand each letter is
        "→ w: g·x = [-8, -10]·[1, 2] = [-8, -20]",  # 2·(w·x+b−y)·x
        "summed over the batch: -8 + -20 = -28",
        "w ← -28",
        "b ← -18",
    ]
    positions = []
    for line in expected:
        assert line in lines, f"{line!r} missing from:\n{out}"
        positions.append(lines.index(line))
    assert positions[:-2] == sorted(positions[:-2])


def test_explain_fits_80_columns_without_cutting_names(cli):
    out = _explain(cli, "sum(sigmoid(log_softmax(x, axis=0)) * tanh(x))", "--wrt", "x",
                   "--set", "x=[0.5, -1.25, 2.0, 0.125, 3.5, -0.75]")  # fmt: skip
    assert max(len(line) for line in out.splitlines()) <= 80
    for name in ("SigmoidBackward0", "LogSoftmaxBackward0", "TanhBackward0"):
        assert name in out
    assert "…" not in out


def test_accumulation_over_several_consumers(cli):
    """x + x·x at x = 2: the add sends 1, the product x (= 2) to each of its operands."""
    out = _explain(cli, "sum(x + x*x)", "--wrt", "x", "--set", "x=2")
    assert "x ← 1 + 2 + 2 = 5" in out


def test_an_intermediate_fed_by_two_consumers_shows_the_sum_arriving(cli):
    """h = 3x feeds h² and sin(h)... here h·h and h: 1·h + h·1 + 1 at h = 6 arrives."""
    out = _explain(cli, "h = 3*x; sum(h*h + h)", "--wrt", "x", "--set", "x=2")
    assert "g = 1 + 6 + 6 = 13 (from its 3 consumers)" in out
    assert "x ← 39" in out  # 13·3


def test_rule_letters_never_clash_with_program_names(cli):
    """A program naming its variables a and b: an unnamed operand gets a letter the
    program does not use, and named ones appear by their names."""
    out = _explain(cli, "a = [1, 2]; b = 3; sum(exp(a) * a) + b * 1", "--wrt", "a,b")
    assert "rule: d(u*a)/du = a, d(u*a)/da = u" in out
    assert "u = ExpBackward0 = [2.71828, 7.38906], a = [1, 2]" in out
    assert "d(a*b)" not in out


def test_explain_json_carries_operands_and_local_derivatives(cli):
    result = cli(["eval", *TUTORIAL, "--explain", "--format", "json"])
    assert result.code == 0 and result.err == ""
    steps = json.loads(result.out)["steps"]
    mul = steps[-1]
    assert [(o["letter"], o["name"], o["value"]) for o in mul["operands"]] == [
        ("a", "w", 1),
        ("b", "x", [1, 2]),
    ]
    assert mul["rule_named"] == "d(w*x)/dw = x, d(w*x)/dx = w"
    to_w = next(s for s in mul["sends"] if s["to"] == "w")
    assert to_w["local"] == [1, 2] and to_w["summed_from"] == [-8, -20]
    assert steps[1]["sends"][0]["local"] == [-8, -10]  # 2·(w·x+b−y)


@pytest.mark.parametrize("program", ["sum(A @ x)", "trace(A @ A)", "det(A)"])
def test_non_elementwise_rules_send_their_result(cli, program):
    sets = ["--set", "x=[1, 2]"] if "x" in program else []
    out = _explain(cli, program, "--wrt", "A", "--set", "A=[[2, 1], [0.5, 3]]", *sets)
    assert "→ A: " in out
    assert max(len(line) for line in out.splitlines()) <= 80
