"""`agrad check --python FILE.py:NAME`: the user's own code, checked by the same machinery.

The checked code is written here, in the test, to a temporary file: a NumPy layer with
hand-written gradients (right, transposed, unscaled), a function written with
``import agrad as torch``, PyTorch functions (one with a custom autograd Function whose
backward is 1% off), and every way the user's file can be wrong.
"""

from __future__ import annotations

import json
import textwrap

import pytest

NUMPY_LAYER = '''
import numpy as np

def softmax_loss(x, W, b, y):
    """Mean cross-entropy of softmax(x @ W + b) against one-hot labels y."""
    z = x @ W + b
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return -np.sum(y * np.log(p)) / x.shape[0]

def _probabilities(x, W, b):
    z = x @ W + b
    z = z - z.max(axis=1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)

def softmax_loss_grad(x, W, b, y):
    dz = (_probabilities(x, W, b) - y) / x.shape[0]
    return x.T @ dz, dz.sum(axis=0)

def softmax_loss_grad_transposed(x, W, b, y):
    dW, db = softmax_loss_grad(x, W, b, y)
    return dW.T.reshape(dW.shape), db

def softmax_loss_grad_unscaled(x, W, b, y):
    dz = _probabilities(x, W, b) - y          # forgot the 1/N of the mean
    return x.T @ dz, dz.sum(axis=0)

def relu_layer(x, W):
    return np.maximum(x @ W, 0.0)

def relu_layer_jacobian(x, W):
    """d out[i, k] / d W[j, l] = x[i, j] [k == l] [x @ W > 0][i, k]."""
    active = (x @ W > 0).astype(float)
    n, m = x.shape[0], W.shape[1]
    jac = np.zeros((n, m) + W.shape)
    for k in range(m):
        jac[:, k, :, k] = x * active[:, k:k + 1]
    return jac
'''

AGRAD_LAYER = """
import agrad as torch

def softmax_loss(x, W, b, y):
    logits = x @ W + b
    return -(y * torch.log_softmax(logits, dim=1)).sum() / x.shape[0]

def scaled(x, W, scale=2.0):
    return (torch.tanh(x @ W) * scale).sum()
"""

TORCH_LAYER = """
import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * 1.01          # 1% off

def cube_loss(x):
    return Cube.apply(x).sum()

def tanh_loss(x, W):
    return torch.tanh(x @ W).pow(2).sum()
"""

X = "x=[[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]"
W = "W=[[0.2, -0.4], [0.7, 0.1], [-0.3, 0.5]]"
B = "b=[0.1, -0.2]"
Y = "y=[[1, 0], [0, 1]]"


@pytest.fixture
def files(tmp_path, monkeypatch):
    for name, text in {"np_layer": NUMPY_LAYER, "ag_layer": AGRAD_LAYER,
                       "torch_layer": TORCH_LAYER}.items():  # fmt: skip
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(cli, *argv):
    result = cli(["check", *argv])
    assert "Traceback" not in result.err
    return result


def as_json(result):
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


# ---- NumPy functions with hand-written gradients ------------------------------------------


def test_a_correct_hand_gradient_passes(cli, files):
    result = run(cli, "--python", "np_layer.py:softmax_loss", "--grad",
                 "np_layer.py:softmax_loss_grad", "--set", X, "--set", W, "--set", B, "--set",
                 Y, "--wrt", "W,b", "--format", "json")  # fmt: skip
    report = as_json(result)
    assert result.code == 0 and report["ok"]
    assert set(report["variables"]) == {"W", "b"}


@pytest.mark.parametrize("grad", ["softmax_loss_grad_transposed", "softmax_loss_grad_unscaled"])
def test_a_wrong_hand_gradient_fails_naming_the_element(cli, files, grad):
    result = run(cli, "--python", "np_layer.py:softmax_loss", "--grad", f"np_layer.py:{grad}",
                 "--set", X, "--set", W, "--set", B, "--set", Y, "--wrt", "W,b")  # fmt: skip
    assert result.code == 1
    assert "W: fail" in result.out and "the rule is wrong: at W[" in result.out


def test_the_wrt_default_is_every_parameter_given_a_floating_value(cli, files):
    """No --wrt: the parameters --set gave floating values (scale keeps its default and
    is not checked)."""
    report = as_json(run(cli, "--python", "ag_layer.py:scaled", "--set", X, "--set", W,
                         "--format", "json"))  # fmt: skip
    assert report["ok"] and set(report["variables"]) == {"x", "W"}


def test_a_hand_jacobian_of_a_vector_output(cli, files):
    """relu(x @ W) is a matrix: the hand gradient is the Jacobian block (2, 2) + (3, 2)."""
    args = ["--python", "np_layer.py:relu_layer", "--grad", "np_layer.py:relu_layer_jacobian",
            "--set", X, "--set", W, "--wrt", "W"]  # fmt: skip
    report = as_json(run(cli, *args, "--format", "json"))
    assert report["ok"] and report["variables"]["W"]["compared"] == 2 * 2 * 3 * 2
    with_output = as_json(run(cli, *args, "--grad-output", "[[1, 2], [3, 4]]", "--format", "json"))
    assert with_output["ok"] and with_output["variables"]["W"]["compared"] == 3 * 2


