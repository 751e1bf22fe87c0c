"""How `agrad check --python` tells what a function is written with (agrad, NumPy,
PyTorch): the names its own code uses decide, not whatever else its file imports. Every
kind, in a file that imports every combination of the other two; a helper of the file;
an import in the function's body; and, where the code names none of them, the file's
imports, with an error that says which kind agrad took and why.

Expected values: f = sum(x**2) at x = [1, 2] has gradient [2, 4] (algebra).
"""

from __future__ import annotations

import itertools
import json

import pytest

IMPORTS = {"agrad": "import agrad", "numpy": "import numpy as np", "torch": "import torch"}
BODIES = {
    "numpy": "def f(x): return np.sum(x ** 2)\ndef g(x): return 2 * x\n",
    "agrad": "def f(x): return agrad.sum(x ** 2)\n",
    "torch": "def f(x): return torch.sum(x ** 2)\n",
}


def _files():
    for kind in BODIES:
        others = [k for k in IMPORTS if k != kind]
        for r in range(len(others) + 1):
            for extra in itertools.combinations(others, r):
                yield kind, tuple(sorted({kind, *extra}))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(cli, folder, source: str, grad: bool) -> object:
    (folder / "user.py").write_text(source)
    argv = ["check", "--python", "user.py:f", "--set", "x=[1.0, 2.0]", "--format", "json"]
    return cli(argv + (["--grad", "user.py:g"] if grad else []))


@pytest.mark.parametrize(("kind", "imports"), list(_files()))
def test_the_functions_own_code_decides_its_kind(cli, folder, kind, imports):
    if "torch" in imports:
        pytest.importorskip("torch")
    source = "\n".join(IMPORTS[i] for i in imports) + "\n" + BODIES[kind]
    result = _check(cli, folder, source, grad=kind == "numpy")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    worst = {w["input_index"][0]: w["analytic"] for w in report["variables"]["x"]["worst"]}
    assert worst == {0: 2.0, 1: 4.0}


@pytest.mark.parametrize("kind", ["agrad", "torch"])
def test_a_numpy_helper_of_a_file_that_imports_the_others(cli, folder, kind):
    if kind == "torch":
        pytest.importorskip("torch")
    source = (f"import numpy as np\n{IMPORTS[kind]}\n"
              "def _square(x): return x ** 2\n"
              "def _helper(x): return np.sum(_square(x))\n"
              "def f(x): return _helper(x)\ndef g(x): return 2 * x\n")  # fmt: skip
    result = _check(cli, folder, source, grad=True)
    assert result.code == 0, result.err


def test_an_import_in_the_body_decides(cli, folder):
    pytest.importorskip("torch")
    source = ("import numpy as np\nimport agrad\n"
              "def f(x):\n    import torch\n    return torch.sum(x ** 2)\n")  # fmt: skip
    result = _check(cli, folder, source, grad=False)
    assert result.code == 0, result.err


@pytest.mark.parametrize(
    ("imports", "taken"), [("import numpy as np\nimport agrad", "'import agrad as torch'")]
)
def test_code_that_names_no_framework_gets_an_error_naming_the_kind_taken(
    cli, folder, imports, taken
):
    source = f"{imports}\ndef f(x): return x.sum(out=None)\ndef g(x): return 2 * x\n"
    result = _check(cli, folder, source, grad=True)
    assert result.code == 2 and result.out == ""
    line = result.err.strip()
    assert "\n" not in line and line.startswith("error: --python user.py:f raised TypeError")
    assert f"taking it for a function written with {taken}" in line
    assert "its file imports agrad" in line and "a NumPy function (with --grad)" in line


def test_detect_names_the_reason():
    import types

    from agrad.check.python_kind import detect

    module = types.ModuleType("agrad_user_x")
    exec("import numpy as np\nimport agrad\ndef f(x): return np.sum(x)\n"
         "def h(x): return x.sum()\n", vars(module))  # fmt: skip
    assert detect(module.f, module) == ("numpy", "its code uses NumPy and neither agrad nor torch")
    assert detect(module.h, module) == ("agrad", "its file imports agrad")
