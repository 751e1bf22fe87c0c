"""QA round 24: an audit of round 23's changes, which let wrong gradients and jumps pass.

- ``--method taylor``'s second table, read from the smallest element's scale, passed
  wrong gradients of the other elements: there the small element's curvature (1e18 for
  log at 1e-9) swamps their error along every random direction. A rate 2 read only there
  passes a single-element input now; with more elements it is undecided.
- A jump at the point that a finer ladder (below a jump seen at coarse steps, or below
  |x| where every step crossed 0) saw as smooth or noisy was decided away: the jump was
  small beside f's slope at those steps, but f at 1..8 ulps of x steps there cleanly.
  Such a step, fitted at ulps above the scatter, now keeps the jump; and a "wrong rule"
  is not put down to f's scatter at ulps where that scatter is a clean step.

Every function here jumps at the point (by algebra: the indicator adds its constant on
one side only), or has a wrong claimed gradient: none may pass, nor be only undecided.
"""

from __future__ import annotations

import json
import textwrap

import pytest

TAYLOR = textwrap.dedent("""
    import numpy as np
    def f(x):
        return float(np.log(x[0]) + 1000.0 * x[1])
    def off_by_one(x):
        return np.array([1 / x[0], 1001.0])  # the truth is [1/x0, 1000]
    def off_by_a_tenth(x):
        return np.array([1 / x[0], 1100.0])
    def g(x):
        return float(np.log(x[0]) + np.sin(x[1]))
    def cos_flipped(x):
        return np.array([1 / x[0], -np.cos(x[1])])
""")


@pytest.mark.parametrize(
    ("function", "gradient", "point"),
    [
        ("f", "off_by_one", "[1e-9, 2e-9]"),
        ("f", "off_by_a_tenth", "[1e-9, 2e-9]"),
        ("f", "off_by_one", "[1e-9, 1.0]"),
        ("g", "cos_flipped", "[1e-9, 0.0]"),
    ],
)
def test_the_taylor_test_does_not_pass_an_error_hidden_by_a_tiny_elements_curvature(
    cli, tmp_path, function, gradient, point
):
    path = tmp_path / "taylor.py"
    path.write_text(TAYLOR)
    result = cli(["check", "--python", f"{path}:{function}", "--grad", f"{path}:{gradient}",
                  "--set", f"x={point}", "--method", "taylor"])  # fmt: skip
    assert result.code == 1, result.out + result.err
    # and without --method taylor, the element-wise check fails it
    result = cli(["check", "--python", f"{path}:{function}", "--grad", f"{path}:{gradient}",
                  "--set", f"x={point}"])  # fmt: skip
    assert result.code == 1 and "passed" not in result.out, result.out + result.err


@pytest.mark.parametrize(
    ("program", "point"),
    [
        ("1/(x - 0.9999999999) + 1.0*(x > 1)", "1"),  # a step of 1 beside a slope of -1e20
        ("tanh((x - 0.99999999999)/1e-11)*1e6 + 1000*(x > 1)", "1"),
        ("tanh((x - 0.99999999)/1e-8)*1e6 + 1.0*(x > 1)", "1"),
        ("log(x - 0.9999999999968378)*1e6 + 1.0*(x > 1)", "1"),
        ("log(x) + 1e-9*(x > 1e-15)", "1e-15"),
        ("log(x) + 1e-9*(x >= 1e-20)", "1e-20"),
        ("sqrt(x) + 1e-12*(x > 1e-300)", "1e-300"),
        # hidden behind the slope or the curvature at the ladder's steps (before: passed),
        # plain over the ulps either side of a comparison's boundary
        ("1/x + 1000*(x > 1e-15)", "1e-15"),
        ("x*x + 1e-9*(x > -3)", "-3"),
        ("x*x + 1e-3*(x >= 1000)", "1000"),
    ],
)
def test_a_jump_at_the_point_is_never_passed_even_allowing_undecided(cli, program, point):
    argv = ["check", f"sum({program})", "--wrt", "x", "--set", f"x=[{point}]"]
    result = cli([*argv, "--format", "json"])
    assert result.code == 1, result.out + result.err
    variable = json.loads(result.out)["variables"]["x"]
    assert variable["verdict"] == "fail", variable["worst"]
    assert cli([*argv, "--allow-undecided"]).code == 1