def test_a_float32_function_is_checked_in_float32_and_float64(cli, files):
    report = as_json(
        run(
            cli,
            "--python",
            "np_layer.py:softmax_loss",
            "--grad",
            "np_layer.py:softmax_loss_grad",
            "--set",
            X,
            "--set",
            W,
            "--set",
            B,
            "--set",
            Y,
            "--wrt",
            "W,b",
            "--dtype",
            "float32",
            "--format",
            "json",
        )
    )
    assert report["ok"] and report["dtype"] == "float32"  # fmt: skip


# ---- functions written with agrad, and three-way checks --------------------------------


def test_an_agrad_function_is_checked_by_autograd(cli, files):
    result = run(cli, "--python", "ag_layer.py:softmax_loss", "--set", X, "--set", W, "--set",
                 B, "--set", Y, "--wrt", "W,b")  # fmt: skip
    assert result.code == 0, result.out


def test_keyword_parameters_keep_their_defaults_or_take_set_values(cli, files):
    base = ["--python", "ag_layer.py:scaled", "--set", X, "--set", W, "--wrt", "W"]
    assert run(cli, *base).code == 0
    assert run(cli, *base, "--set", "scale=-3.5").code == 0


def test_three_way_hand_gradient_beside_autograd(cli, files):
    args = ["--python", "ag_layer.py:softmax_loss", "--set", X, "--set", W, "--set", B,
            "--set", Y, "--wrt", "W,b", "--format", "json"]  # fmt: skip
    good = as_json(run(cli, *args, "--grad", "np_layer.py:softmax_loss_grad"))
    assert good["ok"] and good["variables"]["W"]["expect"]["ok"]
    bad = as_json(run(cli, *args, "--grad", "np_layer.py:softmax_loss_grad_unscaled"))
    assert bad["ok"] is False
    assert bad["variables"]["W"]["expect"]["verdict"] == (
        "the formula disagrees with autograd and finite differences (which agree)"
    )


# ---- PyTorch functions -------------------------------------------------------------------


def test_a_torch_function_with_a_one_percent_wrong_backward_is_caught(cli, files):
    pytest.importorskip("torch")
    result = run(cli, "--python", "torch_layer.py:cube_loss", "--set", "x=[0.5, -1.5, 2.0]")
    assert result.code == 1
    assert "x: fail" in result.out and "Taylor remainder" in result.out
    good = run(cli, "--python", "torch_layer.py:tanh_loss", "--set", X, "--set", W)
    assert good.code == 0, good.out


# ---- the user's file is wrong: exit 2, one clear line, no traceback ------------------------


BAD = {
    "missing file": (["--python", "nothere.py:f", "--set", "x=1"], "no such file"),
    "syntax error": (["--python", "broken.py:f", "--set", "x=1"], "syntax error at line 1"),
    "import raises": (["--python", "raises.py:f", "--set", "x=1"], "importing raises.py raised"),
    "missing name": (["--python", "np_layer.py:nothing", "--set", "x=1"], "has no function"),
    "not callable": (["--python", "values.py:CONSTANT", "--set", "x=1"], "not a function"),
    "function raises": (
        ["--python", "values.py:boom", "--grad", "values.py:grad", "--set", "x=[1, 2]"],
        "raised ZeroDivisionError",
    ),  # fmt: skip
    "wrong return type": (
        ["--python", "values.py:text", "--grad", "values.py:grad", "--set", "x=[1, 2]"],
        "must return numbers",
    ),  # fmt: skip
    "grad count": (
        ["--python", "values.py:square", "--grad", "values.py:two", "--set", "x=[1, 2]"],
        "returned 2 array(s)",
    ),  # fmt: skip
    "grad shape": (
        ["--python", "values.py:square", "--grad", "values.py:long", "--set", "x=[1, 2]"],
        "has shape (5,)",
    ),  # fmt: skip
    "unknown parameter": (
        ["--python", "values.py:square", "--grad", "values.py:grad", "--set", "z=[1, 2]"],
        "has no parameter 'z'",
    ),  # fmt: skip
    "missing parameter": (
        ["--python", "values.py:square", "--grad", "values.py:grad"],
        "give it with --set x=VALUE",
    ),  # fmt: skip
    "numpy without grad": (
        ["--python", "values.py:square", "--set", "x=[1, 2]"],
        "give its hand-written gradient with --grad",
    ),  # fmt: skip
    "bad spec": (["--python", "values.py", "--set", "x=1"], "expected FILE.py:NAME"),
    "program too": (["sum(x)", "--python", "values.py:square"], "drop the PROGRAM"),
    "grad alone": (
        ["sum(x)", "--grad", "values.py:grad", "--set", "x=1"],
        "--grad goes with --python",
    ),  # fmt: skip
}
VALUES = """
import numpy as np
CONSTANT = 3
def square(x): return np.sum(x ** 2)
def grad(x): return 2 * x
def two(x): return 2 * x, x
def long(x): return np.zeros(5)
def boom(x): return 1 / 0
def text(x): return "not a number"
"""


