"""`agrad check --python ... --grad-output U`: the vector-Jacobian product uᵀJ, for every
kind of function (NumPy with a hand Jacobian, agrad, PyTorch) and output shape (a single
number, a vector, a matrix). U must have the output's shape and be finite numbers;
a hand gradient must return the Jacobian block. Each refusal: exit 2, one `error:` line
naming both shapes (or the bad number).

Expected values are algebra: f(x) = x**2 elementwise has J = diag(2x), so uᵀJ = 2·u·x;
f(x) = sum(x**2) has uᵀJ = 2·u·x with u a number.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

SOURCES = {
    "numpy": """
import numpy as np
def f(x): return x ** 2
def g(x): return np.diag((2 * x).reshape(-1)).reshape(x.shape + x.shape)
def total(x): return np.sum(x ** 2)
def total_g(x): return 2 * x
def vjp(x): return 2 * x                  # a VJP, not the Jacobian block
""",
    "agrad": """
import agrad as torch
def f(x): return x ** 2
def total(x): return (x ** 2).sum()
""",
    "torch": """
import torch
def f(x): return x ** 2
def total(x): return (x ** 2).sum()
""",
}
POINTS = {(3,): [1.0, 2.0, 3.0], (2, 3): [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    for kind, source in SOURCES.items():
        (tmp_path / f"{kind}_fns.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _argv(kind: str, name: str, x, u) -> list[str]:
    argv = ["check", "--python", f"{kind}_fns.py:{name}", "--set", f"x={json.dumps(x)}"]
    if kind == "numpy":
        argv += ["--grad", f"numpy_fns.py:{'g' if name == 'f' else name + '_g'}"]
    return argv + ["--grad-output", json.dumps(u)]


def _kinds():
    kinds = ["numpy", "agrad"]
    try:
        import torch  # noqa: F401

        kinds.append("torch")
    except ImportError:
        pass
    return kinds


def _refused(result, *words: str) -> str:
    assert result.code == 2, (result.code, result.out, result.err)
    assert result.out == ""
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.mark.parametrize("shape", list(POINTS))
@pytest.mark.parametrize("kind", _kinds())
def test_the_vjp_of_every_kind_and_shape(cli, folder, kind, shape):
    x = np.array(POINTS[shape])
    u = np.arange(1.0, x.size + 1).reshape(shape) * np.where(x > 0, 1, -1)
    result = cli([*_argv(kind, "f", x.tolist(), u.tolist()), "--format", "json", "--all"])
    assert result.code == 0, result.err
    elements = json.loads(result.out)["variables"]["x"]["elements"]
    analytic = {tuple(e["input_index"]): e["analytic"] for e in elements}
    expected = 2 * u * x
    assert analytic == {tuple(i): pytest.approx(expected[i]) for i in np.ndindex(shape)}


@pytest.mark.parametrize("kind", _kinds())
@pytest.mark.parametrize(
    ("name", "x", "u", "given", "output"),
    [
        ("total", [1.0, 2.0], [1, 2, 3], "(3,)", "()"),  # a single number's output
        ("total", [1.0, 2.0], [1, 2], "(2,)", "()"),
        ("f", [1.0, 2.0, 3.0], 1, "()", "(3,)"),
        ("f", [1.0, 2.0, 3.0], [1, 2], "(2,)", "(3,)"),
        ("f", [1.0, 2.0, 3.0], [[1, 2, 3]], "(1, 3)", "(3,)"),  # would broadcast
    ],
)
def test_a_grad_output_of_another_shape_is_refused(cli, folder, kind, name, x, u, given, output):
    line = _refused(cli(_argv(kind, name, x, u)), f"--grad-output has shape {given}")
    assert f"shape {output}" in line


@pytest.mark.parametrize("kind", _kinds())
@pytest.mark.parametrize(
    ("u", "shown"),
    [("nan", "nan"), ("inf", "inf"), ("[1, nan, 3]", "nan at index (1,)"),
     ("[1, 2, -inf]", "-inf at index (2,)")],
)  # fmt: skip
def test_a_grad_output_that_is_not_finite_is_bad_input(cli, folder, kind, u, shown):
    name = "total" if u in ("nan", "inf") else "f"
    x = [1.0, 2.0] if name == "total" else [1.0, 2.0, 3.0]
    argv = _argv(kind, name, x, 0)[:-1] + [u]
    _refused(cli(argv), "--grad-output must be finite numbers", shown)


def test_a_hand_vjp_instead_of_the_jacobian_names_both_shapes(cli, folder):
    argv = ["check", "--python", "numpy_fns.py:f", "--grad", "numpy_fns.py:vjp",
            "--set", "x=[1, 2, 3]", "--grad-output", "[1, 2, 3]"]  # fmt: skip
    _refused(cli(argv), "--grad numpy_fns.py:vjp", "has shape (3,)", "shape (3, 3)")


def test_a_single_number_output_with_a_single_number_grad_output(cli, folder):
    result = cli([*_argv("numpy", "total", [1.0, 2.0], 3), "--format", "json", "--all"])
    assert result.code == 0, result.err
    elements = json.loads(result.out)["variables"]["x"]["elements"]
    assert [e["analytic"] for e in elements] == [pytest.approx(6.0), pytest.approx(12.0)]
