"""A function that jumps at the point fails the check, whatever is claimed and however it is
checked: there is no derivative to claim (PyTorch's gradcheck fails these too).

It used to be "undecided: rounding noise" (the one-sided gap grows as 1/h, as rounding's
does), which --allow-undecided then passed (found by QA, 2026-12-02). A jump's gap grows
as 1/h with h·gap, the jump's size, steady and far above rounding; rounding noise itself
stays undecided (the last test). The oracle is algebra: each function below has a jump of
the stated height at the stated point.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

import agrad
from agrad.check import check_numpy
from agrad.cli import run as cli_run

HEIGHTS = [1.0, 1e-3, 1e3]
POINTS = [0.0, 0.5, -3.0, 1e3]
# Known gap: a jump of 1e-3 at x = 1000 on x² hides behind the curvature of the first steps
# (h = 1 and 1/4 see a parabola, and the ladder settles there); PyTorch's fixed step 1e-6
# sees it. A probe at a small step mistook near-kinks (relu at 1e-9) and sin at 1e6 for
# jumps, so it is not done (README, "How well it decides"; closing note of 2026-12-02).
# A program's comparison boundaries are known, though: an element within a step of one is
# looked at over ulps, where the step shows (QA round 24), so only a NumPy function hides it.
HIDDEN = {(1e3, 1e-3)}


def _cli(*argv: str) -> tuple[int, dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_run(["check", *argv, "--allow-undecided", "--format", "json"])
    return code, json.loads(out.getvalue())


PROGRAMS = {  # each jumps by c at x0 along x[0]; x[1] is a smooth bystander
    "gt": "sum(x*x + (x > {x0}) * {c})",
    "ge": "sum(x*x + (x >= {x0}) * {c})",
    "where": "sum(where(x < {x0}, x, x + {c}))",
}


@pytest.mark.parametrize("kind", sorted(PROGRAMS))
@pytest.mark.parametrize("height", HEIGHTS)
@pytest.mark.parametrize("x0", POINTS)
def test_a_program_that_jumps_at_the_point_fails(kind, height, x0):
    program = PROGRAMS[kind].format(x0=x0, c=height)
    code, report = _cli(program, "--wrt", "x", "--set", f"x=[{x0}, {x0 + 0.25}]")
    assert code == 1 and not report["ok"]
    worst = report["variables"]["x"]["worst"]
    assert any(w["reason"] == "the function jumps" for w in worst), worst


@pytest.mark.parametrize("height", HEIGHTS)
@pytest.mark.parametrize("x0", POINTS)
def test_a_numpy_function_that_jumps_fails_with_a_jump_diagnosis(height, x0):
    if (x0, height) in HIDDEN:
        pytest.xfail("a jump smaller than the first steps' curvature (known gap)")
    report = check_numpy(
        lambda x: np.sum(x * x + height * (x > x0)),
        lambda x: 2 * x,
        {"x": np.array([x0, x0 + 0.25])},
        allow_undecided=True,
    )
    assert not report.ok
    diagnosis = report.variables["x"].diagnosis
    assert diagnosis.kind == "jump", diagnosis.message
    assert diagnosis.evidence["jump"] == pytest.approx(height, rel=0.05)


def test_gradcheck_of_a_custom_function_with_a_jump_fails():
    class Step(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x + (x > 0).to(x.dtype)

        @staticmethod
        def backward(ctx, g):
            return g

    x = agrad.tensor([0.0, 1.0], dtype=agrad.float64, requires_grad=True)
    with pytest.raises(agrad.autograd.GradcheckError, match="jumps"):
        agrad.autograd.gradcheck(Step.apply, (x,))


@pytest.mark.parametrize("x0", POINTS)
def test_away_from_the_jump_it_passes(x0):
    report = check_numpy(
        lambda x: np.sum(x * x + (x > x0)), lambda x: 2 * x, {"x": np.array([x0 + 0.1])}
    )
    assert report.ok


def test_rounding_noise_is_still_undecided_not_a_jump():
    # 1e16 + x: every difference is a few ulps of 1e16 (2.0 each), no step resolves it
    report = check_numpy(lambda x: 1e16 + np.sum(x), lambda x: np.ones_like(x), {"x": np.ones(2)})
    v = report.variables["x"]
    assert not report.ok and v.diagnosis.kind == "undecided", v.diagnosis.message


SMALL_HEIGHTS = [1e-9, 1e-7, 1e-6, 1e-4]


@pytest.mark.parametrize("height", SMALL_HEIGHTS)
@pytest.mark.parametrize("x0", [0.0, 0.5, -3.0])
def test_a_small_jump_fails_as_a_jump_not_undecided_or_passed(height, x0):
    # x + 1e-9·(x > 0) at 0 passed, 1e-6 and 1e-4 were "not accurate enough" (QA round 11
    # #3): the noise probe's stencil, widened until the jump no longer crowded f's moves,
    # took the jump for noise of a quarter its size, and the ladder's rounding hid it.
    code, report = _cli(f"sum(x + {height}*(x > {x0}))", "--wrt", "x", "--set", f"x=[{x0}]")
    assert code == 1
    worst = report["variables"]["x"]["worst"]
    assert [w["reason"] for w in worst] == ["the function jumps"], worst


@pytest.mark.parametrize(("program", "point", "size"), [
    ("sign(x - 1)*3", "1", 6.0),  # from -3 to 3 (QA round 28: it said "about 0")
    ("x*x + 5*(x > 1)", "1", 5.0),  # from 1 to 6, f(1) = 1 on the left piece
    ("3 - 2*(x >= 2)", "2", 2.0),  # f(2) = 1 on the right piece
])  # fmt: skip
def test_a_jumps_size_is_the_step_between_its_sides(cli, program, point, size):
    result = cli(["check", program, "--wrt", "x", "--set", f"x={point}", "--format", "json"])
    diagnosis = json.loads(result.out)["variables"]["x"]["diagnosis"]
    assert result.code == 1 and diagnosis["kind"] == "jump"
    assert diagnosis["jump"] == pytest.approx(size, rel=1e-6)
