"""The command line end to end: values, gradients, Jacobians, Hessians, files, formats.

Expected numbers come from hand derivation, NumPy algebra or central finite
differences computed here, never from agrad's own output. Most runs go
through `agrad.cli.run` in-process (the `cli` fixture); the golden table, the
piped-output check and `--version` run the installed executable (`exe`).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys

import numpy as np
import pytest
from conftest import TUTORIAL_ARGS

MAIN = ["eval", *TUTORIAL_ARGS]
# By hand: r = w*x + b - y = [-4, -5]; loss = 16 + 25 = 41;
# d/dw = sum(2 r x) = 2(-4 - 10) = -28; d/db = sum(2 r) = -18.

PROGRAM = """x = [1., 2.]
y = [5., 7.]
w = tensor(1.0, requires_grad=true)   # a leaf that requires grad
b = tensor(0.0, requires_grad=true)
loss = sum((w*x + b - y)**2)
loss
"""

GOLDEN = """\
output
┌─────────┬──────────────┐
│ value   │           41 │
│ shape   │           () │
│ grad_fn │ SumBackward0 │
└─────────┴──────────────┘
w (input, shape ())
┏━━━━━━━┳━━━━━━━┳━━━━━━━━━━┓
┃ index ┃ value ┃ gradient ┃
┡━━━━━━━╇━━━━━━━╇━━━━━━━━━━┩
│ ()    │     1 │      -28 │
└───────┴───────┴──────────┘
b (input, shape ())
┏━━━━━━━┳━━━━━━━┳━━━━━━━━━━┓
┃ index ┃ value ┃ gradient ┃
┡━━━━━━━╇━━━━━━━╇━━━━━━━━━━┩
│ ()    │     0 │      -18 │
└───────┴───────┴──────────┘
"""


def lit(array) -> str:
    """A NumPy array as an agrad literal, at full precision."""
    return json.dumps(np.asarray(array, dtype=np.float64).tolist())


def as_json(result) -> dict:
    assert result.code == 0, result.err
    assert result.err == ""
    return json.loads(result.out)


def numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


# ---- the main example ---------------------------------------------------------------------


def test_main_example_golden_table(exe):
    result = exe(MAIN)
    assert result.code == 0
    assert result.err == ""
    assert [line.rstrip() for line in result.out.splitlines()] == GOLDEN.splitlines()


def test_main_example_table(cli):
    result = cli(MAIN)
    assert result.code == 0 and result.err == ""
    assert "SumBackward0" in result.out
    assert "w (input" in result.out and "b (input" in result.out
    assert {41.0, -28.0, -18.0} <= set(numbers(result.out))


def test_main_example_json(cli):
    payload = as_json(cli([*MAIN, "--format", "json"]))
    assert payload["value"] == 41 and payload["shape"] == []
    assert payload["grads"] == {"w": -28, "b": -18}
    assert all(isinstance(v, (int, float)) for v in [payload["value"], *payload["grads"].values()])


def test_main_example_csv(cli):
    result = cli([*MAIN, "--format", "csv"])
    assert result.code == 0 and result.err == ""
    rows = list(csv.DictReader(io.StringIO(result.out)))
    grads = {r["variable"]: float(r["gradient"]) for r in rows if r["variable"] in ("w", "b")}
    assert grads == {"w": -28.0, "b": -18.0}
    (output,) = [r for r in rows if r["variable"] == "output"]
    assert float(output["value"]) == 41.0


def test_main_example_with_typer_clirunner():
    from typer.testing import CliRunner

    from agrad.cli.app import app

    result = CliRunner().invoke(app, [*MAIN, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["grads"] == {"w": -28, "b": -18}


def test_main_example_matches_torch(cli):
    torch = pytest.importorskip("torch")
    x, y = (
        torch.tensor([1.0, 2.0], dtype=torch.float64),
        torch.tensor([5.0, 7.0], dtype=torch.float64),
    )
    w = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    loss = ((w * x + b - y) ** 2).sum()
    loss.backward()
    payload = as_json(cli([*MAIN, "--format", "json"]))
    assert payload["value"] == pytest.approx(loss.item())
    assert payload["grads"] == pytest.approx({"w": w.grad.item(), "b": b.grad.item()})


# ---- the same as a program ----------------------------------------------------------------


def test_program_marks_its_own_leaves(cli):
    payload = as_json(cli(["eval", PROGRAM, "--format", "json"]))
    assert payload["value"] == 41
    assert payload["grads"] == {"w": -28, "b": -18}


def test_program_wrt_intermediate_loss_is_one(cli):
    payload = as_json(cli(["eval", PROGRAM, "--wrt", "w,loss", "--format", "json"]))
    assert payload["grads"]["w"] == -28
    assert payload["grads"]["loss"] == 1  # d loss / d loss


def test_wrt_intermediate_matches_algebra(cli):
    x = np.array([0.5, -1.5, 2.0])
    program = f"x = {lit(x)}\nh = tanh(x)\nout = sum(h**2)\nout"
    payload = as_json(cli(["eval", program, "--wrt", "h,x", "--format", "json"]))
    h = np.tanh(x)
    np.testing.assert_allclose(payload["value"], np.sum(h**2), rtol=1e-12)
    np.testing.assert_allclose(payload["grads"]["h"], 2 * h, rtol=1e-12)
    np.testing.assert_allclose(payload["grads"]["x"], 2 * h * (1 - h**2), rtol=1e-12)


# ---- --grad-output ------------------------------------------------------------------------

VJP = ["eval", "3*a**3 - b**2", "--set", "a=[2,3]", "--set", "b=[6,4]", "--wrt", "a,b"]


def test_grad_output_vector_jacobian_product(cli):
    payload = as_json(cli([*VJP, "--grad-output", "[1,1]", "--format", "json"]))
    assert payload["value"] == [3 * 8 - 36, 3 * 27 - 16]
    assert payload["grads"]["a"] == [36, 81]  # 9 a**2
    assert payload["grads"]["b"] == [-12, -8]  # -2 b


def test_grad_output_weights_the_rows(cli):
    payload = as_json(cli([*VJP, "--grad-output", "[2,-1]", "--format", "json"]))
    assert payload["grads"] == {"a": [72, -81], "b": [-24, 8]}


def test_non_scalar_output_without_grad_output(cli):
    result = cli(VJP)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ")
    assert "--grad-output" in result.err and "agrad jacobian" in result.err


# ---- jacobian -----------------------------------------------------------------------------


def test_jacobian_of_the_help_example(cli):
    payload = as_json(
        cli(
            [
                "jacobian",
                "[x[0]**2 + 3*x[1], x[1]**2 + 2*x[0]]",
                "--set",
                "x=[2,3]",
                "--wrt",
                "x",
                "--format",
                "json",
            ]
        )
    )
    assert payload["jacobian"] == {"x": [[4, 3], [2, 6]]}  # [[2 x0, 3], [2, 2 x1]]


def test_jacobian_of_tanh_of_matmul(cli):
    rng = np.random.default_rng(7)
    a, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    payload = as_json(
        cli(
            [
                "jacobian",
                "tanh(A @ x)",
                "--set",
                f"A={lit(a)}",
                "--set",
                f"x={lit(x)}",
                "--wrt",
                "x",
                "--format",
                "json",
            ]
        )
    )
    t = np.tanh(a @ x)
    np.testing.assert_allclose(payload["value"], t, rtol=1e-12)
    np.testing.assert_allclose(payload["jacobian"]["x"], (1 - t**2)[:, None] * a, rtol=1e-10)


def test_jacobian_wrt_a_matrix_has_output_plus_input_shape(cli):
    rng = np.random.default_rng(8)
    a, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    payload = as_json(
        cli(
            [
                "jacobian",
                "A @ x",
                "--set",
                f"A={lit(a)}",
                "--set",
                f"x={lit(x)}",
                "--wrt",
                "A",
                "--format",
                "json",
            ]
        )
    )
    expected = np.einsum("ij,k->ijk", np.eye(3), x)  # d(Ax)_i / dA_jk = delta_ij x_k
    np.testing.assert_allclose(payload["jacobian"]["A"], expected, rtol=1e-12)


def test_jacobian_csv(cli):
    result = cli(
        [
            "jacobian",
            "[x[0]**2 + 3*x[1], x[1]**2 + 2*x[0]]",
            "--set",
            "x=[2,3]",
            "--wrt",
            "x",
            "--format",
            "csv",
        ]
    )
    assert result.code == 0 and result.err == ""
    rows = list(csv.DictReader(io.StringIO(result.out)))
    entries = {(r["output_index"], r["input_index"]): float(r["value"]) for r in rows}
    assert entries == {
        ("(0,)", "(0,)"): 4.0,
        ("(0,)", "(1,)"): 3.0,
        ("(1,)", "(0,)"): 2.0,
        ("(1,)", "(1,)"): 6.0,
    }


def test_jacobian_unused_variable(cli):
    args = ["jacobian", "a = z*2\nx*2", "--set", "x=[2,3]", "--set", "z=[1,5,7]", "--wrt", "x,z"]
    payload = as_json(cli([*args, "--format", "json"]))
    assert payload["jacobian"]["x"] == [[2, 0], [0, 2]]
    assert payload["jacobian"]["z"] == [[0, 0, 0], [0, 0, 0]]
    assert payload["unused"] == ["z"]
    table = cli(args)
    assert table.code == 0 and "unused" in table.out


def test_eval_unused_variable_in_table(cli):
    result = cli(["eval", "a = z*2\nsum(x*2)", "--set", "x=[2,3]", "--set", "z=1", "--wrt", "x,z"])
    assert result.code == 0
    assert re.search(r"z \(.*unused", result.out)


# ---- hessian ------------------------------------------------------------------------------


@pytest.mark.parametrize("x", [[1.0, 2.0], [-0.5, 3.0]])
def test_hessian_cubic(cli, x):
    payload = as_json(
        cli(
            [
                "hessian",
                "sum(x**3) + x[0]*x[1]",
                "--set",
                f"x={lit(x)}",
                "--wrt",
                "x",
                "--format",
                "json",
            ]
        )
    )
    np.testing.assert_allclose(payload["value"], x[0] ** 3 + x[1] ** 3 + x[0] * x[1])
    np.testing.assert_allclose(payload["hessian"]["x"], [[6 * x[0], 1], [1, 6 * x[1]]])


def test_hessian_mixed_block(cli):
    # f = sum(x**2 * y) + sum(sin(y)): f_xx = diag(2y), f_yy = diag(-sin y), f_xy = diag(2x)
    x, y = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    payload = as_json(
        cli(
            [
                "hessian",
                "sum(x**2 * y) + sum(sin(y))",
                "--set",
                f"x={lit(x)}",
                "--set",
                f"y={lit(y)}",
                "--wrt",
                "x,y",
                "--format",
                "json",
            ]
        )
    )
    np.testing.assert_allclose(payload["hessian"]["x"], np.diag(2 * y))
    np.testing.assert_allclose(payload["hessian"]["y"], np.diag(-np.sin(y)), atol=1e-14)
    np.testing.assert_allclose(payload["mixed"]["x,y"], np.diag(2 * x))


def test_hessian_table_shows_entries(cli):
    result = cli(["hessian", "sum(x**3) + x[0]*x[1]", "--set", "x=[1,2]", "--wrt", "x"])
    assert result.code == 0
    assert {6.0, 1.0, 12.0} <= set(numbers(result.out))


def test_hessian_of_non_scalar_output(cli):
    result = cli(["hessian", "x**2", "--set", "x=[1,2]", "--wrt", "x"])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and "single-number" in result.err


# ---- @file values -------------------------------------------------------------------------


def sum_of(cli, spec: str) -> dict:
    return as_json(
        cli(["eval", "sum(x**2)", "--set", f"x=@{spec}", "--wrt", "x", "--format", "json"])
    )


def test_npy(cli, tmp_path):
    data = np.array([[1.0, 2.0], [3.0, -4.0]])
    np.save(tmp_path / "a.npy", data)
    payload = sum_of(cli, tmp_path / "a.npy")
    assert payload["value"] == 30 and payload["grads"]["x"] == (2 * data).tolist()


def test_npz_with_and_without_key(cli, tmp_path):
    np.savez(tmp_path / "one.npz", w=np.array([1.0, 2.0]))
    np.savez(tmp_path / "two.npz", a=np.array([1.0, 2.0]), b=np.array([3.0, 4.0, 5.0]))
    assert sum_of(cli, f"{tmp_path / 'one.npz'}")["value"] == 5
    assert sum_of(cli, f"{tmp_path / 'one.npz'}:w")["value"] == 5
    payload = sum_of(cli, f"{tmp_path / 'two.npz'}:b")
    assert payload["value"] == 50 and payload["grads"]["x"] == [6, 8, 10]


def test_npz_with_several_arrays_needs_a_key(cli, tmp_path):
    np.savez(tmp_path / "two.npz", a=np.array([1.0]), b=np.array([2.0]))
    result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / 'two.npz'}"])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and ":NAME" in result.err
    assert "a" in result.err and "b" in result.err


def test_csv_txt_json(cli, tmp_path):
    (tmp_path / "m.csv").write_text("1,2\n3,4\n")
    (tmp_path / "v.txt").write_text("1 2 3\n")
    (tmp_path / "l.json").write_text("[[1, 2], [3, 4]]")
    (tmp_path / "d.json").write_text('{"key": [1, 2, 3], "other": 7}')
    assert sum_of(cli, tmp_path / "m.csv")["grads"]["x"] == [[2, 4], [6, 8]]
    assert sum_of(cli, tmp_path / "v.txt")["value"] == 14
    assert sum_of(cli, tmp_path / "l.json")["value"] == 30
    payload = sum_of(cli, f"{tmp_path / 'd.json'}:key")
    assert payload["value"] == 14 and payload["grads"]["x"] == [2, 4, 6]


def test_pickled_npy_is_refused(cli, tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / 'obj.npy'}"])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and "pickle" in result.err


@pytest.mark.parametrize(
    "name, keyword", [("data.xyz", "unknown file type"), ("missing.npy", "no such file")]
)
def test_unknown_extension_and_missing_file(cli, tmp_path, name, keyword):
    if name.endswith(".xyz"):
        (tmp_path / name).write_text("1")
    result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / name}"])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and keyword in result.err


# ---- where the program comes from ---------------------------------------------------------


def test_program_from_stdin(cli):
    payload = as_json(cli(["eval", "-", "--format", "json"], stdin=PROGRAM))
    assert payload["grads"] == {"w": -28, "b": -18}


def test_program_from_stdin_subprocess(exe):
    result = exe(
        ["eval", "-", "--set", "x=[1,2,3]", "--wrt", "x", "--format", "json"],
        stdin="y = x**2  # squares\nsum(y)\n",
    )
    assert result.code == 0 and result.err == ""
    assert json.loads(result.out)["grads"]["x"] == [2, 4, 6]


def test_program_from_file(cli, tmp_path):
    path = tmp_path / "prog.agrad"
    path.write_text(
        "# defaults\nx = [1., 2.]; y = [5., 7.]  # two on one line\n"
        "w = tensor(1.0, requires_grad=true); b = tensor(0.0, requires_grad=true)\n"
        "sum((w*x + b - y)**2)\n"
    )
    payload = as_json(cli(["eval", "-f", str(path), "--format", "json"]))
    assert payload["value"] == 41 and payload["grads"] == {"w": -28, "b": -18}
    # --set overrides a constant assignment of the file: x = [0, 0] -> loss = 25 + 49
    payload = as_json(cli(["eval", "--file", str(path), "--set", "x=[0,0]", "--format", "json"]))
    assert payload["value"] == 74 and payload["grads"]["w"] == 0


def test_program_and_file_together(cli, tmp_path):
    path = tmp_path / "prog.agrad"
    path.write_text("1")
    result = cli(["eval", "2", "-f", str(path)])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and "--file" in result.err


def test_program_starting_with_minus_after_double_dash(cli):
    payload = as_json(cli(["eval", "--set", "x=2", "--format", "json", "--", "-x**2"]))
    assert payload["value"] == -4


# ---- options ------------------------------------------------------------------------------


def test_float32_matches_float64(cli):
    x = lit([0.1, 0.7, -1.3])
    args = [
        "eval",
        "sum(tanh(x) * exp(x) + x**3)",
        "--set",
        f"x={x}",
        "--wrt",
        "x",
        "--format",
        "json",
    ]
    p64 = as_json(cli(args))
    p32 = as_json(cli([*args, "--dtype", "float32"]))
    np.testing.assert_allclose(p32["value"], p64["value"], atol=1e-5)
    np.testing.assert_allclose(p32["grads"]["x"], p64["grads"]["x"], atol=1e-5)
    xs = np.array([0.1, 0.7, -1.3])
    np.testing.assert_allclose(p64["value"], np.sum(np.tanh(xs) * np.exp(xs) + xs**3), rtol=1e-12)


def test_precision_changes_table_digits(cli):
    args = ["eval", "sum(x)", "--set", "x=[1.23456789]", "--wrt", "x"]
    default, short = cli(args), cli([*args, "--precision", "3"])
    assert default.code == short.code == 0
    assert "1.23457" in default.out
    assert "1.23" in short.out and "1.235" not in short.out and "1.2346" not in short.out


def test_json_keeps_full_precision(cli):
    payload = as_json(
        cli(["eval", "x / 3", "--set", "x=1", "--precision", "3", "--format", "json"])
    )
    assert payload["value"] == 1 / 3


def test_seed_makes_randn_reproducible(cli):
    first = as_json(cli(["eval", "randn(5)", "--seed", "3", "--format", "json"]))["value"]
    again = as_json(cli(["eval", "randn(5)", "--seed", "3", "--format", "json"]))["value"]
    other = as_json(cli(["eval", "randn(5)", "--seed", "4", "--format", "json"]))["value"]
    assert first == again and first != other


def test_non_finite_numbers_in_json_and_table(cli):
    payload = as_json(cli(["eval", "x * 1", "--set", "x=[nan, inf, 2]", "--format", "json"]))
    assert payload["value"] == ["nan", "inf", 2]
    table = cli(["eval", "x * 1", "--set", "x=[nan, inf, 2]"])
    assert table.code == 0
    assert "nan" in table.out and "inf" in table.out  # the table must show the value


def test_nan_results_are_quiet(exe):
    result = exe(["eval", "[log(x), 1/x - 1/x]", "--set", "x=0", "--format", "json"])
    assert result.code == 0
    assert json.loads(result.out)["value"] == ["-inf", "nan"]
    assert result.err == ""  # no NumPy RuntimeWarnings leaking onto stderr


@pytest.mark.parametrize("command", ["eval", "jacobian", "hessian", "functions"])
def test_help_of_every_command(cli, command):
    result = cli([command, "--help"])
    assert result.code == 0 and result.err == ""
    assert f"agrad {command}" in result.out
    assert "Example" in result.out


def test_root_help(cli):
    result = cli(["--help"])
    assert result.code == 0
    assert all(c in result.out for c in ("eval", "jacobian", "hessian", "functions"))


def test_version(exe):
    import agrad

    result = exe(["--version"])
    assert result.code == 0 and result.err == ""
    assert result.out.strip() == f"agrad {agrad.__version__}"


def test_python_m_agrad_version(exe):
    result = exe(["--version"], cmd=[sys.executable, "-m", "agrad"])
    assert result.code == 0 and result.err == ""
    assert result.out.startswith("agrad ")


def test_piped_output_has_no_ansi_codes(exe):
    import os

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
    }
    env.update(TERM="xterm-256color", PYTHONIOENCODING="utf-8")
    ok = exe(MAIN, env=env)
    assert ok.code == 0 and "-28" in ok.out
    bad = exe(["eval", "sum((x)", "--set", "x=1"], env=env)
    assert bad.code == 2
    for text in (ok.out, ok.err, bad.out, bad.err):
        assert "\x1b[" not in text


# ---- the function table -------------------------------------------------------------------

SPEC_FUNCTIONS = """tensor exp log log1p expm1 sqrt abs sign sin cos tan arcsin arccos arctan
    sinh cosh tanh sigmoid relu softplus square maximum minimum clip where sum mean prod max min
    logsumexp softmax log_softmax norm dot matmul outer transpose reshape concat stack zeros ones
    eye full arange linspace randn rand"""
REQUIRED = SPEC_FUNCTIONS.split()


def test_functions_lists_every_required_function(cli):
    table = cli(["functions"])
    assert table.code == 0
    payload = as_json(cli(["functions", "--format", "json"]))
    for name in REQUIRED:
        assert name in payload["functions"], name
        assert re.search(rf"\b{name}\(", table.out), name


@pytest.mark.parametrize(
    "name, default",
    [("concat", "axis=0"), ("stack", "axis=0"), ("softplus", "beta=1"), ("arange", "step=1")],
)
def test_function_signatures_show_numeric_defaults(cli, name, default):
    signature = as_json(cli(["functions", "--format", "json"]))["functions"][name]["signature"]
    assert re.search(rf"\b{default}(\.0)?\b", signature), signature
    assert "true" not in signature and "false" not in signature, signature


POS = np.array([0.3, 0.7, 1.2])
MIXED = np.array([-0.8, 0.4, 1.5])
UNIT = np.array([-0.5, 0.2, 0.6])
Y = np.array([0.9, 0.1, 1.7])
A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
B = np.array([[1.0, -0.5], [0.3, 2.0], [-1.2, 0.4]])


def _softmax(v, axis=-1):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# (expression, {name: value}, numpy reference, differentiable)
FUNCTION_CASES = [
    ("tensor(x)", {"x": POS}, lambda x: x, False),
    ("exp(x)", {"x": POS}, np.exp, True),
    ("log(x)", {"x": POS}, np.log, True),
    ("log1p(x)", {"x": POS}, np.log1p, True),
    ("expm1(x)", {"x": POS}, np.expm1, True),
    ("sqrt(x)", {"x": POS}, np.sqrt, True),
    ("abs(x)", {"x": MIXED}, np.abs, True),
    ("sign(x)", {"x": MIXED}, np.sign, True),
    ("sin(x)", {"x": MIXED}, np.sin, True),
    ("cos(x)", {"x": MIXED}, np.cos, True),
    ("tan(x)", {"x": MIXED}, np.tan, True),
    ("arcsin(x)", {"x": UNIT}, np.arcsin, True),
    ("arccos(x)", {"x": UNIT}, np.arccos, True),
    ("arctan(x)", {"x": MIXED}, np.arctan, True),
    ("sinh(x)", {"x": MIXED}, np.sinh, True),
    ("cosh(x)", {"x": MIXED}, np.cosh, True),
    ("tanh(x)", {"x": MIXED}, np.tanh, True),
    ("sigmoid(x)", {"x": MIXED}, lambda x: 1 / (1 + np.exp(-x)), True),
    ("relu(x)", {"x": MIXED}, lambda x: np.maximum(x, 0), True),
    ("softplus(x)", {"x": MIXED}, lambda x: np.log1p(np.exp(x)), True),
    ("square(x)", {"x": MIXED}, np.square, True),
    ("maximum(x, y)", {"x": POS, "y": Y}, np.maximum, True),
    ("minimum(x, y)", {"x": POS, "y": Y}, np.minimum, True),
    ("clip(x, min=0.5, max=1)", {"x": POS}, lambda x: np.clip(x, 0.5, 1.0), True),
    (
        "where(x > 0.5, x, y * 2)",
        {"x": POS, "y": Y},
        lambda x, y: np.where(x > 0.5, x, 2 * y),
        True,
    ),
    ("sum(A, axis=0)", {"A": A}, lambda a: a.sum(axis=0), True),
    ("sum(A)", {"A": A}, np.sum, True),
    ("mean(A, axis=1, keepdims=true)", {"A": A}, lambda a: a.mean(axis=1, keepdims=True), True),
    ("prod(x)", {"x": MIXED}, np.prod, True),
    ("max(A, axis=1)", {"A": A}, lambda a: a.max(axis=1), True),
    ("min(A)", {"A": A}, np.min, True),
    ("logsumexp(A, axis=1)", {"A": A}, lambda a: np.log(np.exp(a).sum(axis=1)), True),
    ("softmax(A)", {"A": A}, _softmax, True),
    ("log_softmax(A, axis=0)", {"A": A}, lambda a: np.log(_softmax(a, axis=0)), True),
    ("norm(x)", {"x": MIXED}, np.linalg.norm, True),
    ("norm(A)", {"A": A}, lambda a: np.sqrt(np.sum(a**2)), True),  # torch.norm: Frobenius
    ("dot(x, y)", {"x": MIXED, "y": Y}, np.dot, True),
    ("matmul(A, B)", {"A": A, "B": B}, np.matmul, True),
    ("A @ x", {"A": A, "x": MIXED}, np.matmul, True),
    ("outer(x, y)", {"x": MIXED, "y": Y}, np.outer, True),
    ("transpose(A)", {"A": A}, np.transpose, True),
    ("A.T", {"A": A}, np.transpose, True),
    ("reshape(A, [3, 2])", {"A": A}, lambda a: a.reshape(3, 2), True),
    ("concat([x, y])", {"x": MIXED, "y": Y}, lambda x, y: np.concatenate([x, y]), True),
    ("concat([A, B.T], axis=1)", {"A": A, "B": B}, lambda a, b: np.concatenate([a, b.T], 1), True),
    ("stack([x, y])", {"x": MIXED, "y": Y}, lambda x, y: np.stack([x, y]), True),
    ("stack([x, y], axis=1)", {"x": MIXED, "y": Y}, lambda x, y: np.stack([x, y], axis=1), True),
    ("x[1:] * x[0] + x[-1]", {"x": MIXED}, lambda x: x[1:] * x[0] + x[-1], True),
    ("A[:, 1] * A[1, 0]", {"A": A}, lambda a: a[:, 1] * a[1, 0], True),
    ("zeros(2, 3)", {}, lambda: np.zeros((2, 3)), False),
    ("ones(2)", {}, lambda: np.ones(2), False),
    ("eye(3)", {}, lambda: np.eye(3), False),
    ("eye(2, 3)", {}, lambda: np.eye(2, 3), False),
    ("full([2, 2], 3)", {}, lambda: np.full((2, 2), 3.0), False),
    ("arange(5)", {}, lambda: np.arange(5.0), False),
    ("arange(1, 2, 0.25)", {}, lambda: np.arange(1, 2, 0.25), False),
    ("linspace(0, 1, 5)", {}, lambda: np.linspace(0, 1, 5), False),
]


def test_function_cases_cover_every_required_function():
    text = " ".join(c[0] for c in FUNCTION_CASES)
    missing = [n for n in REQUIRED if not re.search(rf"\b{n}\(", text)]
    assert missing == ["randn", "rand"]  # random: tested by shape and range below


def _weighted_sum_fd(ref, values: dict, weights: np.ndarray, h: float = 1e-6) -> dict:
    """Central differences of sum(ref(**values) * weights) for every input."""
    grads = {}
    for name, value in values.items():
        g = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            hi = {**values, name: value.copy()}
            lo = {**values, name: value.copy()}
            hi[name][i] += h
            lo[name][i] -= h
            g[i] = (np.sum(ref(*hi.values()) * weights) - np.sum(ref(*lo.values()) * weights)) / (
                2 * h
            )
        grads[name] = g
    return grads


@pytest.mark.parametrize(
    "expr, values, ref, differentiable", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES]
)
def test_function_value_and_gradient(cli, expr, values, ref, differentiable):
    sets = [a for name, v in values.items() for a in ("--set", f"{name}={lit(v)}")]
    payload = as_json(cli(["eval", expr, *sets, "--format", "json"]))
    expected = np.asarray(ref(*values.values()), dtype=np.float64)
    assert payload["shape"] == list(expected.shape)
    np.testing.assert_allclose(
        np.asarray(payload["value"], dtype=float), expected, rtol=1e-12, atol=1e-14
    )
    if not differentiable:
        return
    weights = np.random.default_rng(len(expr)).uniform(0.5, 1.5, size=expected.shape)
    program = f"sum(({expr}) * wt)"
    payload = as_json(
        cli(
            [
                "eval",
                program,
                *sets,
                "--set",
                f"wt={lit(weights)}",
                "--wrt",
                ",".join(values),
                "--format",
                "json",
            ]
        )
    )
    np.testing.assert_allclose(payload["value"], np.sum(expected * weights), rtol=1e-12)
    for name, g in _weighted_sum_fd(ref, values, weights).items():
        assert np.shape(payload["grads"][name]) == values[name].shape
        np.testing.assert_allclose(payload["grads"][name], g, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("fn", ["randn", "rand"])
def test_random_functions(cli, fn):
    payload = as_json(cli(["eval", f"{fn}(400, 3)", "--seed", "11", "--format", "json"]))
    value = np.asarray(payload["value"], dtype=float)
    assert payload["shape"] == [400, 3] and np.all(np.isfinite(value))
    if fn == "rand":
        assert value.min() >= 0 and value.max() < 1 and abs(value.mean() - 0.5) < 0.05
    else:
        assert abs(value.mean()) < 0.15 and abs(value.std() - 1) < 0.1
