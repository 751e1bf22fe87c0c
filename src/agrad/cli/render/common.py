"""Shared pieces of the renderer: number formatting, JSON, CSV and rich tables."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...check import serial
from ...check.labels import index_label
from ...errors import AgradLimitError
from ...records import record
from .plain_table import PlainTable

if TYPE_CHECKING:  # rich loads only when a table is drawn
    from rich.console import Console
    from rich.table import Table

MAX_ROWS = 20  # elements listed before a table is summarised
MAX_COLS = 10  # matrix columns shown

MAX_OUTPUT = 10**7  # numbers a JSON or CSV output may hold (about 200 MB of text)

__all__ = ["index_label"]  # the one convention for indices, re-exported for the renderers


@record
class OutputOptions:
    """Settings of one command's output (a CLI process runs one command)."""

    nonfinite: str = "string"  # "string": "nan", "inf", "-inf"; "null": JSON null
    max_numbers: int = MAX_OUTPUT


OUTPUT = OutputOptions()


def configure(nonfinite: str = "string", max_numbers: int = MAX_OUTPUT) -> None:
    """Set the output options for the command about to render (every command calls it)."""
    OUTPUT.nonfinite, OUTPUT.max_numbers = nonfinite, max_numbers


def budget(count: int, fmt: str) -> None:
    """Refuse, before any of it is built, a JSON or CSV output of more than --max-output
    numbers (a table summarises large tensors, so it needs no budget)."""
    if fmt in ("json", "csv") and count > OUTPUT.max_numbers:
        raise AgradLimitError(
            f"the {fmt.upper()} output would hold {count:,} numbers (about "
            f"{count * 20 / 1e6:,.0f} MB), more than the limit of {OUTPUT.max_numbers:,}; ask "
            "for less (fewer or smaller --wrt variables), or raise it with --max-output"
        )


# ---- numbers ----------------------------------------------------------------------------


def number(v: Any, precision: int = 6) -> str:
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v + 0.0:.{precision}g}"  # + 0.0 turns -0.0 into 0.0


to_json = serial.to_json  # one implementation for reports and the renderer


_NONFINITE = {"nan", "inf", "-inf"}
# Keys whose values are text, never numbers (a case may be named "inf"): left as they are.
_TEXT_KEYS = frozenset({
    "name", "suite", "path", "message", "error", "formula", "verdict", "reason", "kind",
    "method", "dtype", "grad_fn", "node", "rule", "to", "variable", "label", "phase", "op",
    "signature", "doc", "outcome", "golden", "source", "target", "interrupted",
})  # fmt: skip


def emit_json(payload: dict[str, Any]) -> None:
    """One JSON object on stdout. Every renderer's non-finite numbers are the strings
    "nan", "inf", "-inf"; with --nonfinite null they become null here, in one place."""
    from .json_text import dumps  # large arrays arrive as json_text.RawArray

    if OUTPUT.nonfinite == "null":
        payload = _nulled(payload)
    sys.stdout.write(dumps(payload, OUTPUT.nonfinite) + "\n")


def _nulled(payload: Any) -> Any:
    """The payload with the non-finite strings as None: walked with a stack, not recursion."""
    root = [payload]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        value = holder[key]
        if isinstance(value, str):
            if value in _NONFINITE:
                holder[key] = None
        elif isinstance(value, dict):
            copy = dict(value)
            holder[key] = copy
            stack.extend((copy, k) for k in copy if k not in _TEXT_KEYS)
        elif isinstance(value, list):
            copy = list(value)
            holder[key] = copy
            stack.extend((copy, i) for i in range(len(copy)))
    return root[0]


def _indices(shape: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
    return np.ndindex(*shape) if shape else iter([()])


def _write_csv(header: list[str], rows: Iterable[list[Any]]) -> None:
    import csv

    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)


def _csv_number(v: Any) -> str:
    return repr(float(v)) if np.isfinite(v) else number(v)


# ---- tables -----------------------------------------------------------------------------


