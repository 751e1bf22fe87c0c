"""Suites for CI: many checks from one TOML file, with golden values kept beside it.

    [[case]]
    name = "linear regression"
    program = "sum((w*x+b-y)**2)"          # or: file = "model.ag" (relative to the suite)
    wrt = ["w", "b"]
    set = { x = "[1,2]", y = "[5,7]", w = "1", b = "0" }
    expect = { w = "2*sum((w*x+b-y)*x)" }  # optional hand-derived gradients
    # optional: dtype, eps, atol, rtol, method, fast, order, strict, seed, golden

Golden values (each case's output and gradients) live in ``<suite>.golden.json``;
they are compared when present and rewritten only with ``--update-golden``.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AgradError, AgradValueError
from .checker import CheckOptions, check
from .report import CheckReport

KEYS = {
    "name",
    "program",
    "file",
    "wrt",
    "set",
    "expect",
    "dtype",
    "eps",
    "atol",
    "rtol",
    "method",
    "fast",
    "order",
    "strict",
    "seed",
    "golden",
}
GOLDEN_RTOL, GOLDEN_ATOL = 1e-7, 1e-9
# Scalar keys: the TOML types each accepts (numbers, strings, booleans), checked up front.
KEY_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "eps": ((int, float), "a number"), "atol": ((int, float), "a number"),
    "rtol": ((int, float), "a number"), "method": ((str,), "a string"),
    "dtype": ((str,), "a string"), "order": ((int,), "1 or 2"), "seed": ((int,), "a whole number"),
    "fast": ((bool,), "true or false"), "strict": ((bool,), "true or false"),
    "golden": ((bool,), "true or false"), "program": ((str,), "a string"),
    "file": ((str,), "a string"),
}  # fmt: skip


@dataclass
class CaseResult:
    name: str
    line: int
    ok: bool
    report: CheckReport | None
    golden: str  # "match", "regression", "missing", "updated", "off"
    golden_error: float = 0.0
    seconds: float = 0.0
    message: str = ""
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class SuiteResult:
    path: str
    ok: bool
    cases: list[CaseResult]
    seconds: float


def load(path: str) -> tuple[list[dict[str, Any]], list[int], str]:
    """The cases of a suite file, each case's line, and the file's text."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AgradValueError(f"--suite: cannot read {path!r}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgradValueError(f"{path}: not valid TOML: {exc}") from None
    cases = data.get("case")
    extra = sorted(set(data) - {"case"})
    if extra:
        raise AgradValueError(
            f"{path}: unknown top-level key {extra[0]!r}; write cases as [[case]] tables"
        )
    if not isinstance(cases, list) or not cases:
        raise AgradValueError(f"{path}: no [[case]] tables found")
    lines = [
        i + 1 for i, row in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*case\s*\]\]", row)
    ]
    lines += [0] * (len(cases) - len(lines))
    return cases, lines, text


def _validate(case: dict[str, Any], index: int, line: int, path: str) -> str:
    where = f"{path}:{line}: case {index + 1}"
    name = case.get("name")
    if not isinstance(name, str) or not name:
        raise AgradValueError(f'{where}: every case needs a name = "..."')
    where += f" ({name!r})"
    for key in case:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise AgradValueError(f"{where}: unknown key {key!r}{hint}")
    if ("program" in case) == ("file" in case):
        raise AgradValueError(f'{where}: give exactly one of program = "..." or file = "..."')
    if "wrt" not in case:
        raise AgradValueError(f'{where}: missing wrt = ["name", ...]: the variables to check')
    if not isinstance(case.get("wrt"), list) or not all(isinstance(w, str) for w in case["wrt"]):
        raise AgradValueError(f'{where}: wrt must be a list of names, e.g. wrt = ["w", "b"]')
    for key, (kinds, what) in KEY_TYPES.items():
        if key in case and (
            not isinstance(case[key], kinds) or isinstance(case[key], bool) and bool not in kinds
        ):
            raise AgradValueError(f"{where}: {key} must be {what}, got {case[key]!r}")
    if case.get("dtype", "float64") not in ("float64", "float32"):
        raise AgradValueError(f'{where}: dtype must be "float64" or "float32"')
    if case.get("seed", 0) < 0:
        raise AgradValueError(f"{where}: seed must be a whole number >= 0")
    for key in ("set", "expect"):
        table = case.get(key, {})
        if not isinstance(table, dict) or not all(
            isinstance(v, (str, int, float)) for v in table.values()
        ):
            raise AgradValueError(
                f'{where}: {key} must be a table of strings, e.g. {key} = {{ x = "[1,2]" }}'
            )
    return where


