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
            cells = "  ".join(f"{n}={value_text(v, self.precision)}" for n, v in values.items())
            self.out.print(f"step {step:>6}  loss {number(loss, self.precision):>12}  {cells}")

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def chart(history: list[float], width: int = CHART_WIDTH, height: int = CHART_HEIGHT) -> str:
    """The loss curve in text: one column per bucket of steps, log scale when it spans
    more than two decades."""
    values = np.asarray(history, dtype=np.float64)
    if values.size == 0:
        return ""
    positive = values.min() > 0
    log = positive and values.max() / values.min() > 100
    ys = np.log10(values) if log else values
    buckets = np.array_split(ys, min(width, ys.size))
    points = np.array([b.mean() for b in buckets])
    lo, hi = float(points.min()), float(points.max())
    span = hi - lo or 1.0
    rows = [[" "] * len(points) for _ in range(height)]
    for x, y in enumerate(points):
        level = int(round((y - lo) / span * (height - 1)))
        rows[height - 1 - level][x] = "•"
    top = 10**hi if log else hi
    bottom = 10**lo if log else lo
    lines = [f"{number(top, 3):>10} ┤" + "".join(rows[0])]
    lines += [" " * 10 + " │" + "".join(r) for r in rows[1:-1]]
    lines.append(f"{number(bottom, 3):>10} ┤" + "".join(rows[-1]))
    lines.append(" " * 11 + "└" + "─" * len(points))
    scale = " (log scale)" if log else ""
    lines.append(" " * 12 + f"step 0 … {len(values) - 1}{scale}")
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
