"""Rendering of `agrad check --suite`: one table per suite, then what failed and why."""

from __future__ import annotations

from typing import Any

from ...lang.diagnostics import printable
from .check import check_json
from .common import _csv_number, _table, _write_csv, console, emit_json, number, to_json

_RESULT = {"passed": "ok", "failed": "FAIL", "error": "ERROR"}


def _worst(case: Any) -> float:
    if case.report is None:
        return 0.0
    return max((v.max_abs_error for v in case.report.variables.values()), default=0.0)


def _case_json(c: Any) -> dict[str, Any]:
    return {
        "suite": c.suite,
        "name": c.name,
        "line": c.line,
        "outcome": c.outcome,
        "ok": c.ok,
        "golden": c.golden,
        "golden_max_abs_error": to_json(c.golden_error),
        "message": c.message,
        "error": c.error or None,
        "seconds": c.seconds,
        "check": check_json(c.report) if c.report else None,
    }


def suite_report(results: list[Any], fmt: str, precision: int) -> None:
    cases = [c for r in results for c in r.cases]
    if fmt == "json":
        emit_json(
            {
                "ok": all(r.ok for r in results),
                "seconds": sum(r.seconds for r in results),
                "interrupted": any(r.interrupted for r in results),
                "suites": [
                    {
                        "path": r.path,
                        "ok": r.ok,
                        "seconds": r.seconds,
                        "cases": len(r.cases),
                        "passed": sum(c.outcome == "passed" for c in r.cases),
                        "failed": sum(c.outcome == "failed" for c in r.cases),
                        "errors": sum(c.outcome == "error" for c in r.cases),
                        "interrupted": r.interrupted or None,
                    }
                    for r in results
                ],
                "cases": [_case_json(c) for c in cases],
            }
        )
        return
    if fmt == "csv":
        _write_csv(
            ["suite", "case", "line", "outcome", "golden", "max_abs_error", "seconds"],
            [
                [c.suite, c.name, c.line, c.outcome, c.golden, _csv_number(_worst(c)),
                 f"{c.seconds:.4f}"]
                for c in cases
            ],
        )  # fmt: skip
        return
    out = console()
    for result in results:
        table = _table(
            f"suite {printable(result.path)}",
            ["case", "result", "gradients", "golden", "max abs error", "seconds"],
        )
        for c in result.cases:
            grads = "-" if c.report is None else "ok" if c.report.ok else "FAIL"
            table.add_row(
                printable(c.name),
                _RESULT[c.outcome],
                grads,
                c.golden or "-",
                number(_worst(c), 3) if c.report else "-",
                f"{c.seconds:.3f}",
            )
        out.print(table)
    for c in cases:
        if c.outcome == "passed":
            continue
        name = printable(c.name)
        if c.outcome == "error":
            out.print(f"ERROR {name}: {printable(c.error)}")
            if c.snippet:
                out.print(c.snippet)
            continue
        for var_name, v in c.report.variables.items() if c.report else []:
            if not v.ok:
                if v.expect and not v.expect.ok:
                    detail = f"expect: {v.expect.verdict()}"
                elif v.failures:
                    detail = (f"{v.failures} of {v.compared} elements differ, max abs error "
                              f"{number(v.max_abs_error, 3)}")  # fmt: skip
                else:  # (undecided only: "0 of 1 elements differ" said nothing, QA round 27)
                    why = v.diagnosis.message if v.diagnosis is not None else "undecided"
                    detail = f"{v.undecided} of {v.compared} elements undecided: {why}"
                out.print(f"FAIL {name}: {var_name}: {printable(detail)}")
        if c.message:
            out.print(f"FAIL {name}: {printable(c.message)}")
    failed = sum(c.outcome == "failed" for c in cases)
    errors = sum(c.outcome == "error" for c in cases)
    n = len(cases)
    many = f" in {len(results)} suites" if len(results) > 1 else ""
    if failed or errors:
        parts = [f"{failed} of {n} case(s) failed"] if failed else []
        parts += [f"{errors} {'' if failed else f'of {n} case(s) '}could not run"] * bool(errors)
        out.print(f"suite FAILED: {', '.join(parts)}{many}")
    elif any(r.interrupted for r in results):  # (the error line after it says what was done)
        out.print(f"suite interrupted: {n} case(s) ran, all ok{many}")
    else:
        out.print(f"suite passed: all {n} case(s) ok{many}")
