"""Rendering of gradient checks and suites."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import (
    _csv_number,
    _shown,
    _table,
    _write_csv,
    console,
    emit_json,
    index_label,
    number,
    to_json,
)  # fmt: skip


def _element_json(e: Any) -> dict[str, Any]:
    item = {
        "output_index": list(e.output_index),
        "input_index": list(e.input_index),
        "analytic": to_json(e.analytic),
        "numeric": to_json(e.numeric),
        "abs_error": to_json(e.abs_error),
        "rel_error": to_json(e.rel_error),
    }
    if e.one_sided is not None:
        item["one_sided"] = [to_json(e.one_sided[0]), to_json(e.one_sided[1])]
    return item


def check_json(report: Any) -> dict[str, Any]:
    variables = {}
    for name, v in report.variables.items():
        entry = {
            "ok": v.ok,
            "max_abs_error": to_json(v.max_abs_error),
            "max_rel_error": to_json(v.max_rel_error),
            "failures": v.failures,
            "compared": v.compared,
            "unused": v.unused,
            "worst": [_element_json(e) for e in v.worst],
            "kinks": [_element_json(e) for e in v.kinks],
        }
        if v.error_estimate is not None:
            entry["error_estimate"] = to_json(v.error_estimate)
        if v.expect is not None:
            x = v.expect
            entry["expect"] = {
                "formula": x.formula,
                "ok": x.ok,
                "verdict": x.verdict(),
                "formula_value": to_json(x.value),
                "autograd": to_json(x.analytic),
                "numeric": to_json(x.numeric),
            }
        variables[name] = entry
    return {
        "ok": report.ok,
        "variables": variables,
        "method": report.method,
        "eps": report.eps,
        "atol": report.atol,
        "rtol": report.rtol,
        "order": report.order,
        "fast": report.fast,
        "dtype": report.dtype,
        "evaluations": report.evaluations,
    }


def _check_summary(report: Any) -> str:
    n = len(report.variables)
    failed = [name for name, v in report.variables.items() if not v.ok]
    kinks = sum(len(v.kinks) for v in report.variables.values())
    how = "random-direction projections" if report.fast else f"{report.method} differences"
    what = "second derivatives" if report.order == 2 else "gradients"
    settings = f"{how}, eps {report.eps:.3g}, atol {report.atol:g}, rtol {report.rtol:g}"
    kink_note = f"; {kinks} non-differentiable point(s) noted" if kinks else ""
    if report.ok:
        return f"check passed: {what} of {n} variable(s) agree ({settings}){kink_note}"
    reasons = []
    for name in failed:
        v = report.variables[name]
        if v.failures:
            reasons.append(f"{name} (autograd vs finite differences)")
        if v.expect is not None and not v.expect.ok:
            reasons.append(f"{name} (expected formula: {v.expect.verdict()})")
    hint = ""
    if report.fast or report.method == "forward":
        hint = (
            "; at a point that may be non-differentiable (relu or abs at 0, max at a tie), "
            "run the default central differences, which tell kinks apart"
        )
    return f"check FAILED: {'; '.join(reasons)} ({settings}){kink_note}{hint}"


def _csv_row(name: str, e: Any, verdict: str) -> list[str]:
    return [name, index_label(e.output_index), index_label(e.input_index),
            _csv_number(e.analytic), _csv_number(e.numeric), _csv_number(e.abs_error),
            _csv_number(e.rel_error), verdict]  # fmt: skip


def check_report(report: Any, fmt: str, precision: int) -> None:
    if fmt == "json":
        emit_json(check_json(report))
        return
    if fmt == "csv":
        rows = []
        for name, v in report.variables.items():
            for e in v.worst:
                ok = e.abs_error <= report.atol + report.rtol * abs(e.numeric)
                rows.append(_csv_row(name, e, "ok" if ok else "FAIL"))
            rows += [_csv_row(name, e, "kink") for e in v.kinks]
        _write_csv(
            [
                "variable",
                "output_index",
                "input_index",
                "analytic",
                "numeric",
                "abs_error",
                "rel_error",
                "verdict",
            ],
            rows,
        )
        return
    out = console()
    for name, v in report.variables.items():
        verdict = "ok" if v.ok else "FAILED"
        note = ", unused" if v.unused else ""
        estimate = (
            f"; Richardson error estimate {number(v.error_estimate, 3)}"
            if v.error_estimate is not None
            else ""
        )
        caption = (
            f"max abs error {number(v.max_abs_error, 3)}, max rel error "
            f"{number(v.max_rel_error, 3)}; {v.failures} of {v.compared} elements "
            f"outside tolerance{estimate}"
        )
        index_head = "direction" if report.fast else "index"
        table = _table(
            f"{name}: {verdict}{note}",
            [index_head, "analytic", "numeric", "abs error", "rel error"],
            caption,
        )
        for e in v.worst:
            label = index_label(e.input_index)
            if e.output_index:
                label = f"{index_label(e.output_index)} / {label}"
            table.add_row(
                label,
                number(e.analytic, precision),
                number(e.numeric, precision),
                number(e.abs_error, 3),
                number(e.rel_error, 3),
            )
        out.print(table)
        if v.kinks:
            kinks = _table(
                f"{name}: non-differentiable points (not failures unless --strict)",
                ["index", "autograd", "left derivative", "right derivative"],
            )
            for e in v.kinks:
                kinks.add_row(
                    index_label(e.input_index),
                    number(e.analytic, precision),
                    number(e.one_sided[0], precision),
                    number(e.one_sided[1], precision),
                )
            out.print(kinks)
        if v.expect is not None:
            x = v.expect
            table = _table(
                f"{name}: expect {x.formula}",
                ["index", "formula", "autograd", "finite differences"],
                x.verdict(),
            )
            shape = np.shape(x.value)
            for row in _shown(int(np.prod(shape)) if shape else 1):
                if row is None:
                    table.add_row("…", "…", "…", "…")
                    continue
                idx = tuple(int(i) for i in np.unravel_index(row, shape)) if shape else ()
                table.add_row(
                    index_label(idx),
                    number(np.asarray(x.value)[idx], precision),
                    number(np.asarray(x.analytic)[idx], precision),
                    number(np.asarray(x.numeric)[idx], precision),
                )
            out.print(table)
    out.print(_check_summary(report))
