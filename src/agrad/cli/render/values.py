"""Rendering of eval, jacobian, hessian and the function list."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import (
    _csv_number,
    _indices,
    _table,
    _write_csv,
    budget,
    console,
    emit_json,
    index_label,
    matrix_table,
    output_table,
    variable_table,
)  # fmt: skip
from .json_text import json_array
from .plain_table import print_tables


def evaluation(result: Any, fmt: str, precision: int) -> None:
    variables = result.variables
    budget(np.size(result.value) + sum(2 * np.size(v.grad) for v in variables.values()), fmt)
    if fmt == "json":
        payload = {
            "value": json_array(result.value),
            "shape": list(np.shape(result.value)),
            "grad_fn": result.grad_fn,
            "grads": {n: json_array(v.grad) for n, v in variables.items()},
            "unused": [n for n, v in variables.items() if not v.used],
        }
        if result.anomaly is not None:
            payload["anomaly"] = result.anomaly.to_dict()
        emit_json(payload)
    elif fmt == "csv":
        rows = [
            ["output", index_label(i), _csv_number(np.asarray(result.value)[i]), ""]
            for i in _indices(np.shape(result.value))
        ]
        for name, var in variables.items():
            rows += [
                [
                    name,
                    index_label(i),
                    _csv_number(np.asarray(var.value)[i]),
                    _csv_number(np.asarray(var.grad)[i]),
                ]
                for i in _indices(np.shape(var.value))
            ]
        _write_csv(["variable", "index", "value", "gradient"], rows)
    else:
        tables = [output_table(result.value, result.grad_fn, precision)]
        tables += [variable_table(var, precision) for var in variables.values()]
        if variables and result.anomaly is None:
            print_tables(tables)  # without Rich where its text is certain
            return
        out = console()
        for table in tables:
            out.print(table.rich())
        if not variables:
            out.print(
                "no gradients: name variables with --wrt, or mark leaves "
                "tensor(..., requires_grad=true)"
            )
        if result.anomaly is not None:
            out.print(f"anomaly: {result.anomaly.message}", soft_wrap=True)
            if result.anomaly.snippet:
                out.print(result.anomaly.snippet)


def jacobian(value: np.ndarray, blocks: dict, fmt: str, precision: int) -> None:
    out_shape = tuple(np.shape(value))
    budget(np.size(value) + sum(np.size(v.grad) for v in blocks.values()), fmt)
    if fmt == "json":
        emit_json(
            {
                "value": json_array(value),
                "shape": list(out_shape),
                "jacobian": {n: json_array(v.grad) for n, v in blocks.items()},
                "unused": [n for n, v in blocks.items() if not v.used],
            }
        )
    elif fmt == "csv":
        rows = []
        for name, var in blocks.items():
            in_shape = np.shape(var.value)
            m = np.asarray(var.grad).reshape(_count(out_shape), _count(in_shape))
            for r, ri in enumerate(_indices(out_shape)):
                for c, ci in enumerate(_indices(in_shape)):
                    rows.append([name, index_label(ri), index_label(ci), _csv_number(m[r, c])])
        _write_csv(["variable", "output_index", "input_index", "value"], rows)
    else:
        out = console()
        out.print(output_table(value, None, precision).rich())
        for name, var in blocks.items():
            note = "" if var.used else " (unused: the output does not depend on it)"
            out.print(
                matrix_table(
                    f"d output / d {name}{note}",
                    var.grad,
                    out_shape,
                    tuple(np.shape(var.value)),
                    precision,
                )
            )


def hessian(value: np.ndarray, blocks: dict, mixed: dict, fmt: str, precision: int) -> None:
    sizes = [np.size(v.grad) for v in blocks.values()] + [np.size(h) for h in mixed.values()]
    budget(sum(sizes), fmt)
    if fmt == "json":
        emit_json(
            {
                "value": json_array(value),
                "hessian": {n: json_array(v.grad) for n, v in blocks.items()},
                "mixed": {f"{a},{b}": json_array(h) for (a, b), h in mixed.items()},
            }
        )
    elif fmt == "csv":
        rows = []
        for label, h, shape_a, shape_b in _hessian_blocks(blocks, mixed):
            m = np.asarray(h).reshape(_count(shape_a), _count(shape_b))
            for r, ri in enumerate(_indices(shape_a)):
                for c, ci in enumerate(_indices(shape_b)):
                    rows.append([label, index_label(ri), index_label(ci), _csv_number(m[r, c])])
        _write_csv(["variable", "output_index", "input_index", "value"], rows)
    else:
        out = console()
        out.print(output_table(value, None, precision).rich())
        for label, h, shape_a, shape_b in _hessian_blocks(blocks, mixed):
            names = label.split(",")
            title = (
                f"d² output / d{names[0]}²"
                if len(names) == 1
                else f"d² output / d{names[0]} d{names[1]}"
            )
            out.print(matrix_table(title, h, shape_a, shape_b, precision))


def _count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))  # reshape(n, -1) cannot infer -1 when n is 0


def _hessian_blocks(blocks: dict, mixed: dict):
    shapes = {n: tuple(np.shape(v.value)) for n, v in blocks.items()}
    for name, var in blocks.items():
        yield name, var.grad, shapes[name], shapes[name]
    for (a, b), h in mixed.items():
        yield f"{a},{b}", h, shapes[a], shapes[b]


def functions(table: dict, fmt: str) -> None:
    if fmt == "json":
        emit_json(
            {"functions": {n: {"signature": f.signature(), "doc": f.doc} for n, f in table.items()}}
        )
    elif fmt == "csv":
        _write_csv(["name", "signature"], [[n, f.signature()] for n, f in table.items()])
    else:
        t = _table("functions", ["signature", "what it does"])
        t.columns[1].justify = "left"
        for f in table.values():
            t.add_row(f.signature(), f.doc)
        console().print(t)
