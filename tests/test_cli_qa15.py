"""QA round 15, the command line: what its options accept.

- ``--grad-output`` broadcast any compatible shape ([1, 2] for a (2, 2) output), where the
  README says any shape but a single number must match (the Python API refuses it too, in
  PyTorch's words);
- ``fit --lr nan`` (and inf, ``--momentum nan``, ``--max-seconds nan``) ran, and diverged:
  a range check of ``>= 0`` lets nan through (nan < 0 is false).
"""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize(("given", "code"), [("[1,2]", 2), ("[[1,2]]", 2), ("1", 0),
                                             ("[[1,2],[3,4]]", 0), ("[[[1]]]", 0)])  # fmt: skip
def test_grad_output_has_the_outputs_shape_or_is_one_number(cli, given, code):
    r = cli(["eval", "A*2", "--set", "A=[[1,2],[3,4]]", "--wrt", "A", "--grad-output", given,
             "--format", "json"])  # fmt: skip
    assert r.code == code, r.err
    if code == 0:  # d/dA sum(g·2A) = 2g, g broadcast from one number or given whole
        g = [[1, 1], [1, 1]] if given in ("1", "[[[1]]]") else json.loads(given)
        assert json.loads(r.out)["grads"]["A"] == [[2 * v for v in row] for row in g]
    else:
        assert r.err.startswith("error: --grad-output has shape") and r.out == ""


@pytest.mark.parametrize("option", [["--lr", "nan"], ["--lr", "inf"], ["--momentum", "nan"],
                                    ["--max-seconds", "nan"]])  # fmt: skip
def test_fit_refuses_options_that_are_not_numbers(cli, option):
    r = cli(["fit", "sum((w-1)**2)", "--set", "w=0", "--wrt", "w", *option])
    assert r.code == 2 and r.err.startswith(f"error: {option[0]} must be"), r.err
