"""All of agrad's output, in one place: rich tables for people, JSON and CSV for scripts.

JSON carries full precision; non-finite numbers become the strings "nan", "inf"
and "-inf" so the output stays valid JSON. Tables show ``--precision``
significant digits and summarise tensors too large to show whole.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

MAX_ROWS = 20  # elements listed before a table is summarised
MAX_COLS = 10  # matrix columns shown


# ---- numbers ----------------------------------------------------------------------------


def number(v: Any, precision: int = 6) -> str:
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v + 0.0:.{precision}g}"  # + 0.0 turns -0.0 into 0.0


def to_json(value: Any) -> Any:
    """Arrays as nested lists, scalars as numbers, non-finite numbers as strings."""
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        return _json_number(float(array))
    return [to_json(row) for row in array] if array.ndim > 1 else [
        _json_number(float(v)) for v in array
    ]


def _json_number(v: float) -> Any:
    if np.isfinite(v):
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def emit_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")


def index_label(index: tuple[int, ...]) -> str:
    return "()" if not index else (str(index[0]) if len(index) == 1 else str(tuple(index)))


def _indices(shape: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
    return np.ndindex(*shape) if shape else iter([()])


def _write_csv(header: list[str], rows: Iterable[list[Any]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)


def _csv_number(v: Any) -> str:
    return repr(float(v)) if np.isfinite(v) else number(v)


# ---- tables -----------------------------------------------------------------------------


def console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def _table(title: str, columns: list[str], caption: str | None = None):
    from rich.table import Table

    table = Table(title=title, caption=caption, title_justify="left", caption_justify="left",
                  min_width=len(title))
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")
    return table


def _shown(n: int) -> list[int | None]:
    """Row numbers to show for n rows: all, or the head and tail with a gap (None)."""
    if n <= MAX_ROWS:
        return list(range(n))
    return list(range(MAX_ROWS - 5)) + [None] + list(range(n - 5, n))


def value_text(array: np.ndarray, precision: int) -> str:
    """A compact rendering of a whole tensor for a table cell."""
    array = np.asarray(array, dtype=np.float64)
    if array.ndim == 0:
        return number(array, precision)
    return np.array2string(
        array, precision=precision, threshold=MAX_ROWS, edgeitems=3, separator=", ",
        formatter={"float_kind": lambda v: number(v, precision)},
    )


def _summary(name: str, array: np.ndarray, precision: int) -> str:
    a = np.asarray(array, dtype=np.float64)
    finite = a[np.isfinite(a)]
    stats = (f"min {number(finite.min(), precision)}, max {number(finite.max(), precision)}, "
             f"norm {number(np.linalg.norm(finite), precision)}") if finite.size else "no finite values"
    return f"{name}: {a.size} elements, {stats}; --format json prints all of them"


def output_table(value: np.ndarray, grad_fn: str | None, precision: int):
    table = _table("output", ["", ""])
    table.show_header = False
    table.add_row("value", value_text(value, precision))
    table.add_row("shape", str(tuple(np.shape(value))))
    if grad_fn is not None:
        table.add_row("grad_fn", grad_fn)
    return table


def variable_table(var: Any, precision: int, grad_label: str = "gradient"):
    shape = tuple(np.shape(var.value))
    notes = [var.role, f"shape {shape}"]
    if not var.used:
        notes.append("unused: the output does not depend on it")
    size = int(np.prod(shape)) if shape else 1
    caption = _summary(grad_label, var.grad, precision) if size > MAX_ROWS else None
    table = _table(f"{var.name} ({', '.join(notes)})", ["index", "value", grad_label], caption)
    flat_v = np.asarray(var.value).reshape(-1)
    flat_g = np.asarray(var.grad).reshape(-1)
    labels = list(_indices(shape))
    for row in _shown(size):
        if row is None:
            table.add_row("…", "…", "…")
        else:
            table.add_row(index_label(labels[row]), number(flat_v[row], precision),
                          number(flat_g[row], precision))
    return table


def matrix_table(title: str, matrix: np.ndarray, rows: tuple, cols: tuple, precision: int):
    """A block of a Jacobian/Hessian as a matrix: rows index the output, columns the input."""
    m = np.asarray(matrix, dtype=np.float64).reshape(int(np.prod(rows)), int(np.prod(cols)))
    row_labels = [index_label(i) for i in _indices(rows)]
    col_labels = [index_label(i) for i in _indices(cols)]
    too_big = m.shape[0] > MAX_ROWS or m.shape[1] > MAX_COLS
    caption = _summary("matrix", m, precision) if too_big else None
    shown_cols = list(range(min(m.shape[1], MAX_COLS)))
    header = ["", *(col_labels[c] for c in shown_cols)] + (["…"] if m.shape[1] > MAX_COLS else [])
    table = _table(title, header, caption)
    for r in _shown(m.shape[0]):
        if r is None:
            table.add_row("…", *["…"] * (len(header) - 1))
            continue
        cells = [number(m[r, c], precision) for c in shown_cols]
        table.add_row(row_labels[r], *cells, *(["…"] if m.shape[1] > MAX_COLS else []))
    return table


# ---- per command ------------------------------------------------------------------------


def evaluation(result: Any, fmt: str, precision: int) -> None:
    variables = result.variables
    if fmt == "json":
        payload = {"value": to_json(result.value), "shape": list(np.shape(result.value)),
                   "grad_fn": result.grad_fn,
                   "grads": {n: to_json(v.grad) for n, v in variables.items()},
                   "unused": [n for n, v in variables.items() if not v.used]}
        emit_json(payload)
    elif fmt == "csv":
        rows = [["output", index_label(i), _csv_number(np.asarray(result.value)[i]), ""]
                for i in _indices(np.shape(result.value))]
        for name, var in variables.items():
            rows += [[name, index_label(i), _csv_number(np.asarray(var.value)[i]),
                      _csv_number(np.asarray(var.grad)[i])] for i in _indices(np.shape(var.value))]
        _write_csv(["name", "index", "value", "gradient"], rows)
    else:
        out = console()
        out.print(output_table(result.value, result.grad_fn, precision))
        for var in variables.values():
            out.print(variable_table(var, precision))
        if not variables:
            out.print("no gradients: name variables with --wrt, or mark leaves "
                      "tensor(..., requires_grad=true)")


def jacobian(value: np.ndarray, blocks: dict, fmt: str, precision: int) -> None:
    out_shape = tuple(np.shape(value))
    if fmt == "json":
        emit_json({"value": to_json(value), "shape": list(out_shape),
                   "jacobian": {n: to_json(v.grad) for n, v in blocks.items()},
                   "unused": [n for n, v in blocks.items() if not v.used]})
    elif fmt == "csv":
        rows = []
        for name, var in blocks.items():
            m = np.asarray(var.grad).reshape(int(np.prod(out_shape)), -1)
            for r, ri in enumerate(_indices(out_shape)):
                for c, ci in enumerate(_indices(np.shape(var.value))):
                    rows.append([name, index_label(ri), index_label(ci), _csv_number(m[r, c])])
        _write_csv(["variable", "output_index", "input_index", "value"], rows)
    else:
        out = console()
        out.print(output_table(value, None, precision))
        for name, var in blocks.items():
            note = "" if var.used else " (unused: the output does not depend on it)"
            out.print(matrix_table(f"d output / d {name}{note}", var.grad, out_shape,
                                   tuple(np.shape(var.value)), precision))


def hessian(value: np.ndarray, blocks: dict, mixed: dict, fmt: str, precision: int) -> None:
    if fmt == "json":
        emit_json({"value": to_json(value),
                   "hessian": {n: to_json(v.grad) for n, v in blocks.items()},
                   "mixed": {f"{a},{b}": to_json(h) for (a, b), h in mixed.items()}})
    elif fmt == "csv":
        rows = []
        for label, h, shape_a, shape_b in _hessian_blocks(blocks, mixed):
            m = np.asarray(h).reshape(int(np.prod(shape_a)), -1)
            for r, ri in enumerate(_indices(shape_a)):
                for c, ci in enumerate(_indices(shape_b)):
                    rows.append([label, index_label(ri), index_label(ci), _csv_number(m[r, c])])
        _write_csv(["variable", "index_i", "index_j", "value"], rows)
    else:
        out = console()
        out.print(output_table(value, None, precision))
        for label, h, shape_a, shape_b in _hessian_blocks(blocks, mixed):
            names = label.split(",")
            title = (f"d² output / d{names[0]}²" if len(names) == 1
                     else f"d² output / d{names[0]} d{names[1]}")
            out.print(matrix_table(title, h, shape_a, shape_b, precision))


def _hessian_blocks(blocks: dict, mixed: dict):
    shapes = {n: tuple(np.shape(v.value)) for n, v in blocks.items()}
    for name, var in blocks.items():
        yield name, var.grad, shapes[name], shapes[name]
    for (a, b), h in mixed.items():
        yield f"{a},{b}", h, shapes[a], shapes[b]


def functions(table: dict, fmt: str) -> None:
    if fmt == "json":
        emit_json({"functions": {n: {"signature": f.signature(), "doc": f.doc}
                                 for n, f in table.items()}})
    elif fmt == "csv":
        _write_csv(["name", "signature"], [[n, f.signature()] for n, f in table.items()])
    else:
        t = _table("functions", ["signature", "what it does"])
        for f in table.values():
            t.add_row(f.signature(), f.doc)
        console().print(t)


# ---- check ------------------------------------------------------------------------------


def _element_json(e: Any) -> dict[str, Any]:
    item = {"output_index": list(e.output_index), "input_index": list(e.input_index),
            "analytic": to_json(e.analytic), "numeric": to_json(e.numeric),
            "abs_error": to_json(e.abs_error), "rel_error": to_json(e.rel_error)}
    if e.one_sided is not None:
        item["one_sided"] = [to_json(e.one_sided[0]), to_json(e.one_sided[1])]
    return item


def check_json(report: Any) -> dict[str, Any]:
    variables = {}
    for name, v in report.variables.items():
        entry = {"ok": v.ok, "max_abs_error": to_json(v.max_abs_error),
                 "max_rel_error": to_json(v.max_rel_error), "failures": v.failures,
                 "compared": v.compared, "unused": v.unused,
                 "worst": [_element_json(e) for e in v.worst],
                 "kinks": [_element_json(e) for e in v.kinks]}
        if v.error_estimate is not None:
            entry["error_estimate"] = to_json(v.error_estimate)
        if v.expect is not None:
            x = v.expect
            entry["expect"] = {"formula": x.formula, "ok": x.ok, "verdict": x.verdict(),
                               "formula_value": to_json(x.value), "autograd": to_json(x.analytic),
                               "numeric": to_json(x.numeric)}
        variables[name] = entry
    return {"ok": report.ok, "variables": variables, "method": report.method,
            "eps": report.eps, "atol": report.atol, "rtol": report.rtol, "order": report.order,
            "fast": report.fast, "dtype": report.dtype, "evaluations": report.evaluations}


def _check_summary(report: Any) -> str:
    n = len(report.variables)
    failed = [name for name, v in report.variables.items() if not v.ok]
    kinks = sum(len(v.kinks) for v in report.variables.values())
    how = ("random-direction projections" if report.fast else f"{report.method} differences")
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
    return f"check FAILED: {'; '.join(reasons)} ({settings}){kink_note}"


def check_report(report: Any, fmt: str, precision: int) -> None:
    if fmt == "json":
        emit_json(check_json(report))
        return
    if fmt == "csv":
        rows = []
        for name, v in report.variables.items():
            for e in v.worst:
                rows.append([name, index_label(e.output_index), index_label(e.input_index),
                             _csv_number(e.analytic), _csv_number(e.numeric),
                             _csv_number(e.abs_error), _csv_number(e.rel_error),
                             "ok" if e.abs_error <= report.atol + report.rtol * abs(e.numeric)
                             else "FAIL"])
            for e in v.kinks:
                rows.append([name, index_label(e.output_index), index_label(e.input_index),
                             _csv_number(e.analytic), _csv_number(e.numeric),
                             _csv_number(e.abs_error), _csv_number(e.rel_error), "kink"])
        _write_csv(["variable", "output_index", "input_index", "analytic", "numeric",
                    "abs_error", "rel_error", "verdict"], rows)
        return
    out = console()
    for name, v in report.variables.items():
        verdict = "ok" if v.ok else "FAILED"
        note = ", unused" if v.unused else ""
        estimate = (f"; Richardson error estimate {number(v.error_estimate, 3)}"
                    if v.error_estimate is not None else "")
        caption = (f"max abs error {number(v.max_abs_error, 3)}, max rel error "
                   f"{number(v.max_rel_error, 3)}; {v.failures} of {v.compared} elements "
                   f"outside tolerance{estimate}")
        index_head = "direction" if report.fast else "index"
        table = _table(f"{name}: {verdict}{note}", [index_head, "analytic", "numeric",
                                                    "abs error", "rel error"], caption)
        for e in v.worst:
            label = index_label(e.input_index)
            if e.output_index:
                label = f"{index_label(e.output_index)} / {label}"
            table.add_row(label, number(e.analytic, precision), number(e.numeric, precision),
                          number(e.abs_error, 3), number(e.rel_error, 3))
        out.print(table)
        if v.kinks:
            kinks = _table(f"{name}: non-differentiable points (not failures unless --strict)",
                           ["index", "autograd", "left derivative", "right derivative"])
            for e in v.kinks:
                kinks.add_row(index_label(e.input_index), number(e.analytic, precision),
                              number(e.one_sided[0], precision), number(e.one_sided[1], precision))
            out.print(kinks)
        if v.expect is not None:
            x = v.expect
            table = _table(f"{name}: expect {x.formula}", ["index", "formula", "autograd",
                                                           "finite differences"], x.verdict())
            shape = np.shape(x.value)
            for row in _shown(int(np.prod(shape)) if shape else 1):
                if row is None:
                    table.add_row("…", "…", "…", "…")
                    continue
                idx = tuple(int(i) for i in np.unravel_index(row, shape)) if shape else ()
                table.add_row(index_label(idx), number(np.asarray(x.value)[idx], precision),
                              number(np.asarray(x.analytic)[idx], precision),
                              number(np.asarray(x.numeric)[idx], precision))
            out.print(table)
    out.print(_check_summary(report))


def suite_report(result: Any, fmt: str, precision: int) -> None:
    if fmt == "json":
        emit_json({"ok": result.ok, "suite": result.path, "seconds": result.seconds,
                   "cases": [{"name": c.name, "line": c.line, "ok": c.ok, "golden": c.golden,
                              "golden_max_abs_error": to_json(c.golden_error),
                              "message": c.message, "seconds": c.seconds,
                              "check": check_json(c.report) if c.report else None}
                             for c in result.cases]})
        return
    if fmt == "csv":
        _write_csv(["case", "ok", "golden", "max_abs_error", "seconds"],
                   [[c.name, "ok" if c.ok else "FAIL", c.golden,
                     _csv_number(max((v.max_abs_error for v in c.report.variables.values()),
                                     default=0.0)), f"{c.seconds:.4f}"] for c in result.cases])
        return
    table = _table(f"suite {result.path}", ["case", "result", "gradients", "golden",
                                            "max abs error", "seconds"])
    for c in result.cases:
        grads_ok = c.report.ok if c.report else False
        worst = max((v.max_abs_error for v in c.report.variables.values()), default=0.0)
        table.add_row(c.name, "ok" if c.ok else "FAIL", "ok" if grads_ok else "FAIL",
                      c.golden, number(worst, 3), f"{c.seconds:.3f}")
    out = console()
    out.print(table)
    failed = [c for c in result.cases if not c.ok]
    for c in failed:
        for name, v in (c.report.variables.items() if c.report else []):
            if not v.ok:
                detail = (f"expect: {v.expect.verdict()}" if v.expect and not v.expect.ok
                          else f"{v.failures} of {v.compared} elements differ, max abs error "
                          f"{number(v.max_abs_error, 3)}")
                out.print(f"FAIL {c.name}: {name}: {detail}")
        if c.golden == "regression":
            out.print(f"FAIL {c.name}: {c.message}")
    n = len(result.cases)
    out.print(f"suite FAILED: {len(failed)} of {n} case(s) failed" if failed else
              f"suite passed: all {n} case(s) ok")
