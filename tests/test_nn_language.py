"""The language's neural-network functions through the CLI: `agrad check` and
`agrad eval --explain` reach convolution, pooling, normalization and the losses; values
agree with PyTorch's; bad shapes and arguments exit 2 with one `error:` line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import require_torch

IMG = "reshape(sin(arange(32) * 1.3), [1, 2, 4, 4])"
W = "reshape(cos(arange(24) * 0.7), [3, 2, 2, 2])"
LOGITS = "[[0.5, -1.0, 0.25, 0.8], [1.5, 0.2, -0.7, 0.1]]"


def _sets(program):
    """--set for the variables the program uses (setting an unused one is an error)."""
    values = {"img": IMG, "w": W}
    return [a for k, v in values.items() if re.search(rf"\b{k}\b", program)
            for a in ("--set", f"{k}={v}")]  # fmt: skip


def _json(result):
    assert result.code == 0, result.err
    return json.loads(result.out)


@pytest.mark.parametrize("program", [
    "sum(tanh(conv2d(img, w, stride=2, padding=1)))",
    "sum(conv2d(img, w, [0.1, -0.2, 0.3], dilation=2, padding=[1, 2]) ** 2)",
    "sum(max_pool2d(img, 2, stride=1, padding=1) * img[0, 0, 0, 0])",
    "sum(avg_pool2d(img, 3, stride=2, padding=1, ceil_mode=true) ** 2)",
    "sum(adaptive_avg_pool2d(img, [3, 2]) ** 3)",
    "sum(batch_norm(img, weight=[1.5, 0.5], bias=[0.1, 0.2]) ** 3)",
    "sum(batch_norm(img, running_mean=[0.1, 0.2], running_var=[1.5, 0.7], training=false) ** 3)",
    "sum(layer_norm(img, [4, 4]) ** 3)",
    "cross_entropy(reshape(img, [8, 4]), [0, 3, 1, 1, 2, 0, 3, 2], label_smoothing=0.1)",
    "cross_entropy(reshape(img, [8, 4]), softmax(reshape(img, [8, 4]) * 2, axis=1))",
    "mse_loss(gelu(img), erf(img))",
])  # fmt: skip
def test_check_passes_on_the_nn_functions(cli, program):
    out = _json(cli(["check", program, "--wrt", "img", *_sets(program), "--format", "json"]))
    assert out["ok"] is True and out["variables"]["img"]["compared"] > 0


def test_explain_walks_through_the_nn_ops(cli):
    out = _json(cli(["eval", "cross_entropy(conv2d(img, w)[:, :, 0, 0] * 1, [2])", "--wrt",
                     "img,w", "--set", f"img={IMG}", "--set", f"w={W}", "--explain",
                     "--format", "json"]))  # fmt: skip
    nodes = [step["node"] for step in out["steps"]]
    assert nodes[0].startswith("NllLossBackward0")
    assert any(n.startswith("LogSoftmaxBackward0") for n in nodes)
    assert any(n.startswith("ConvolutionBackward0") for n in nodes)
    rules = " ".join(step["rule"] for step in out["steps"])
    assert "windows" in rules and "weight[t]" in rules


def test_values_match_pytorch(cli):
    torch = require_torch()
    F = torch.nn.functional
    img = torch.sin(torch.arange(32, dtype=torch.float64) * 1.3).reshape(1, 2, 4, 4)
    w = torch.cos(torch.arange(24, dtype=torch.float64) * 0.7).reshape(3, 2, 2, 2)
    cases = {
        "sum(conv2d(img, w, stride=2, padding=1) ** 2)": (F.conv2d(img, w, None, 2, 1) ** 2).sum(),
        "sum(max_pool2d(img, 3, stride=1, padding=1))": F.max_pool2d(img, 3, 1, 1).sum(),
        "cross_entropy(reshape(img, [8, 4]), [0, 3, 1, 1, 2, 0, 3, 2])":
            F.cross_entropy(img.reshape(8, 4), torch.tensor([0, 3, 1, 1, 2, 0, 3, 2])),
        "sum(one_hot([2, 0, 1], 4) * arange(4))": torch.tensor(3.0),
    }  # fmt: skip
    for program, expected in cases.items():
        out = _json(cli(["eval", program, *_sets(program), "--format", "json"]))
        assert out["value"] == pytest.approx(expected.item(), rel=1e-12), program


@pytest.mark.parametrize("program,words", [
    ("conv2d(img, reshape(w, [3, 4, 2, 1]))", "expected input[1, 2, 4, 4] to have 4 channels"),
    ("conv2d(reshape(img, [32]), w)", "expects an input of 4 dimensions"),
    ("max_pool2d(img, 2, padding=2)", "pad should be at most half"),
    ("cross_entropy([[1, 2], [3, 4]], [0, 2])", "Target 2 is out of bounds"),
    ("cross_entropy([[1, 2], [3, 4]], [0, 0.5])", "must be whole numbers"),
    ("batch_norm([[1, 2]])", "more than 1 value per channel"),
    ("batch_norm(img, running_mean=[0, 0])", "training=false"),
    ("layer_norm(img, [3])", "normalized_shape=[3]"),
    ("one_hot([0.5])", "non-negative whole numbers"),
])  # fmt: skip
def test_bad_input_exits_2_with_one_line(cli, program, words):
    result = cli(["eval", program, *_sets(program)])
    assert result.code == 2, result.err
    assert result.err.startswith("error: ") and words in result.err
    assert "Traceback" not in result.err


def test_functions_lists_them(cli):
    result = cli(["functions"])
    assert result.code == 0
    for name in ("conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
                 "layer_norm", "cross_entropy", "mse_loss", "one_hot", "gelu", "erf"):  # fmt: skip
        assert name in result.out
    np.testing.assert_equal(result.err, "")
