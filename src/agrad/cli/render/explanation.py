"""Rendering of `eval --explain`: the backward pass as a worked example of the chain rule.

Plain lines rather than a table, so nothing is cut at 80 columns: each step names its
operands (the rule's letters, with their values), the gradient arriving g, the rule with
the program's names in it, and for each input g times the local derivative with numbers,
then the sum over the batch; the leaves' totals close it.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from .common import budget, console, emit_json, number, to_json
from .common import value_text as _value_text
from .values import evaluation

INDENT = "    "


def value_text(array: Any, precision: int) -> str:
    """A tensor on one line (a matrix's rows side by side), for running text."""
    return _value_text(array, precision).replace("\n", "")


def _sum_text(parts: np.ndarray, total: np.ndarray, precision: int) -> str:
    """``-8 + -20 = -28`` for a few terms summed to a number, else the arrays."""
    if np.size(total) == 1 and np.size(parts) <= 8:
        terms = " + ".join(number(v, precision) for v in np.ravel(parts))
        return f"{terms} = {number(np.ravel(total)[0], precision)}"
    return f"{value_text(parts, precision)} summed to {value_text(total, precision)}"


def _local_rhs(rule: str, shown: str) -> str | None:
    """The right-hand side of the rule's part for the input named ``shown``."""
    for part in rule.split(", "):
        head, eq, rhs = part.partition(" = ")
        if eq and (head.endswith(f"/d{shown}") or head.endswith(f"/d({shown})")):
            return rhs.split(" (")[0]
    return None


def _operands_line(step: Any, precision: int) -> str:
    parts = []
    for o in step.operands:
        where = o.source if o.name is None else ("a constant" if o.kind == "constant" else "")
        text = f"{o.shown} = " + (f"{where} = " if o.name is None else "")
        text += "(not kept)" if o.value is None else value_text(o.value, precision)
        if o.name is not None and o.kind == "constant":
            text += " (a constant)"
        parts.append(text)
    return ", ".join(parts)


def _send_lines(step: Any, sent: Any, precision: int) -> list[str]:
    if sent.grad is None:
        return [f"{sent.to}: a constant, no gradient"]
    operand = next((o for o in step.operands if o.letter == sent.letter), None)
    rhs = None if operand is None else _local_rhs(step.rule_named, operand.shown)
    before = sent.grad if sent.summed_from is None else sent.summed_from
    to = sent.to if sent.step is None else f"{sent.to} (step {sent.step})"
    if sent.local is not None:
        local = value_text(sent.local, precision)
        formula = f"g·{rhs}" if rhs else "g·(local derivative)"
        line = (
            f"→ {to}: {formula} = {value_text(step.grad_in, precision)}·{local} = "
            f"{value_text(before, precision)}"
        )
    else:
        line = f"→ {to}: {value_text(before, precision)}"
    lines = [line]
    if sent.summed_from is not None:
        total = _sum_text(sent.summed_from, sent.grad, precision)
        lines.append(f"  summed over the batch: {total}")
    return lines


def _arriving(step: Any, precision: int) -> str:
    g = value_text(step.grad_in, precision)
    if step.contributions:
        terms = " + ".join(value_text(c, precision) for c in step.contributions)
        return f"g = {terms} = {g} (from its {len(step.contributions)} consumers)"
    return f"g = {g}" + (" (d output/d output)" if step.number == 1 else " (arriving)")


def _text(steps: Any, precision: int, width: int) -> list[str]:
    lines = [
        "the backward pass, step by step: each node multiplies the gradient arriving, g,",
        "by its local derivative (the chain rule) and sends the product to its inputs",
    ]
    for s in steps:
        lines.append("")
        lines.append(f"step {s.number}  {s.node}")
        body = [_operands_line(s, precision), _arriving(s, precision), f"rule: {s.rule_named}"]
        for sent in s.sends:
            body += _send_lines(s, sent, precision)
        for item in body:
            lead = INDENT + ("     " if item.startswith("  summed") else "")
            lines += textwrap.wrap(
                item.strip(), width, initial_indent=lead, subsequent_indent=lead + "  "
            )
    leaves = getattr(steps, "leaves", {})
    if leaves:
        lines += ["", "what each leaf accumulates (the sum of what reached it)"]
        for name, parts in leaves.items():
            total = sum(parts[1:], parts[0])
            text = f"{name} ← {value_text(total, precision)}"
            if len(parts) > 1:
                terms = " + ".join(value_text(p, precision) for p in parts)
                text = f"{name} ← {terms} = {value_text(total, precision)}"
            lines += textwrap.wrap(text, width, initial_indent=INDENT, subsequent_indent=INDENT * 2)
    return lines


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
            "steps": [_step_json(s) for s in steps],
        }
        emit_json(payload)
        return
    if fmt == "csv":
        evaluation(result, fmt, precision)
        return
    out = console()
    width = max(60, min(out.width, 100))
    for line in _text(steps, precision, width):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print()
    evaluation(result, fmt, precision)


def _step_json(s: Any) -> dict:
    return {
        "step": s.number,
        "node": s.node,
        "variable": s.variable,
        "grad_in": to_json(s.grad_in),
        "contributions": [to_json(c) for c in s.contributions],
        "rule": s.rule,
        "rule_named": s.rule_named,
        "operands": [
            {
                "letter": o.letter,
                "name": o.name,
                "source": o.source,
                "value": None if o.value is None else to_json(o.value),
            }
            for o in s.operands
        ],  # fmt: skip
        "sends": [
            {
                "to": x.to,
                "kind": x.kind,
                "grad": None if x.grad is None else to_json(x.grad),
                "summed_from": None if x.summed_from is None else to_json(x.summed_from),
                "local": None if x.local is None else to_json(x.local),
            }
            for x in s.sends
        ],
    }
