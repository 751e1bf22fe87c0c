"""Suites for CI: many checks from one TOML file, with golden values kept beside it.

    [golden]                               # optional: the suite's golden tolerance
    rtol = 1e-7
    atol = 1e-9

    [[case]]
    name = "linear regression"
    program = "sum((w*x+b-y)**2)"          # or: file = "model.ag" (in the suite's folder)
    wrt = ["w", "b"]
    set = { x = "[1,2]", y = "@y.csv", w = "1", b = "0" }   # @files: in the suite's folder
    expect = { w = "2*sum((w*x+b-y)*x)" }  # optional hand-derived gradients
    # optional: dtype, eps, atol, rtol, method, fast, order, strict, seed,
    #           golden = false, or golden = { rtol = ..., atol = ... }

A case that cannot run (a syntax or shape error, a bad key, an unreadable file)
is an *error* case, reported with the others, as pytest reports a collection
error; the rest still run. Only a suite file that cannot be read at all is an
error of the whole command. Paths a suite names resolve against its own folder
and may not leave it (nor name hidden files such as ``.env``) unless the caller
allows it: a suite from elsewhere must not read the user's other files.
"""

from __future__ import annotations

import difflib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AgradError, AgradValueError
from ..files import MAX_TEXT_BYTES, read_text
from . import golden
from .checker import CheckOptions, check
from .report import CheckReport

# A case's own keys; the check's settings are CheckOptions' fields (one schema, validated
# by CheckOptions.from_mapping), so every option of the checker is a suite key too.
CASE_KEYS = {"name", "program", "file", "python", "grad", "wrt", "set", "expect", "dtype",
             "golden"}  # fmt: skip
KEYS = CASE_KEYS | set(CheckOptions.keys())
SOURCES = ("program", "file", "python")  # exactly one says what the case checks
KEY_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "dtype": ((str,), "a string"), "program": ((str,), "a string"),
    "file": ((str,), "a string"), "python": ((str,), "a string"), "grad": ((str,), "a string"),
}  # fmt: skip


@dataclass
class CaseResult:
    name: str
    line: int
    ok: bool
    report: CheckReport | None
    # "match", "regression", "missing", "updated", "not written" (interrupted before the
    # file was), "kept" (not updated: the check failed),
    # "off"; "" for an error case
    golden: str
    golden_error: float = 0.0
    seconds: float = 0.0
    message: str = ""  # what failed, in words (golden changes, a missing golden file)
    values: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # the case could not run: the message (an error case)
    snippet: str = ""  # with error: the offending program line and a caret
    suite: str = ""
    internal: bool = False  # with error: a bug in agrad, not the case's input

    @property
    def outcome(self) -> str:
        return "error" if self.error else "passed" if self.ok else "failed"


@dataclass
class SuiteResult:
    path: str
    ok: bool
    cases: list[CaseResult]
    seconds: float
    started: float = 0.0  # time.time() at the start (JUnit's timestamp)
    interrupted: str = ""  # Ctrl-C: the name of the case it stopped


@dataclass
class Suite:
    """A suite file, read and parsed; its cases are validated one by one when run."""

    path: str
    cases: list[dict[str, Any]]
    lines: list[int]
    tolerance: golden.Tolerance

    @property
    def folder(self) -> Path:
        return Path(self.path).parent


