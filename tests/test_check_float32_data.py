"""float32 programs whose replay holds a value fixed (a comparison, where, maximum, max),
on data that float32 cannot hold exactly (0.1, 0.7, ...).

The numeric side replays the recorded float32 graph in float64, with its constants as
float32 rounded them; where a fixed value may change, it runs the program in float64
instead. That run re-read the --set values in float64: 0.1 rather than float32's
0.10000000149, a function 1e-8 of f away from the replay, and differences that mixed the
two (f at the point from the replay, f beside it from the run) saw noise of 1e-8 / h:
right gradients were undecided or failed as "the function jumps" (QA round 11). The run
now takes the values as float32 rounded them (`Session.widened`).

The oracle is algebra: each program's gradient as a formula, and the same formula 1% off
as a wrong claim, which must fail.
"""

from __future__ import annotations

import numpy as np
import pytest

# (program, its gradient with respect to w)
PROGRAMS = [
    ("sum(where(x*w > 0.05, x*w, 0.5*x*w))", "where(x*w > 0.05, x, 0.5*x)"),
    ("sum(relu(x*w - 0.1) * x)", "where(x*w - 0.1 > 0, x*x, 0*x)"),
    ("sum(maximum(x*w, 0.3*w))", "where(x*w > 0.3*w, x, 0.3 + 0*x)"),
    ("max(x*w)", "where(x*w == max(x*w), x, 0*x)"),
    ("sum(where(w > 0.2, w**2, 0.1*w) * x)", "where(w > 0.2, 2*w*x, 0.1*x)"),
    ("sum(abs(x*w - 0.2) * (w > 0))", "where(w > 0, sign(x*w - 0.2) * x, 0*x)"),
]


def _data(seed: int) -> tuple[str, str]:
    """Decimal data no float32 holds exactly, away from every program's boundaries."""
    rng = np.random.default_rng(seed)
    while True:
        x = np.round(rng.uniform(0.1, 1.5, 5), 6)
        w = np.round(rng.uniform(-1.0, 1.5, 5), 6)
        xw = x * w
        gaps = [xw - 0.05, xw - 0.1, w * (x - 0.3), w - 0.2, xw - 0.2, w]
        top = np.sort(xw)
        if min(np.abs(g).min() for g in gaps) > 0.05 and top[-1] - top[-2] > 0.05:
            break
    return ",".join(map(repr, x.tolist())), ",".join(map(repr, w.tolist()))


CASES = [
    pytest.param(program, gradient, seed, id=f"{program}-{seed}")
    for program, gradient in PROGRAMS
    for seed in (0, 1, 2)
]


def _args(program: str, seed: int) -> list[str]:
    x, w = _data(seed)
    return [program, "--wrt", "w", "--set", f"x=[{x}]", "--set", f"w=[{w}]",
            "--dtype", "float32"]  # fmt: skip


def test_the_data_are_not_float32_numbers():
    x, w = _data(0)
    values = np.array([float(v) for v in (x + "," + w).split(",")])
    assert (values.astype(np.float32).astype(np.float64) != values).sum() >= 8


@pytest.mark.parametrize(("program", "gradient", "seed"), CASES)
def test_a_right_gradient_passes(check_json, program, gradient, seed):
    report = check_json(*_args(program, seed), "--expect", f"w={gradient}")
    counts = report["variables"]["w"]["counts"]
    assert report["ok"] and counts["pass"] == 5, counts


@pytest.mark.parametrize(("program", "gradient", "seed"), CASES)
def test_a_gradient_one_percent_off_fails(check_json, program, gradient, seed):
    report = check_json(*_args(program, seed), "--expect", f"w=1.01*({gradient})")
    assert not report["ok"]
