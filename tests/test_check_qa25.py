"""QA round 25: an audit of round 24's look at ulps for a step at the point.

- A program with a comparison whose boundary is near the point (3e-4, 1e-6 away) but not at
  it was looked at over 8 ulps either side: f computed through x + 100 moves in stairs 64
  ulps of x wide, one of which sat beside the point as a clean step, and right gradients
  failed as "the function jumps". Only an element whose comparison flips one ulp from the
  point is looked at now, over up to 89 ulps, where the stairs show as scatter.
- A jump made by floor, ceil, round, trunc, sign, frac or remainder hid behind f's
  curvature in a program as in a NumPy function (no comparison marks its boundary): an
  element where such an op takes another value one ulp away is looked at over ulps too.

Truth: each function below is smooth at its point (the boundary is away from it, or the
branches meet there), by algebra; the derivative is the autograd one (PyTorch agrees).
"""

from __future__ import annotations

import numpy as np
import pytest

BOUNDARY_NEAR = [  # (program, point): a comparison's boundary 3e-4 or 1e-6 from the point
    ("where(x < 1.1020276203380748, sin(x + 100), sin(1.1020276203380748 + 100))",
     "1.1017276203380748"),
    ("sin(x + 100) + 0.5*(x > 1.1020276203380748)", "1.1017276203380748"),
    ("where(x > 1.280939277133407, (x + 16)*(x + 16) - 256, 0)", "1.281239277133407"),
    ("where(x < 1.000001, x, 1.000001) + ((16 + x) - 16)", "1.0000000000000018"),
]  # fmt: skip


@pytest.mark.parametrize(("program", "point"), BOUNDARY_NEAR)
def test_a_comparison_near_the_point_is_not_a_jump_at_it(cli, program, point):
    result = cli(["check", f"sum({program})", "--wrt", "x", "--set", f"x=[{point}]"])
    assert result.code == 0, result.out + result.err


def test_branches_meeting_at_the_point_through_rounded_terms_are_not_a_jump(cli):
    # where(x < a, sin(x + 100), sin(a + 100)) at x = a: continuous (a kink), whatever
    # stairs sin(x + 100) moves in over ulps of x
    rng = np.random.default_rng(3)
    for a in 1 + rng.random(12) * 1e-3:
        program = f"sum(where(x < {a!r}, sin(x + 100), sin({a!r} + 100)))"
        result = cli(["check", program, "--wrt", "x", "--set", f"x=[{a!r}]"])
        assert "jumps" not in result.out, (a, result.out)


@pytest.mark.parametrize(
    ("program", "point"),
    [
        ("x*x + 1e-9*floor(x)", "-3"),  # floor(-3) = -3, floor(-3 - ulp) = -4
        ("x*x + 1e-9*ceil(x)", "-3"),
        ("x*x + 1e-9*trunc(x)", "3"),
        ("x*x + 1e-6*ceil(x - 1000)", "1000"),
        ("x*x + 1e-6*sign(x - 1000)", "1000"),
        ("x*x + 1e-6*round(x - 999.5)", "1000"),
        ("x*x + 1e-9*remainder(x, 2)", "4"),  # 4 mod 2 = 0, just below 4: 2 - ulp
        ("x*x - 1e-9*frac(x)", "3"),
    ],
)
def test_a_small_jump_made_by_a_stepping_op_fails(cli, program, point):
    # a jump at the point hidden behind x²'s curvature at the ladder's steps (QA round 25:
    # these passed); no claim is right there
    result = cli(["check", f"sum({program})", "--wrt", "x", "--set", f"x=[{point}]",
                  "--allow-undecided"])  # fmt: skip
    assert result.code == 1 and "jumps" in result.out, result.out


@pytest.mark.parametrize(
    ("program", "point"),
    [
        ("x*x + 1e-9*floor(x)", "-2.5"),  # away from the step
        ("x*sign(x) + sin(x)", "0.0, 1.0"),  # |x| at 0: a kink, not a jump
        ("floor(x) - floor(x) + x*x", "3.0"),  # the steps cancel
        ("frac(x)*2 + remainder(x, 2.0)", "0.3, 3.1"),
    ],
)
def test_a_stepping_op_away_from_its_step_or_cancelled_is_no_jump(cli, program, point):
    result = cli(["check", f"sum({program})", "--wrt", "x", "--set", f"x=[{point}]",
                  "--allow-undecided"])  # fmt: skip
    assert result.code == 0 and "jumps" not in result.out, result.out
