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
)  # fmt: skip


def check_json(report: Any, all_elements: bool = False) -> dict[str, Any]:
    return report.to_dict(all_elements)


def _settings(report: Any) -> str:
    if report.method in ("auto", "complex", "ridders"):  # say what was actually used
        exact = sum(int(v.complex_step.sum()) for v in report.variables.values())
        total = sum(v.complex_step.size for v in report.variables.values())
        how = ("complex step" if exact == total else "adaptive steps" if not exact
               else f"complex step ({exact} of {total} elements), adaptive steps")  # fmt: skip
    else:
        how = "Taylor remainder test" if report.method == "taylor" else (
            f"{report.method} differences")  # fmt: skip
    if report.fast:
        how = f"random-direction projections ({how})"
    eps = f", eps {report.eps:.3g}" if report.eps is not None else ""
    atol = "scaled" if report.atol is None else f"{report.atol:g}"
    per = report.evaluations / max(sum(v.compared for v in report.variables.values()), 1)
    return f"{how}{eps}, atol {atol}, rtol {report.rtol:g}; {per:.3g} evaluations per element"


def _check_summary(report: Any) -> str:
    n = len(report.variables)
    what = "second derivatives" if report.order == 2 else "gradients"
    kinks = sum(v.count(2) for v in report.variables.values())
    kink_note = f"; {kinks} non-differentiable point(s) noted" if kinks else ""
    if report.ok and not any(v.compared for v in report.variables.values()):
        return f"check passed: nothing to compare (no elements) ({_settings(report)})"
    if report.ok:
        undecided = sum(v.undecided for v in report.variables.values())
        extra = f"; {undecided} undecided element(s) allowed" if undecided else ""
        where = " where finite differences decide" if undecided else ""
        return (
            f"check passed: {what} of {n} variable(s) agree{where} ({_settings(report)})"
            f"{kink_note}{extra}"
        )
    reasons = []
    for name, v in report.variables.items():
        if v.ok:
            continue
        kind = v.diagnosis.kind if v.diagnosis is not None else v.verdict
        reasons.append(f"{name} ({kind})")
    return f"check FAILED: {'; '.join(reasons)} ({_settings(report)}){kink_note}"


def check_report(report: Any, fmt: str, precision: int, all_elements: bool = False) -> None:
    from ...check.report import COLUMNS

    if fmt == "json":
        emit_json(check_json(report, all_elements))
        return
    if fmt == "csv":
        rows = [
            [*row[:3], *(_csv_number(v) for v in row[3:7]), row[7], row[8],
             _csv_number(row[9]), _csv_number(row[10])]
            for row in report.rows(all_elements)
        ]  # fmt: skip
        _write_csv(list(COLUMNS), rows)
        return
    out = console()
    for name, v in report.variables.items():
        _variable_tables(out, report, name, v, precision)
    if report.anomaly is not None:
        out.print(f"anomaly: {report.anomaly.message}", soft_wrap=True)
        if report.anomaly.snippet:
            out.print(report.anomaly.snippet)
    out.print(_check_summary(report))


def _variable_tables(out: Any, report: Any, name: str, v: Any, precision: int) -> None:
    note = ", unused" if v.unused else ""
    counts = ", ".join(f"{k} {c}" for k, c in v.counts().items() if c)
    if not v.compared:  # (a zero-size variable: " of 0" said nothing, QA round 27)
        caption = "no elements: nothing to compare"
    elif v.measured:
        caption = (f"{counts} of {v.compared}; max abs error {number(v.max_abs_error, 3)}, "
                   f"max rel error {number(v.max_rel_error, 3)}")  # fmt: skip
    elif v.count(2) or np.isfinite(v.left).any():  # (kinks: one-sided derivatives)
        caption = (f"{counts} of {v.compared}; at kinks only (one-sided derivatives, no error "
                   "to measure)")  # fmt: skip
    else:  # (f not finite where the differences go: no error to measure)
        caption = f"{counts} of {v.compared}; no finite difference to measure an error against"
    index_head = "direction" if report.fast or report.method == "taylor" else "index"
    table = _table(
        f"{name}: {v.verdict}{note}",
        [index_head, "analytic", "numeric", "abs error", "verdict"],
        caption,
    )
    for e in v.worst:
        label = index_label(e.input_index)
        if e.output_index:
            label = f"{index_label(e.output_index)} / {label}"
        verdict = e.verdict if not e.reason else f"{e.verdict}: {e.reason}"
        numeric, abs_error = number(e.numeric, precision), number(e.abs_error, 3)
        if e.one_sided is not None and not np.isfinite(e.numeric):  # a kink: its interval
            lo, hi = sorted(e.one_sided)
            numeric = f"kink [{number(lo, precision)}, {number(hi, precision)}]"
            abs_error = "-"
        table.add_row(label, number(e.analytic, precision), numeric, abs_error, verdict)
    out.print(table)
    if v.kinks:
        kinks = _table(
            f"{name}: non-differentiable points (not failures unless --strict)",
            ["index", "autograd", "left derivative", "right derivative"],
            "kinks in several coordinates: the gradient is within the hull of the "
            "gradients measured around the point"
            if v.certified_rows
            else None,
        )
        for e in v.kinks:  # (a coordinate smooth along its axis, certified: its derivative)
            left, right = e.one_sided if e.one_sided is not None else (e.numeric, e.numeric)
            kinks.add_row(
                index_label(e.input_index),
                number(e.analytic, precision),
                number(left, precision),
                number(right, precision),
            )
        out.print(kinks)
    if v.diagnosis is not None:
        for table_data in _taylor_tables(v.diagnosis):
            out.print(_taylor_table(name, table_data))
        out.print(f"{name}: {v.diagnosis.message}")
    if v.expect is not None:
        _expect_table(out, name, v.expect, precision)


def _taylor_tables(diagnosis: Any) -> list:
    taylor = diagnosis.evidence.get("taylor")
    if taylor is None:
        return []
    return taylor if isinstance(taylor, list) else [taylor]


def _taylor_table(name: str, data: dict) -> Any:
    table = _table(f"{name}: Taylor remainder, {data['verdict']}", ["step", "residual", "rate"],
                   data["message"])  # fmt: skip
    rows = data["table"]
    for row in rows[:: max(1, len(rows) // 12)]:
        rate = "" if row["rate"] is None else f"{row['rate']:.2f}"
        table.add_row(number(row["step"], 3), number(row["residual"], 3), rate)
    return table


def _expect_table(out: Any, name: str, x: Any, precision: int) -> None:
    hand = x.formula.startswith("--grad")
    table = _table(
        f"{name}: {x.formula}" if hand else f"{name}: expect {x.formula}",
        ["index", "hand gradient" if hand else "formula", "autograd", "finite differences"],
        x.verdict(),
    )
    shape = np.shape(x.value)
    for row in _shown(int(np.prod(shape)) if shape else 1):
        if row is None:
            table.add_row("…", "…", "…", "…")
            continue
        idx = tuple(int(i) for i in np.unravel_index(row, shape)) if shape else ()
        numeric = number(np.asarray(x.numeric)[idx], precision)
        if x.left is not None and np.isfinite(np.asarray(x.left)[idx]):  # a kink: the interval
            lo, hi = sorted((np.asarray(x.left)[idx], np.asarray(x.right)[idx]))
            numeric = f"kink [{number(lo, precision)}, {number(hi, precision)}]"
        table.add_row(
            index_label(idx),
            number(np.asarray(x.value)[idx], precision),
            number(np.asarray(x.analytic)[idx], precision),
            numeric,
        )
    out.print(table)