def console() -> Console:
    from rich.console import Console

    # Text is printed as it is: values contain brackets (no markup), and a name such as a
    # suite case's 'fit :smile:' is not an emoji code (which also spares loading rich's
    # emoji table, a few ms of every table's start-up).
    return Console(highlight=False, soft_wrap=False, markup=False, emoji=False)


def _table(title: str, columns: list[str], caption: str | None = None):
    from rich.table import Table

    table = Table(
        title=title,
        caption=caption,
        title_justify="left",
        caption_justify="left",
        min_width=min(len(title), 60),
    )
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
        array,
        precision=precision,
        threshold=MAX_ROWS,
        edgeitems=3,
        separator=", ",
        formatter={"float_kind": lambda v: number(v, precision)},
    )


def _summary(name: str, array: np.ndarray, precision: int) -> str:
    a = np.asarray(array, dtype=np.float64)
    finite = a[np.isfinite(a)]
    if not finite.size:
        return f"{name}: {a.size} elements, no finite values; --format json prints all of them"
    stats = (
        f"min {number(finite.min(), precision)}, max {number(finite.max(), precision)}, "
        f"norm {number(np.linalg.norm(finite), precision)}"
    )
    return f"{name}: {a.size} elements, {stats}; --format json prints all of them"


def output_table(value: np.ndarray, grad_fn: str | None, precision: int) -> PlainTable:
    table = PlainTable("output", ["", ""])
    table.show_header = False
    table.add_row("value", value_text(value, precision))
    table.add_row("shape", str(tuple(np.shape(value))))
    if grad_fn is not None:
        table.add_row("grad_fn", grad_fn)
    return table


def variable_table(var: Any, precision: int, grad_label: str = "gradient") -> PlainTable:
    shape = tuple(np.shape(var.value))
    notes = [var.role, f"shape {shape}"]
    if not var.used:
        notes.append("unused: the output does not depend on it")
    size = int(np.prod(shape)) if shape else 1
    caption = _summary(grad_label, var.grad, precision) if size > MAX_ROWS else None
    title = f"{var.name} ({', '.join(notes)})"
    table = PlainTable(title, ["index", "value", grad_label], caption)
    flat_v = np.asarray(var.value).reshape(-1)
    flat_g = np.asarray(var.grad).reshape(-1)
    labels = list(_indices(shape))
    for row in _shown(size):
        if row is None:
            table.add_row("…", "…", "…")
        else:
            table.add_row(
                index_label(labels[row]),
                number(flat_v[row], precision),
                number(flat_g[row], precision),
            )
    return table


def matrix_table(title: str, matrix: np.ndarray, rows: tuple, cols: tuple, precision: int) -> Table:
    """A block of a Jacobian/Hessian as a matrix: rows index the output, columns the input."""
    m = np.asarray(matrix, dtype=np.float64).reshape(int(np.prod(rows)), int(np.prod(cols)))
    row_labels = [index_label(i) for i in _indices(rows)]
    col_labels = [index_label(i) for i in _indices(cols)]
    # As many columns as fit the terminal with their digits intact (about 2 + precision + 6).
    max_cols = max(2, min(MAX_COLS, (console().width - 8) // (precision + 9)))
    too_big = m.shape[0] > MAX_ROWS or m.shape[1] > max_cols
    caption = _summary("matrix", m, precision) if too_big else None
    if m.size == 0:
        caption = f"no elements: shape {tuple(rows) + tuple(cols)}"
    shown_cols = list(range(min(m.shape[1], max_cols)))
    header = ["", *(col_labels[c] for c in shown_cols)] + (["…"] if m.shape[1] > max_cols else [])
    table = _table(title, header, caption)
    for r in _shown(m.shape[0]):
        if r is None:
            table.add_row("…", *["…"] * (len(header) - 1))
            continue
        cells = [number(m[r, c], precision) for c in shown_cols]
        table.add_row(row_labels[r], *cells, *(["…"] if m.shape[1] > max_cols else []))
    return table