def run_suite(path: str, update_golden: bool = False) -> SuiteResult:
    """Run every case; compare (or, on request, rewrite) the golden values."""
    from ..lang.session import Session

    cases, lines, _ = load(path)
    golden_path = golden_file(path)
    golden = _read_golden(golden_path)
    results, started = [], time.perf_counter()
    names = set()
    for i, case in enumerate(cases):
        where = _validate(case, i, lines[i], path)
        if case["name"] in names:
            raise AgradValueError(f"{where}: another case has the same name")
        names.add(case["name"])
        t0 = time.perf_counter()
        try:
            source = case.get("program") or _read_case_file(path, case["file"])
            sets = [f"{k}={v}" for k, v in case.get("set", {}).items()]
            wrt = list(dict.fromkeys([*case["wrt"], *case.get("expect", {})]))
            session = Session.create(
                source, sets, wrt, dtype=case.get("dtype", "float64"), seed=case.get("seed", 0)
            )
            options = CheckOptions(
                eps=case.get("eps"),
                atol=case.get("atol"),
                rtol=case.get("rtol"),
                method=case.get("method", "auto"),
                fast=case.get("fast", False),
                order=case.get("order", 1),
                strict=case.get("strict", False),
            )
            report = check(session, options, {k: str(v) for k, v in case.get("expect", {}).items()})
            values = _current_values(session)
        except AgradError as exc:
            raise type(exc)(f"{where}: {exc}") from None
        result = CaseResult(case["name"], lines[i], report.ok, report, "off", values=values)
        if case.get("golden", True):
            _compare_golden(result, golden.get(case["name"]), update_golden)
        result.seconds = time.perf_counter() - t0
        results.append(result)
    if update_golden:
        _write_golden(golden_path, {r.name: r.values for r in results if r.golden != "off"})
    return SuiteResult(path, all(r.ok for r in results), results, time.perf_counter() - started)


def golden_file(path: str) -> Path:
    p = Path(path)
    return p.with_name(p.stem + ".golden.json")


def _read_case_file(suite: str, file: str) -> str:
    target = Path(suite).parent / file
    try:
        return target.read_text(encoding="utf-8")
    except OSError as exc:
        # The caller prefixes the case and its line.
        raise AgradValueError(f"cannot read program file {str(target)!r}: {exc.strerror}") from None


def _current_values(session) -> dict[str, Any]:
    evaluation = session.evaluate() if _is_scalar(session) else None
    if evaluation is None:
        value, blocks = session.jacobian()
        return {
            "value": np.asarray(value).tolist(),
            "jacobian": {n: v.grad.tolist() for n, v in blocks.items()},
        }
    return {
        "value": np.asarray(evaluation.value).tolist(),
        "grads": {n: v.grad.tolist() for n, v in evaluation.variables.items()},
    }


def _is_scalar(session) -> bool:
    return session.run().output.data.size == 1


def _compare_golden(result: CaseResult, recorded: dict | None, update: bool) -> None:
    if update:
        result.golden = "updated"
        return
    if recorded is None:
        result.golden = "missing"
        return
    worst, ok = 0.0, True
    for key, now, then in _pairs(result.values, recorded):
        a = np.asarray(now, dtype=np.float64)
        try:
            b = np.asarray(then, dtype=np.float64)
        except (TypeError, ValueError):
            raise AgradValueError(
                f"golden {key} of case {result.name!r} is not numbers; "
                "rewrite the golden file with --update-golden"
            ) from None
        if a.shape != b.shape:
            ok, worst = False, math.inf
            result.message = f"golden {key}: shape {b.shape} became {a.shape}"
            continue
        err = np.abs(a - b)
        worst = max(worst, float(err.max(initial=0.0)))
        if np.any(err > GOLDEN_ATOL + GOLDEN_RTOL * np.abs(b)):
            ok = False
            result.message = result.message or f"golden {key} changed by up to {err.max():.3g}"
    result.golden = "match" if ok else "regression"
    result.golden_error = worst
    result.ok = result.ok and ok


def _pairs(now: dict, then: dict):
    yield "value", now["value"], then.get("value")
    for group in ("grads", "jacobian"):
        for name, value in now.get(group, {}).items():
            yield f"{group}.{name}", value, then.get(group, {}).get(name)


def _read_golden(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise AgradValueError(
            f"{path}: cannot read the golden values: {exc}; fix it or rewrite "
            "it with --update-golden"
        ) from None
    if not isinstance(data, dict):
        raise AgradValueError(f"{path}: golden values must be a JSON object")
    return data


def _write_golden(path: Path, values: dict[str, Any]) -> None:
    """Atomic: a temp file in the same directory, then rename (never half-written)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(values, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