@pytest.mark.parametrize("case", list(BAD))
def test_bad_user_code_exits_2_with_one_clear_line(cli, files, case):
    (files / "broken.py").write_text("def f(x:\n    return x\n")
    (files / "raises.py").write_text("raise RuntimeError('at import')\n")
    (files / "values.py").write_text(textwrap.dedent(VALUES))
    argv, words = BAD[case]
    result = run(cli, *argv)
    assert result.code == 2, (result.out, result.err)
    assert result.err.startswith("error: ") and words in result.err
    assert result.out == ""


def test_the_users_traceback_only_with_agrad_debug(cli, files, monkeypatch):
    (files / "values.py").write_text(textwrap.dedent(VALUES))
    argv = ["--python", "values.py:boom", "--grad", "values.py:grad", "--set", "x=[1, 2]"]
    assert "Traceback" not in run(cli, *argv).err
    monkeypatch.setenv("AGRAD_DEBUG", "1")
    result = cli(["check", *argv])
    assert result.code == 2 and "ZeroDivisionError" in result.err and "Traceback" in result.err


def test_a_module_path_works_too(cli, files, monkeypatch):
    monkeypatch.syspath_prepend(str(files))
    result = run(cli, "--python", "np_layer:softmax_loss", "--grad",
                 "np_layer:softmax_loss_grad", "--set", X, "--set", W, "--set", B, "--set", Y,
                 "--wrt", "W,b")  # fmt: skip
    assert result.code == 0, result.err


# ---- the suite form: python = "FILE.py:NAME" ---------------------------------------------


def toml_set(*assignments: str) -> str:
    """--set NAME=VALUE assignments as a TOML inline table: { NAME = 'VALUE', ... }."""
    return "{ " + ", ".join(f"{a.split('=', 1)[0]} = '{a.split('=', 1)[1]}'"
                            for a in assignments) + " }"  # fmt: skip


def test_a_suite_checks_python_cases_with_golden_values_and_junit(cli, files):
    all_four, two = toml_set(X, W, B, Y), toml_set(X, W)
    (files / "checks.toml").write_text(
        textwrap.dedent(f"""
        [[case]]
        name = "hand gradient"
        python = "np_layer.py:softmax_loss"
        grad = "np_layer.py:softmax_loss_grad"
        wrt = ["W", "b"]
        set = {all_four}

        [[case]]
        name = "autograd"
        python = "ag_layer.py:scaled"
        set = {two}
        allow_undecided = true

        [[case]]
        name = "wrong hand gradient"
        python = "np_layer.py:softmax_loss"
        grad = "np_layer.py:softmax_loss_grad_unscaled"
        wrt = ["W", "b"]
        set = {all_four}
    """)
    )
    first = run(cli, "--suite", "checks.toml", "--update-golden", "--junit-xml", "r/j.xml",
                "--format", "json")  # fmt: skip
    outcome = {c["name"]: c["ok"] for c in json.loads(first.out)["cases"]}
    assert outcome == {"hand gradient": True, "autograd": True, "wrong hand gradient": False}
    assert first.code == 1 and (files / "checks.golden.json").exists()
    assert "wrong hand gradient" in (files / "r" / "j.xml").read_text()
    again = json.loads(run(cli, "--suite", "checks.toml", "--format", "json").out)
    # (the wrong one recorded nothing: no reference of a failing check)
    assert [c["golden"] for c in again["cases"]] == ["match", "match", "missing"]


@pytest.mark.parametrize(
    "extra, words",
    [('python = "../outside.py:f"', "outside the suite's folder"),
     ('python = "np_layer.py:softmax_loss"\ngrad = 3', "grad must be a string"),
     ('program = "sum(x)"\ngrad = "np_layer.py:g"', "goes with python"),
     ('python = "np_layer.py:softmax_loss"\nmax_seconds = -1', "max_seconds must be")],
)  # fmt: skip
def test_a_bad_python_case_is_an_error_case(cli, files, extra, words):
    (files / "bad.toml").write_text(f'[[case]]\nname = "c"\n{extra}\nwrt = ["x"]\n'
                                    'set = { x = "[1, 2]" }\n')  # fmt: skip
    result = run(cli, "--suite", "bad.toml", "--format", "json")
    case = json.loads(result.out)["cases"][0]
    assert result.code == 1 and case["ok"] is False and words in case["error"], case
