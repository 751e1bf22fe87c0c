"""QA round 27: zero gradients beside a kink, where f is flat on one side.

relu(x) + 1 at x = -1e-5: the claim 0 is the derivative (relu is flat left of 0) and
PyTorch's gradcheck passes it; every finite difference is exactly 0, but the steps that
stay off the kink are below 1e-5, whose rounding bound over f = 1 (5e-10) is above the
absolute 2e-10 at which a zero claim is decided, and the check was undecided (exit 1).
f does not move at all, bit for bit, at any of the ladder's steps on the left: its
derivative is within ulp(f)/2^-10 there. Truth: algebra (each function below is constant
on one side of the point, as far as the ladder's first step).
"""

from __future__ import annotations

import json

import pytest

FLAT_ON_ONE_SIDE = [
    ("relu(x) + 1", "-1e-5"),
    ("relu(x) + 100", "-1e-4"),
    ("maximum(x, 0) + 1", "-1e-6"),
    ("clip(x, 0, 5) + 1", "-1e-8"),
    ("relu(x)*2 + 1", "-1e-6"),
    ("relu(x - 1) + 3", "0.99999"),
]


def _check(cli, *argv: str) -> tuple[int, dict]:
    result = cli(["check", *argv, "--format", "json"])
    return result.code, json.loads(result.out)


@pytest.mark.parametrize(("program", "point"), FLAT_ON_ONE_SIDE)
def test_a_zero_gradient_flat_on_one_side_passes(cli, program, point):
    code, report = _check(cli, program, "--wrt", "x", "--set", f"x={point}")
    assert code == 0, report["variables"]["x"]


def test_a_dead_unit_just_below_its_threshold_passes(cli):
    # relu(2w + b) + 1 with 2w + b = -1e-5: both gradients are 0
    code, report = _check(cli, "relu(w*2 + b) + 1", "--wrt", "w,b", "--set", "w=0.25",
                          "--set", "b=-0.50001")  # fmt: skip
    assert code == 0, report


@pytest.mark.parametrize("wrong", ["1e-9", "1e-6", "1"])
def test_a_nonzero_claim_there_does_not_pass(cli, wrong):
    code, _ = _check(cli, "relu(x) + 1", "--wrt", "x", "--set", "x=-1e-5", "--expect",
                     f"x={wrong}")  # fmt: skip
    assert code == 1


NUMPY = """
import numpy as np

def large(w):  # 1e12 + 1e-3·sum(w): flat to every step below 0.06, yet its gradient is 1e-3
    return float(1e12 + 1e-3 * np.sum(w))

def zero(w):
    return np.zeros_like(w)
"""


def test_a_function_flat_only_by_rounding_does_not_pass_a_zero_claim(cli, tmp_path, monkeypatch):
    # f rounds to the same value at every step of the ladder on both sides, but the bound
    # that gives, ulp(1e12)/2^-10 = 0.12, is far above what decides a zero claim
    (tmp_path / "f.py").write_text(NUMPY)
    monkeypatch.chdir(tmp_path)
    code, report = _check(cli, "--python", "f.py:large", "--grad", "f.py:zero", "--set",
                          "w=[1.0, 2.0]")  # fmt: skip
    assert code == 1 and report["variables"]["w"]["verdict"] != "pass"
