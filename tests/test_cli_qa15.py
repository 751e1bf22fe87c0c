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


def test_a_hand_gradient_may_return_every_arguments_gradient(cli, tmp_path):
    # a backward returns gradients for every input, data included: checking a subset of
    # them (--wrt W) needs no wrapper; an entry for no argument at all is still an error
    # (QA round 17)
    path = tmp_path / "layer.py"
    path.write_text(
        "import numpy as np\n"
        "def f(x, W): return np.sum(np.tanh(x @ W) ** 2)\n"
        "def g(x, W):\n"
        "    t = np.tanh(x @ W); d = 2 * t * (1 - t**2)\n"
        "    return {'x': d @ W.T, 'W': x.T @ d}\n"
        "def g_typo(x, W):\n"
        "    return {**g(x, W), 'w2': 0}\n"
    )
    base = ["check", "--python", f"{path}:f", "--set", "x=[[1,2],[3,4]]", "--set",
            "W=[[0.1,0.2],[0.3,-0.1]]", "--wrt", "W"]  # fmt: skip
    assert cli([*base, "--grad", f"{path}:g"]).code == 0
    r = cli([*base, "--grad", f"{path}:g_typo"])
    assert r.code == 2 and "'w2', which is no argument" in r.err, r.err