def load(path: str) -> Suite:
    """Read a suite file; an error here (unreadable, not TOML, no cases) is the command's."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    text = read_text(path, "--suite", MAX_TEXT_BYTES)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message is a position, never the content
        raise AgradValueError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise AgradValueError(f"{path}: not valid TOML: nested too deeply") from None
    extra = sorted(set(data) - {"case", "golden"})
    if extra:
        raise AgradValueError(
            f"{path}: unknown top-level key {extra[0]!r}; write cases as [[case]] tables "
            "(and the golden tolerance as a [golden] table)"
        )
    cases = data.get("case")
    if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
        raise AgradValueError(f"{path}: no [[case]] tables found")
    lines = [
        i + 1 for i, row in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*case\s*\]\]", row)
    ]
    lines += [0] * (len(cases) - len(lines))
    tolerance = _tolerance(data.get("golden", {}), golden.Tolerance(), f"{path}: [golden]")
    return Suite(path, cases, lines, tolerance)


def _tolerance(table: Any, base: golden.Tolerance, where: str) -> golden.Tolerance:
    if not isinstance(table, dict):
        raise AgradValueError(f"{where} must be a table: rtol = 1e-7, atol = 1e-9")
    unknown = sorted(set(table) - {"rtol", "atol"})
    if unknown:
        raise AgradValueError(f"{where}: unknown key {unknown[0]!r}; the keys are rtol and atol")
    values = {}
    for key in ("rtol", "atol"):
        value = table.get(key, getattr(base, key))
        if value is None:  # (neither here nor in the suite: the case dtype's default)
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise AgradValueError(f"{where}: {key} must be a number >= 0, got {value!r}")
        if value == float("inf"):  # (it would pass every drift, silently: QA round 21)
            raise AgradValueError(
                f"{where}: {key} = inf would let any drift pass; give a finite tolerance, "
                "or golden = false for a case whose values are not to be compared"
            )
        values[key] = float(value)
    return golden.Tolerance(**values)


def _validate(case: dict[str, Any]) -> None:
    name = case.get("name")
    if not isinstance(name, str) or not name:
        raise AgradValueError('every case needs a name = "..."')
    for key in case:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise AgradValueError(f"unknown key {key!r}{hint}")
    if sum(key in case for key in SOURCES) != 1:
        raise AgradValueError(
            'give exactly one of program = "...", file = "..." or python = "FILE.py:NAME"'
        )
    if "grad" in case and "python" not in case:
        raise AgradValueError('grad = "FILE.py:NAME" goes with python = "FILE.py:NAME"')
    if "wrt" not in case and "python" not in case:
        raise AgradValueError('missing wrt = ["name", ...]: the variables to check')
    wrt = case.get("wrt", [])
    if not isinstance(wrt, list) or not all(isinstance(w, str) for w in wrt):
        raise AgradValueError('wrt must be a list of names, e.g. wrt = ["w", "b"]')
    for key, (kinds, what) in KEY_TYPES.items():
        if key in case and (
            not isinstance(case[key], kinds) or isinstance(case[key], bool) and bool not in kinds
        ):
            raise AgradValueError(f"{key} must be {what}, got {case[key]!r}")
    if "golden" in case and not isinstance(case["golden"], (bool, dict)):
        raise AgradValueError("golden must be true, false or a table: golden = { rtol = 1e-6 }")
    if case.get("dtype", "float64") not in ("float64", "float32"):
        raise AgradValueError('dtype must be "float64" or "float32"')
    CheckOptions.from_mapping(case, None)  # the check's settings, by their own schema
    for key in ("set", "expect"):
        table = case.get(key, {})
        if not isinstance(table, dict) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in table.values()
        ):
            raise AgradValueError(
                f'{key} must be a table of strings, e.g. {key} = {{ x = "[1,2]" }}'
            )


def resolve(suite: Suite, value: str, what: str, allow_outside: bool) -> Path:
    """A path a suite names, against the suite's folder; refused if it leaves the folder
    or names a hidden file, unless ``allow_outside``."""
    target = suite.folder / value  # an absolute value replaces the folder
    if allow_outside:
        return target
    base = os.path.realpath(suite.folder)
    real = os.path.realpath(target)  # symbolic links followed: a link out is out
    if os.path.commonpath([base, real]) != base:
        raise AgradValueError(
            f"{what} {value!r} is outside the suite's folder ({base}); suites read only files "
            "beside them, so that a suite from elsewhere cannot read yours: move the file "
            "there, or pass --allow-outside if you trust this suite"
        )
    hidden = [p for p in Path(os.path.relpath(real, base)).parts if p.startswith(".")]
    if hidden:
        raise AgradValueError(
            f"{what} {value!r} names a hidden file or folder ({hidden[0]!r}), which suites may "
            "not read (it may hold secrets, such as .env); pass --allow-outside to allow it"
        )
    return target


def _sets(suite: Suite, case: dict[str, Any], allow_outside: bool) -> list[str]:
    from ..lang.values import split_key

    sets = []
    for name, value in case.get("set", {}).items():
        text = str(value)
        if text.startswith("@"):
            path, key = split_key(text[1:])
            resolved = resolve(suite, path, f"set {name} = @", allow_outside)
            text = f"@{resolved}" + (f":{key}" if key is not None else "")
        sets.append(f"{name}={text}")
    return sets


def run_suite(
    suite: Suite,
    update_golden: bool = False,
    require_golden: bool = False,
    allow_outside: bool = False,
    recorded: dict[str, Any] | None = None,
) -> SuiteResult:
    """Run every case (a case's error is its own result); compare the golden values.

    Ctrl-C (KeyboardInterrupt) stops after the case in progress is dropped: the result
    holds the cases done so far and names the one interrupted.
    """
    recorded = golden.read(golden.golden_file(suite.path)) if recorded is None else recorded
    result = SuiteResult(suite.path, True, [], 0.0, time.time())
    start = time.perf_counter()
    names: set[str] = set()
    for i, case in enumerate(suite.cases):
        name = case.get("name") if isinstance(case.get("name"), str) else ""
        try:
            outcome = _run_case(suite, i, case, names, update_golden, require_golden,
                                allow_outside, recorded)  # fmt: skip
        except KeyboardInterrupt:
            result.interrupted = name or f"case {i + 1}"
            break
        result.cases.append(outcome)
    result.seconds = time.perf_counter() - start
    result.ok = not result.interrupted and all(c.ok for c in result.cases)
    return result


def _run_case(suite, i, case, names, update_golden, require_golden, allow_outside, recorded):
    line = suite.lines[i]
    name = case.get("name") if isinstance(case.get("name"), str) and case.get("name") else ""
    where = f"{suite.path}:{line}: case {i + 1}" + (f" ({name!r})" if name else "")
    t0 = time.perf_counter()
    result = CaseResult(name or f"case {i + 1}", line, False, None, "", suite=suite.path)
    try:
        _validate(case)
        if name in names:
            raise AgradValueError("another case has the same name")
        names.add(name)
        result.report, result.values, session = _check_case(suite, case, allow_outside)
        result.ok = result.report.ok
        if case.get("golden", True) is not False:
            tolerance = _tolerance(case["golden"], suite.tolerance, "golden") if isinstance(
                case.get("golden"), dict
            ) else suite.tolerance  # fmt: skip
            tolerance = tolerance.for_case(str(case.get("dtype", "float64")), case.get("atol"))
            _golden(result, recorded.get(name), tolerance, update_golden, require_golden, suite)
        else:
            result.golden = "off"
    except AgradError as exc:
        prefixed = exc.with_prefix(where)
        result.ok, result.error, result.snippet = False, str(prefixed), prefixed.snippet
        result.golden = ""
    except MemoryError:
        result.ok, result.error = False, f"{where}: out of memory; use smaller inputs"
    except RecursionError:
        result.ok, result.error = False, f"{where}: nested too deeply to handle"
    except Exception as exc:  # a bug in agrad: this case's error, the other cases still run
        if os.environ.get("AGRAD_DEBUG"):
            raise
        result.ok, result.golden, result.internal = False, "", True
        result.error = (f"{where}: internal error (a bug in agrad): {type(exc).__name__}: "
                        f"{exc}; please report it with the suite")  # fmt: skip
    result.seconds = time.perf_counter() - t0
    return result


def _check_case(suite: Suite, case: dict[str, Any], allow_outside: bool):
    if "python" in case:
        return _check_python(suite, case, allow_outside)
    source = case.get("program")
    if "file" in case:
        source = read_text(resolve(suite, case["file"], "file", allow_outside), "file")
    try:
        return _check_program(source, _sets(suite, case, allow_outside), case)
    except AgradError as exc:
        if "file" in case and str(exc).startswith("line "):  # a place in the program file
            raise exc.with_prefix(case["file"]) from None
        raise


def _check_program(source: str, sets: list[str], case: dict[str, Any]):
    from ..lang.session import Session

    wrt = list(dict.fromkeys([*case["wrt"], *case.get("expect", {})]))
    seed = case.get("seed", 0)
    session = Session.create(source, sets, wrt, dtype=case.get("dtype", "float64"), seed=seed)
    options = CheckOptions.from_mapping(case, None)
    report = check(session, options, {k: str(v) for k, v in case.get("expect", {}).items()})
    return report, golden.with_hand(golden.current(session), report), session


def _check_python(suite: Suite, case: dict[str, Any], allow_outside: bool):
    """A case that checks a Python function (``python = "layers.py:affine"``): this runs
    the suite's code, which only a suite the user runs can name."""
    from ..lang.values import parse_value, split_assignment
    from .checker import check_target
    from .python import build_target, judge_hand, refuse_unsupported, running_user_code

    if "expect" in case:
        raise AgradValueError("expect goes with a program; a python case gives grad instead")
    dtype = case.get("dtype", "float64")
    values = {}
    for option in _sets(suite, case, allow_outside):
        name, text = split_assignment(option)
        value = parse_value(text, f"set {name}", seed=case.get("seed", 0))
        values[name] = value.astype(dtype) if value.dtype.kind == "f" else value
    specs = [_python_spec(suite, case[key], key, allow_outside) if key in case else None
             for key in ("python", "grad")]  # fmt: skip
    label = f"python {case['python']}"
    with running_user_code(label):
        target, hand, kind = build_target(specs[0], specs[1], values, list(case.get("wrt", [])))
        options = CheckOptions.from_mapping(case, None)
        refuse_unsupported(kind, options, label)
        report = check_target(target, options)
        judge_hand(target, report, hand, options, f"grad {case.get('grad')}")
        recorded = golden.of_report(report, target)  # (calls the function once more)
        recorded = golden.with_hand(recorded, report)
    return report, recorded, None


def _python_spec(suite: Suite, spec: str, key: str, allow_outside: bool) -> str:
    """A ``FILE.py:NAME`` against the suite's folder (a module path stays as it is)."""
    where, sep, name = spec.rpartition(":")
    if sep and (where.endswith(".py") or "/" in where):
        return f"{resolve(suite, where, key, allow_outside)}:{name}"
    return spec


def _golden(result, then, tolerance, update, require, suite) -> None:
    if update and not result.ok:  # a failing case's values are no reference: once fixed,
        # they would be its regression (QA round 17); what it had stays
        result.golden = "kept"
        result.message = "golden values not updated: the check failed (fix it, then update)"
        return
    if update:
        result.golden = "updated"
        return
    if then is None:
        result.golden = "missing"
        if require:
            result.ok = False
            result.message = (
                f"no golden values for this case (required by --require-golden, or CI=true); "
                f"create them with: agrad check --suite {suite.path} --update-golden, and "
                f"commit {golden.golden_file(suite.path)}"
            )
        return
    comparison = golden.compare(result.values, then, tolerance)
    result.golden = "match" if comparison.ok else "regression"
    result.golden_error = comparison.worst
    result.message = "; ".join(comparison.messages)
    result.ok = result.ok and comparison.ok


def updated_golden(previous: dict[str, Any], result: SuiteResult) -> dict[str, Any]:
    """The golden file after --update-golden: every case that ran and passed records its
    values; an error case or a failed one keeps what it had (a transient error should not
    erase a reference, and a wrong gradient should not become one)."""
    values = {}
    for case in result.cases:
        if case.error or case.golden == "kept":
            if case.name in previous:
                values[case.name] = previous[case.name]
        elif case.golden == "updated":
            values[case.name] = case.values
    return values
