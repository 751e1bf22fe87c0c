"""Every pair of `agrad check`'s options, on a program and on a Python function, and every
pair of a suite case's settings: each pair either runs (exit 0/1) or is refused with exit
2 and one `error:` line; none is a bug (exit 3), and in a suite a case's bad settings are
that case's error while the other cases still run.

Expected numbers are algebra: f = sum(x**3) has gradient 3x**2 and Hessian diag(6x).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

PROGRAM = ["sum(x**3)", "--wrt", "x", "--set", "x=[1,2]"]
NUMPY_SOURCE = """import numpy as np
def cube(x): return np.sum(x ** 3)
def cube_grad(x): return 3 * x ** 2
"""
AGRAD_SOURCE = """import agrad as torch
def cube(x): return (x ** 3).sum()
"""
TORCH_SOURCE = """import torch
def cube(x): return (x ** 3).sum()
"""
METHODS = ("complex", "ridders", "central", "forward", "richardson", "taylor")
OPTIONS: dict[str, list[str]] = {
    "order 2": ["--order", "2"],
    "fast": ["--fast"],
    "eps": ["--eps", "1e-4"],
    "strict": ["--strict"],
    "allow-undecided": ["--allow-undecided"],
    "directions": ["--directions", "2"],
    "expect": ["--expect", "x=3*x**2"],
    "float32": ["--dtype", "float32"],
    "atol": ["--atol", "1e-6"],
    "rtol": ["--rtol", "1e-4"],
    "grad-output": ["--grad-output", "1"],
    "all": ["--all"],
    "json": ["--format", "json"],
    "csv": ["--format", "csv"],
    "max-seconds": ["--max-seconds", "100"],
    "update-golden": ["--update-golden"],
    **{f"method {m}": ["--method", m] for m in METHODS},
}
PAIRS = list(itertools.combinations(OPTIONS, 2))


@pytest.fixture
def sources(tmp_path, monkeypatch):
    (tmp_path / "np_cube.py").write_text(NUMPY_SOURCE)
    (tmp_path / "ag_cube.py").write_text(AGRAD_SOURCE)
    (tmp_path / "torch_cube.py").write_text(TORCH_SOURCE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


BASES = {
    "program": PROGRAM,
    "numpy": ["--python", "np_cube.py:cube", "--grad", "np_cube.py:cube_grad", "--set", "x=[1,2]"],
    "agrad": ["--python", "ag_cube.py:cube", "--set", "x=[1,2]"],
    "torch": ["--python", "torch_cube.py:cube", "--set", "x=[1,2]"],
}


def _runs_or_refuses(result) -> None:
    assert result.code in (0, 1, 2), (result.code, result.err)
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    if result.code == 2:
        lines = result.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.err
        assert result.out == ""


@pytest.mark.parametrize("base", list(BASES))
def test_every_pair_of_options_runs_or_is_refused(cli, sources, base):
    if base == "torch":
        pytest.importorskip("torch")
    failures = []
    for a, b in PAIRS:
        result = cli(["check", *BASES[base], *OPTIONS[a], *OPTIONS[b]])
        try:
            _runs_or_refuses(result)
        except AssertionError as exc:
            failures.append(f"{a} + {b}: {exc}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("extra", [[], ["--method", "taylor"], ["--directions", "5"]])
def test_order_2_fast_projects_the_hessian(cli, extra):
    result = cli(["check", *PROGRAM, "--order", "2", "--fast", "--format", "json", *extra])
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["order"] == 2 and report["fast"] is True and report["ok"] is True


def test_the_hessian_target_vjp_is_u_times_the_hessian():
    from agrad.check.second_order import HessianTarget
    from agrad.lang.session import Session

    session = Session.create("sum(x**3) + x[0]*x[1]", ["x=[1,2]"], ["x"])
    target = HessianTarget(session)
    hessian = np.array([[6.0, 1.0], [1.0, 12.0]])  # d2/dx2 of sum(x^3) + x0 x1 at [1, 2]
    u = np.array([0.5, -2.0])
    np.testing.assert_allclose(target.vjp("x", u), u @ hessian, rtol=1e-12)


# ---- suites: the same pairs as a case's settings --------------------------------------

SUITE_SETTINGS: dict[str, str] = {
    "order 2": "order = 2",
    "fast": "fast = true",
    "eps": "eps = 1e-4",
    "strict": "strict = true",
    "allow_undecided": "allow_undecided = true",
    "directions": "directions = 2",
    "expect": 'expect = { x = "3*x**2" }',
    "float32": 'dtype = "float32"',
    "atol": "atol = 1e-6",
    "rtol": "rtol = 1e-4",
    **{f"method {m}": f'method = "{m}"' for m in METHODS},
}
SUITE_SOURCES = {
    "program": 'program = "sum(x**3)"\nwrt = ["x"]',
    "numpy": 'python = "np_cube.py:cube"\ngrad = "np_cube.py:cube_grad"',
    "agrad": 'python = "ag_cube.py:cube"',
}


def _suite(pairs: list[tuple[str, str]], source: str) -> str:
    cases = []
    for a, b in pairs:
        settings = "\n".join(dict.fromkeys([SUITE_SETTINGS[a], SUITE_SETTINGS[b]]))
        cases.append(f'[[case]]\nname = "{a} + {b}"\n{SUITE_SOURCES[source]}\n'
                     f'set = {{ x = "[1,2]" }}\ngolden = false\n{settings}\n')  # fmt: skip
    return "\n".join(cases)


@pytest.mark.parametrize("source", list(SUITE_SOURCES))
def test_every_pair_of_suite_settings_is_a_case_result(cli, sources, source):
    pairs = [
        (a, b)
        for a, b in itertools.combinations(SUITE_SETTINGS, 2)
        if not (a.startswith("method") and b.startswith("method"))
    ]  # one key each
    (sources / "pairs.toml").write_text(_suite(pairs, source))
    result = cli(["check", "--suite", "pairs.toml", "--format", "json"])
    assert result.code in (0, 1), (result.code, result.err)
    report = json.loads(result.out)
    assert [c["name"] for c in report["cases"]] == [f"{a} + {b}" for a, b in pairs]
    for case in report["cases"]:
        if case["error"]:
            assert "internal error" not in case["error"], case
            assert "\n" not in case["error"], case
        if source != "program" and "order 2" in case["name"]:  # never silently order 1
            assert case["error"] and "order 2" in case["error"], case


def test_a_suite_case_that_hits_a_bug_is_that_cases_error(cli, sources, monkeypatch):
    from agrad.check import suite

    real = suite._check_program

    def buggy(source, sets, case):
        if case["name"] == "bug":
            raise AttributeError("'HessianTarget' object has no attribute 'vjp'")
        return real(source, sets, case)

    monkeypatch.setattr(suite, "_check_program", buggy)
    case = 'program = "sum(x**3)"\nwrt = ["x"]\nset = { x = "[1,2]" }\ngolden = false\n'
    text = "".join(f'[[case]]\nname = "{n}"\n{case}\n' for n in ("before", "bug", "after"))
    (sources / "bug.toml").write_text(text)
    result = cli(["check", "--suite", "bug.toml", "--format", "json"])
    assert result.code == 3, result.err  # a bug in agrad is still exit 3, after every case
    cases = {c["name"]: c for c in json.loads(result.out)["cases"]}
    assert cases["before"]["outcome"] == cases["after"]["outcome"] == "passed"
    assert cases["bug"]["outcome"] == "error"
    assert "internal error (a bug in agrad): AttributeError" in cases["bug"]["error"]
