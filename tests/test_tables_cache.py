"""The LALR tables cache is JSON (agrad loads no pickles), and a damaged or stale cache
only means the tables are rebuilt from the grammar."""

from __future__ import annotations

import json
import subprocess
import sys


def run_in_fresh_process(cache_home, program="sum(x**2)") -> subprocess.CompletedProcess:
    code = f"from agrad.lang.parser import parse\np = parse({program!r})\nprint(len(p.instrs))\n"
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": ""}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_cache_is_json_and_reused(tmp_path):
    first = run_in_fresh_process(tmp_path)
    assert first.returncode == 0, first.stderr
    files = list((tmp_path / "agrad").glob("grammar-*.json"))
    assert len(files) == 1
    header, tables = files[0].read_text().split("\n", 1)  # plain JSON, not a pickle
    assert set(json.loads(header)) == {"format", "source", "sha256"}  # verified (issue 14)
    stored = json.loads(tables)
    assert set(stored) == {"data", "memo"}
    assert "transformer" not in stored["data"]["options"]
    second = run_in_fresh_process(tmp_path)
    assert second.stdout == first.stdout == "4\n"


def test_damaged_cache_is_rebuilt(tmp_path):
    assert run_in_fresh_process(tmp_path).returncode == 0
    (cache,) = (tmp_path / "agrad").glob("grammar-*.json")
    cache.write_text('{"data": {"garbage": 1}, "memo": {}}')
    result = run_in_fresh_process(tmp_path, "x = 1; -x**2")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "6\n"  # CONST, STORE, NAME, CONST, BINARY, UNARY


def test_unwritable_cache_directory_is_not_an_error(tmp_path):
    blocker = tmp_path / "agrad"
    blocker.write_text("a file where the cache directory would go")
    result = run_in_fresh_process(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "4\n"
