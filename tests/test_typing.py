"""The engine type-checks: mypy over agrad.engine (configured in pyproject.toml), run by the
test suite so that CI runs it. Slow (seconds); required when CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_over_the_engine():
    if os.environ.get("CI", "").lower() != "true":
        pytest.importorskip("mypy")
    engine = ROOT / "src" / "agrad" / "engine"
    if not engine.is_dir():
        pytest.skip("runs from a source checkout (src/agrad/engine)")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--no-incremental", str(engine)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
