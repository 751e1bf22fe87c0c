"""--explain reports the same gradients as plain eval, for every shape of program: the
output a variable itself (gradient 1, no step), a constant output, an intermediate
variable, several consumers, a non-scalar output with --grad-output."""

from __future__ import annotations

import json

import pytest

PROGRAMS = {
    "the output is the variable": ("x", ["--set", "x=2", "--wrt", "x"]),
    "the output is a vector variable": (
        "x",
        ["--set", "x=[2, 3]", "--wrt", "x", "--grad-output", "[1, -2]"],
    ),  # fmt: skip
    "a constant output": ("z = x * 2; 3 * y", ["--set", "x=2", "--set", "y=4", "--wrt", "x"]),
    "an intermediate variable": ("h = x * x; sum(h * 3)", ["--set", "x=[1, 2]", "--wrt", "x,h"]),
    "several consumers": ("sum(x * x + x)", ["--set", "x=[1, -2]", "--wrt", "x"]),
    "the tutorial": (
        "sum((w*x+b-y)**2)",
        ["--wrt", "w,b", "--set", "x=[1,2]", "--set", "y=[5,7]", "--set", "w=1", "--set", "b=0"],
    ),  # fmt: skip
}


@pytest.mark.parametrize("case", PROGRAMS, ids=list(PROGRAMS))
def test_explain_reports_the_gradients_eval_reports(cli, case):
    program, args = PROGRAMS[case]
    plain = cli(["eval", program, *args, "--format", "json"])
    explained = cli(["eval", program, *args, "--explain", "--format", "json"])
    assert plain.code == 0 and explained.code == 0, plain.err + explained.err
    a, b = json.loads(plain.out), json.loads(explained.out)
    assert a["grads"] == b["grads"] and a["unused"] == b["unused"] and a["value"] == b["value"]
