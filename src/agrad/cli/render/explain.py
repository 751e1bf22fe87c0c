"""Rendering of `eval --explain`: the backward pass as a table of steps."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import _table, budget, console, emit_json, to_json, value_text
from .values import evaluation


def _sent_text(sent: Any, precision: int) -> str:
    if sent.grad is None:
        return f"{sent.to}: constant, no gradient"
    text = f"→ {sent.to}: {value_text(sent.grad, precision)}"
    if sent.summed_from is not None:
        text += f"  (summed over the batch: {value_text(sent.summed_from, precision)})"
    return text


def explain(result: Any, steps: list, fmt: str, precision: int) -> None:
    if fmt == "json":
        sent = sum(np.size(x.grad) + np.size(x.summed_from) for s in steps for x in s.sends)
        budget(sum(np.size(s.grad_in) for s in steps) + sent + np.size(result.value), fmt)
        payload = {
            "value": to_json(result.value),
            "shape": list(np.shape(result.value)),
            "grad_fn": result.grad_fn,
            "grads": {n: to_json(v.grad) for n, v in result.variables.items()},
            "unused": [n for n, v in result.variables.items() if not v.used],
            "steps": [
                {
                    "step": s.number,
                    "node": s.node,
                    "variable": s.variable,
                    "grad_in": to_json(s.grad_in),
                    "rule": s.rule,
                    "sends": [
                        {
                            "to": x.to,
                            "kind": x.kind,
                            "grad": None if x.grad is None else to_json(x.grad),
                            "summed_from": None
                            if x.summed_from is None
                            else to_json(x.summed_from),
                        }
                        for x in s.sends
                    ],
                }
                for s in steps
            ],
        }
        emit_json(payload)
        return
    if fmt == "csv":
        evaluation(result, fmt, precision)
        return
    out = console()
    table = _table(
        "the backward pass, step by step (from the output to the leaves)",
        ["step", "node", "gradient arriving", "local rule", "sends"],
    )
    for column in table.columns[1:]:
        column.justify = "left"
    for s in steps:
        table.add_row(
            str(s.number),
            s.node,
            value_text(s.grad_in, precision),
            s.rule,
            "\n".join(_sent_text(x, precision) for x in s.sends),
        )
    out.print(table)
    evaluation(result, fmt, precision)
