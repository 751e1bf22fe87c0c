"""What each command imports: start-up cost is decided by imports, so they are guarded here
(by module names, not timings). `import agrad` loads its names on first use; the CLI
imports only what its command needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("numpy", "lark", "rich", "torch")


def loaded_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter: the top-level packages and agrad's modules it
    left imported, and what it printed on stdout."""
    probe = (
        "import sys, json, io, contextlib\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "mods = sorted({m.split('.')[0] for m in sys.modules})\n"
        "subs = sorted(m for m in sys.modules if m.startswith('agrad.'))\n"
        "print(json.dumps({'top': mods, 'agrad': subs, 'out': buf.getvalue()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "COLUMNS": "80"},
        check=True,
    )
    return json.loads(out.stdout)


def heavy(result: dict) -> list[str]:
    return [m for m in HEAVY if m in result["top"]]


def test_import_agrad_alone_imports_nothing_heavy():
    assert heavy(loaded_after("import agrad")) == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["eval", "--help"], ["fit", "-h"]])
def test_version_and_help_need_no_numpy_or_lark(argv):
    result = loaded_after(f"from agrad.cli import run\ncode = run({argv!r})\nassert code == 0")
    assert heavy(result) == [], f"agrad {' '.join(argv)} imported {heavy(result)}"
    assert result["out"].strip(), "the command printed nothing"


def test_json_output_needs_no_rich_and_no_checker():
    argv = ["eval", "sum(x**2)", "--set", "x=[1,2]", "--wrt", "x", "--format", "json"]
    result = loaded_after(f"from agrad.cli import run\nassert run({argv!r}) == 0")
    assert json.loads(result["out"]) == {
        "value": 5, "shape": [], "grad_fn": "SumBackward0", "grads": {"x": [2, 4]}, "unused": []
    }  # fmt: skip
    assert "rich" not in result["top"]
    # The checker and the PyTorch-style API (nn modules, optimizers) are other commands'.
    assert "agrad.check.checker" not in result["agrad"]
    assert "agrad.autograd" not in result["agrad"]
    assert "agrad.optim" not in result["agrad"]


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "sum(x**2)", "--set", "x=[1,2]", "--wrt", "x", "--format", "json"],
        ["eval", "-sum(x)", "--set", "x=[1,2]", "--wrt", "x"],
        ["jacobian", "tanh(x)", "--set", "x=[1,2]", "--wrt", "x", "--format", "json"],
    ],
)
def test_a_plain_command_line_runs_without_typer(argv):
    # Typer (and the Click it vendors) cost about a quarter of a small command's start-up;
    # agrad.cli.direct runs plain command lines from the same definitions without them.
    result = loaded_after(f"from agrad.cli import run\nassert run({argv!r}) == 0")
    assert "typer" not in result["top"] and "click" not in result["top"]
    assert "difflib" not in result["top"]  # only a misspelt name needs suggestions
    assert "agrad.cli.direct" in result["agrad"] and result["out"].strip()


def test_help_and_usage_errors_are_typers():
    result = loaded_after("from agrad.cli import run\nassert run(['eval', '--bogus']) == 2")
    assert "typer" in result["top"]


def test_table_output_draws_with_rich():
    result = loaded_after("from agrad.cli import run\nassert run(['eval', '1+2']) == 0")
    assert "rich" in result["top"] and "3" in result["out"]


def test_lazy_names_are_the_eager_ones():
    """Every public name resolves on first use, to the object its home module defines."""
    import agrad
    from agrad.engine import creation, functions, tensor

    assert agrad.Tensor is tensor.Tensor
    assert agrad.manual_seed is creation.manual_seed
    assert agrad.exp(agrad.tensor(0.0)).item() == 1.0
    assert set(agrad.__all__) <= set(dir(agrad))
    for name in agrad.__all__:
        assert getattr(agrad, name) is not None, name
    assert set(functions.PUBLIC) <= set(agrad.__all__)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        agrad.no_such_name  # noqa: B018
    from agrad import nn, optim  # submodules, as attributes and as imports

    assert agrad.nn is nn and agrad.optim is optim


def test_render_functions_are_not_shadowed_by_their_modules():
    """Importing a renderer's module must not replace the renderer of the same role."""
    import agrad.cli.render.explanation
    import agrad.cli.render.graphs  # noqa: F401
    from agrad.cli import render

    assert callable(render.explain) and callable(render.graph) and callable(render.evaluation)
    assert render.explain.__module__ == "agrad.cli.render.explanation"
