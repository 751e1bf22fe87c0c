"""Where a nan or inf first appeared: the op that made it, with the program text and a
caret under its column (PyTorch's anomaly mode names only a forward op's traceback).

Forward: the first instruction whose value is not finite while every value it read is.
Backward: the first node whose incoming gradient is finite and whose outgoing one is not
(0·inf in a rule, a derivative that is infinite at its point: sqrt at 0, log at 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.autograd import run_backward
from ..engine.node import Node
from ..engine.tensor import Tensor
from . import ir
from .diagnostics import caret_snippet


@dataclass
class Anomaly:
    """The first nan or inf, where it came from."""

    phase: str  # "forward" or "backward"
    value: str  # "nan" or "inf"
    op: str  # the function, operator or grad_fn
    line: int
    column: int
    snippet: str

    @property
    def message(self) -> str:
        where = f"line {self.line}, column {self.column}"
        if self.phase == "forward":
            return f"{self.value} first appears in the value of {self.op}, {where}"
        return f"{self.value} first appears in the gradient, in the backward of {self.op}, {where}"

    def to_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "value": self.value, "op": self.op, "line": self.line,
                "column": self.column, "message": self.message}  # fmt: skip


def _bad(value: Any) -> str | None:
    if not isinstance(value, Tensor) or value._array.dtype.kind not in "fc":
        return None
    data = value._array
    if np.isnan(data).any():
        return "nan"
    if np.isinf(data).any():
        return "inf"
    return None


def _label(instr: ir.Instr) -> str:
    if instr.kind == ir.CALL:
        return instr.name
    if instr.kind in (ir.BINARY, ir.UNARY):
        return f"'{instr.op}'"
    return {ir.INDEX: "indexing", ir.TRANSPOSE: ".T", ir.LIST: "a tensor literal"}.get(
        instr.kind, instr.kind.lower()
    )


def forward_origin(source: str, instrs: Sequence[ir.Instr], slots: list) -> Anomaly | None:
    """The first instruction that made a nan or inf out of finite values."""
    for instr, value in zip(instrs, slots, strict=False):
        kind = _bad(value)
        if kind is None or instr.kind in (ir.NAME, ir.CONST, ir.STORE):
            continue
        reads = [slots[j] for j in instr.args] + [slots[j] for _, j in instr.kwargs]
        if any(_bad(v) for v in reads):
            continue  # it only passed a bad value on
        return Anomaly(
            "forward",
            kind,
            _label(instr),
            instr.line,
            instr.column,
            caret_snippet(source, instr.line, instr.column, instr.end_column),
        )
    return None


def backward_origin(
    source: str, instrs: Sequence[ir.Instr], slots: list, output: Tensor, inputs: list[Tensor],
    seed: Any = None,
) -> Anomaly | None:  # fmt: skip
    """Run a backward pass (touching no .grad) and find the first node that turned a
    finite incoming gradient into a nan or inf."""
    made_by = {id(v.grad_fn): k for k, v in enumerate(slots)
               if isinstance(v, Tensor) and v.grad_fn is not None}  # fmt: skip
    found: list[tuple[Node, str]] = []

    def observe(node: Node, g: Any, grads: list, raw: tuple) -> None:
        if found or not np.all(np.isfinite(np.asarray(g))):
            return
        for gi in grads:
            if gi is None:
                continue
            data = np.asarray(gi)
            if not np.all(np.isfinite(data)):
                found.append((node, "nan" if np.isnan(data).any() else "inf"))
                return

    if output.grad_fn is None or not inputs:
        return None
    with np.errstate(all="ignore"):
        run_backward([output], [seed], retain_graph=True, inputs=inputs, on_node=observe)
    if not found:
        return None
    node, kind = found[0]
    k = made_by.get(id(node))
    if k is None:
        return Anomaly("backward", kind, node.name(), 0, 0, "")
    instr = instrs[k]
    return Anomaly("backward", kind, f"{_label(instr)} ({node.name()})", instr.line,
                   instr.column, caret_snippet(source, instr.line, instr.column,
                                               instr.end_column))  # fmt: skip


def find(program: Any, run: Any, inputs: list[Tensor], seed: Any = None) -> Anomaly | None:
    """The origin of the first nan or inf of a run: in its values, else in its gradient."""
    instrs = program.parsed.instrs
    return forward_origin(program.source, instrs, run.slots) or backward_origin(
        program.source, instrs, run.slots, run.output, inputs, seed
    )
