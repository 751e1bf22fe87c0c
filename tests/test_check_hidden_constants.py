"""The class of false passes found in the language checker: a comparison's result (a mask)
is a constant of the recorded graph, so a replay of it cannot see the jump or kink the
comparison makes at the point. The program is now run for real at points that cross any
such boundary within the ladder's first step (and at samples and the worst element), and
where runs and replay differ, the check runs the program at every point.

The oracle of which checks may pass: PyTorch's gradcheck on the same function (a jump at
the point fails there), and algebra (a kink is a non-differentiable point to note)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from agrad.cli import run as cli_run

torch = pytest.importorskip("torch")

# program, x, torch's function: each has a jump or a kink at an element of x
ON_A_BOUNDARY = {
    "step_added": ("sum(x + (x > 0))", [0.0, 1.0], lambda t: (t + (t > 0)).sum()),
    "step_scaled": ("sum(x * (x > 0.5))", [0.5, 2.0], lambda t: (t * (t > 0.5)).sum()),
    "step_ge": ("sum(x * (x >= 1))", [1.0, -2.0], lambda t: (t * (t >= 1)).sum()),
    # two jumps of opposite weight: moving both at once cancels in the sum
    "opposite_jumps": ("sum((x > 0) * [1, -1] + x)", [0.0, 0.0],
                       lambda t: ((t > 0) * torch.tensor([1.0, -1.0]) + t).sum()),
    "where_jump": ("sum(where(x < 1, x, x + 2))", [1.0, 0.0],
                   lambda t: torch.where(t < 1, t, t + 2).sum()),
}  # fmt: skip
KINKS = {
    "where_kink": ("sum(where(x > 0, x, 0))", [0.0, 1.0]),
    "where_abs": ("sum(where(x < 0, -x, x))", [0.0, -1.0]),
    "mask_into_exp": ("sum(exp(x * (x > 0)))", [0.0, 0.3]),
}
AWAY = {
    "step_away": ("sum(x + (x > 0))", [0.3, 1.0], lambda t: (t + (t > 0)).sum()),
    "where_away": ("sum(where(x < 1, x * x, x + 2))", [0.5, 3.0],
                   lambda t: torch.where(t < 1, t * t, t + 2).sum()),
    "near_not_on": ("sum(x * (x > 0))", [1e-3, -1e-3], lambda t: (t * (t > 0)).sum()),
}  # fmt: skip


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_run(argv)
    return code, out.getvalue(), err.getvalue()


def _check(program: str, x: list, *extra: str):
    code, out, _ = _run(["check", program, "--wrt", "x", "--set", f"x={x}", "--format", "json",
                         *extra])  # fmt: skip
    return code, json.loads(out)


def _torch_passes(fn, x) -> bool:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    return bool(torch.autograd.gradcheck(fn, (t,), raise_exception=False))


@pytest.mark.parametrize("extra", [(), ("--fast",), ("--dtype", "float32")])
@pytest.mark.parametrize("name", list(ON_A_BOUNDARY))
def test_a_jump_at_the_point_never_passes(name, extra):
    program, x, fn = ON_A_BOUNDARY[name]
    assert not _torch_passes(fn, x)  # the oracle: PyTorch's gradcheck fails it
    code, report = _check(program, x, *extra)
    assert code == 1, report
    assert not report["ok"]


@pytest.mark.parametrize("name", list(KINKS))
def test_a_kink_made_by_a_mask_is_noted_as_relu_s_is(name):
    """A kink at the point passes with a note (agrad's policy for relu at 0, where
    PyTorch's gradcheck fails both): the same verdict as relu's, never a plain pass."""
    program, x = KINKS[name]
    code, report = _check(program, x)
    relu_code, relu_report = _check("sum(relu(x))", [0.0, 1.0])
    assert relu_report["variables"]["x"]["verdict"] == "kink"
    assert (code, report["variables"]["x"]["verdict"]) == (relu_code, "kink")


@pytest.mark.parametrize("name", list(AWAY))
def test_away_from_boundaries_the_check_passes_as_pytorchs(name):
    program, x, fn = AWAY[name]
    assert _torch_passes(fn, x)
    code, report = _check(program, x)
    assert code == 0, report


def test_an_intermediate_through_a_comparison_is_refused_with_a_way_out():
    code, _, text = _run(["check", "h = x * 1; sum(h + (h > 0))", "--wrt", "h", "--set",
                          "x=[0.0, 1.0]"])  # fmt: skip
    assert code == 2
    assert text.startswith("error: ") and text.count("\n") <= 1
    assert "--wrt" in text and "inputs" in text


def test_an_intermediate_without_comparisons_is_still_checked():
    code, _, _ = _run(["check", "h = x * 2; sum(h ** 3)", "--wrt", "h", "--set", "x=[1.0, -0.5]"])
    assert code == 0


def test_runs_of_the_program_agree_with_the_replay_where_it_is_smooth():
    """The replay's stand-in is kept for a smooth program: the complex step is used."""
    x = "[-0.9, -0.4, 0.3, 0.8, 1.7]"
    code, out, _ = _run(["check", "sum(sin(x) * x ** 2)", "--wrt", "x", "--set", f"x={x}"])
    assert code == 0
    assert "complex step" in out.split("check passed")[-1]
