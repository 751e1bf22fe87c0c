"""Shared fixtures: run agrad in-process (`agrad.cli.run`) or as the installed executable;
PyTorch as the oracle (required when CI=true, so a CI run never skips the comparisons)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# The tutorial's example as CLI arguments (after the command name). By hand:
# r = w*x + b - y = [-4, -5]; loss = 41; d/dw = 2 sum(r x) = -28; d/db = 2 sum(r) = -18.
TUTORIAL_ARGS = [
    "sum((w*x+b-y)**2)", "--wrt", "w,b",
    "--set", "x=[1,2]", "--set", "y=[5,7]", "--set", "w=1", "--set", "b=0",
]  # fmt: skip


def pytest_configure(config):
    """In CI (CI=true) the oracle must be there: every PyTorch comparison runs, none skips."""
    if os.environ.get("CI", "").lower() == "true":
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise pytest.UsageError(
                "CI=true but PyTorch (the tests' oracle) is not installed: "
                "pip install torch==2.13.0"
            ) from exc


def require_torch():
    """PyTorch, the tests' oracle: skipped without it, except in CI (CI=true), where a
    missing oracle is a failure rather than a silently smaller test suite."""
    if os.environ.get("CI", "").lower() == "true":
        import torch

        return torch
    return pytest.importorskip("torch")


@dataclass
class Result:
    code: int
    out: str
    err: str
    seconds: float


def agrad_executable() -> str:
    """The console script of the venv running pytest (CI installs agrad there)."""
    beside = Path(sys.executable).parent / "agrad"
    return str(beside) if beside.exists() else (shutil.which("agrad") or str(beside))


@pytest.fixture
def cli(capsys, monkeypatch):
    """cli(argv, stdin=None) -> Result, through the CLI's own error boundary, in-process."""
    from agrad.cli import run

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")

    def invoke(argv: list[str], stdin: str | None = None) -> Result:
        capsys.readouterr()
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        start = time.perf_counter()
        code = run(list(argv))
        seconds = time.perf_counter() - start
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err, seconds)

    return invoke


@pytest.fixture
def check_json(cli):
    """check_json(*argv) -> the JSON report of `agrad check ARGV --format json`, which must
    exit 0 or 1 (a verdict, not an error)."""

    def invoke(*argv: str) -> dict:
        result = cli(["check", *argv, "--format", "json"])
        assert result.code in (0, 1), (result.code, result.err)
        return json.loads(result.out)

    return invoke


@pytest.fixture
def exe():
    """exe(argv, stdin=None, env=None) -> Result, running the installed `agrad` executable."""

    def invoke(
        argv: list[str],
        stdin: str | None = None,
        env: dict | None = None,
        cmd: list[str] | None = None,
    ) -> Result:
        environ = (
            env
            if env is not None
            else {**os.environ, "COLUMNS": "80", "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"}
        )
        start = time.perf_counter()
        proc = subprocess.run(
            [*(cmd or [agrad_executable()]), *argv],
            input=stdin or "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=environ,
            timeout=120,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)

    return invoke
