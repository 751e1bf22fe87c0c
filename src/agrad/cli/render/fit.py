"""Rendering of `agrad fit`: a progress bar on terminals, logged rows, the loss curve."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .common import _table, budget, console, emit_json, number, to_json, value_text

CHART_WIDTH, CHART_HEIGHT = 60, 10


class Progress:
    """A rich progress bar (only on a terminal, only for tables) plus --every rows."""

    def __init__(self, steps: int, fmt: str, every: int, precision: int) -> None:
        self.steps, self.fmt, self.every, self.precision = steps, fmt, every, precision
        self.out = console()
        self.bar = None
        self.task = None
        self.history: list[float] = []  # the losses reported so far (for an interruption)
        self.values: dict[str, np.ndarray] = {}

    def __enter__(self) -> Progress:
        if self.fmt == "table" and self.out.is_terminal:
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("fitting"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total} steps, loss {task.fields[loss]}"),
                TimeElapsedColumn(),
                console=self.out,
                transient=True,
            )
            self.bar.__enter__()
            self.task = self.bar.add_task("fit", total=self.steps, loss="…")
        return self

    def update(self, step: int, loss: float, values: dict[str, np.ndarray]) -> None:
        self.history.append(loss)
        self.values = values
        if self.bar is not None:
            self.bar.update(self.task, completed=step, loss=number(loss, 4))
        if self.every and self.fmt == "table" and step % self.every == 0:
            cells = "  ".join(f"{n}={_cell(v, self.precision)}" for n, v in values.items())
            self.out.print(f"step {step:>6}  loss {number(loss, self.precision):>12}  {cells}")

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _cell(value: Any, precision: int) -> str:
    """A parameter in a --every row, on one line: a few numbers as they are, a larger tensor
    as its shape, range and norm."""
    a = np.asarray(value, dtype=np.float64)
    if a.size <= 4 and a.ndim <= 1:
        return value_text(a, precision)
    if not np.isfinite(a).all():
        return f"shape {a.shape}, not finite"
    low, high = number(a.min(), 3), number(a.max(), 3)
    return f"shape {a.shape} in [{low}, {high}], norm {number(np.linalg.norm(a), 3)}"


def chart(history: list[float], width: int = CHART_WIDTH, height: int = CHART_HEIGHT) -> str:
    """The loss curve in text, drawn so that it does not lie: the first column is the first
    loss itself and the last column ends at the final loss; every other column covers a
    bucket of steps and spans its minimum to its maximum (oscillation stays visible); the
    axis is logarithmic when the losses span more than two decades, labelled with real
    values either way."""
    values = np.asarray(history, dtype=np.float64)
    if values.size == 0:
        return ""
    log = values.min() > 0 and values.max() / values.min() > 100
    ys = np.log10(values) if log else values
    columns = [ys[:1]]  # the first loss alone
    if ys.size > 1:
        columns += np.array_split(ys[1:], min(width - 1, ys.size - 1))
    lows = np.array([c.min() for c in columns])
    highs = np.array([c.max() for c in columns])
    lo, hi = float(lows.min()), float(highs.max())
    if hi == lo:  # a flat curve: drawn on the labelled middle row, on a true axis around it
        step = (abs(hi) * 0.1 or 1.0) / (height - 1)
        mid = (height - 1) // 2
        lo, hi = lo - step * (height - 1 - mid), hi + step * mid
    span = hi - lo

    def level(y: float) -> int:
        return int(round((y - lo) / span * (height - 1)))

    rows = [[" "] * len(columns) for _ in range(height)]
    for x, (low, high, column) in enumerate(zip(lows, highs, columns, strict=True)):
        bottom, top = level(low), level(high)
        for y in range(bottom, top + 1):
            rows[height - 1 - y][x] = "│"
        rows[height - 1 - level(column[-1])][x] = "•"  # where the bucket ends
    labels = {
        0: hi,
        height - 1: lo,
        (height - 1) // 2: hi - span * ((height - 1) // 2) / (height - 1),
    }
    lines = []
    for i, row in enumerate(rows):
        label = labels.get(i)
        if label is None:
            lines.append(" " * 10 + " │" + "".join(row))
        else:
            real = 10**label if log else label
            lines.append(f"{number(real, 3):>10} ┤" + "".join(row))
    lines.append(" " * 11 + "└" + "─" * len(columns))
    scale = "log scale" if log else "linear scale"
    lines.append(" " * 12 + f"steps 0…{len(values) - 1}, {scale}; • end of a span, │ its range")
    lines.append(
        " " * 12 + f"first loss {number(values[0], 4)}, last {number(values[-1], 4)}, "
        f"lowest {number(values.min(), 4)} at step {int(values.argmin())}"
    )
    return "\n".join(lines)


def fit_result(result: Any, fmt: str, precision: int, interrupted: bool = False) -> None:
    """The fitted values, the final loss and the curve; ``interrupted``: the state reached
    when Ctrl-C stopped the run (the CLI then exits 130)."""
    budget(len(result.history) + sum(np.size(v) for v in result.values.values()), fmt)
    if fmt == "json":
        emit_json(
            {
                "values": {n: to_json(v) for n, v in result.values.items()},
                "loss": to_json(result.loss),
                "history": [to_json(v) for v in result.history],
                "steps": result.steps,
                "diverged": result.diverged,
                "diverged_at": result.diverged_at,
                "interrupted": interrupted,
            }
        )
        return
    if fmt == "csv":
        from .common import _write_csv

        _write_csv(["step", "loss"], [[i, repr(v)] for i, v in enumerate(result.history)])
        return
    out = console()
    if interrupted:
        out.print(f"interrupted at step {result.steps}: the state reached so far")
    if result.diverged:
        out.print(
            f"diverged at step {result.diverged_at}: the loss became non-finite; showing "
            f"the last finite state (step {result.steps}); try a smaller --lr"
        )
    table = _table("fitted values", ["variable", "value"])
    for name, value in result.values.items():
        table.add_row(name, value_text(value, precision))
    table.add_row("loss", number(result.loss, precision))
    out.print(table)
    if len(result.history) > 1 and all(math.isfinite(v) for v in result.history):
        out.print(chart(result.history))
