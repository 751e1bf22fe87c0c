"""The tables of `agrad eval` as data, printed by Rich, or without importing Rich when the
text Rich would print is certain: a plain stream (no terminal, so no styles), UTF-8, and
small tables of printable ASCII that fit the width, untouched by Rich's wrapping and
expanding. Importing Rich's console and table costs about a seventh of a small command's
start-up. tests/test_cli_plain_table.py compares the two texts byte for byte.
"""

from __future__ import annotations

import builtins
import os
import sys
from typing import Any


class PlainTable:
    """A table as `common._table` makes it with Rich: the title above it (left), the
    first column left-justified and the others right, a header unless it is hidden."""

    def __init__(self, title: str, columns: list[str], caption: str | None = None) -> None:
        self.title = title
        self.columns = columns
        self.caption = caption
        self.show_header = True
        self.rows: list[tuple[str, ...]] = []

    def add_row(self, *cells: str) -> None:
        self.rows.append(cells)

    def rich(self) -> Any:
        from .common import _table

        table = _table(self.title, self.columns, self.caption)
        table.show_header = self.show_header
        for row in self.rows:
            table.add_row(*row)
        return table


def print_tables(tables: list[PlainTable]) -> None:
    """Print the tables one after another, as Rich's console prints them."""
    text = plain_text(tables)
    if text is not None:
        sys.stdout.write(text)
        return
    from .common import console

    out = console()
    for table in tables:
        out.print(table.rich())


def plain_text(tables: list[PlainTable]) -> str | None:
    """What Rich would print for ``tables`` on this stdout, or None where it is Rich's to
    say (a terminal, forced colour, Jupyter, Windows, another encoding, a table that
    wraps, expands or holds other characters)."""
    if not _plain_stream():
        return None
    width = _console_width()
    out = []
    for table in tables:
        lines = _lines(table, width)
        if lines is None:
            return None
        out += lines
    return "".join(line + "\n" for line in out)


def _plain_stream() -> bool:
    env = os.environ
    if sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return False
    if "TTY_COMPATIBLE" in env or "FORCE_COLOR" in env:
        return False
    stream = sys.stdout
    try:
        if stream is None or stream.isatty():
            return False
    except ValueError:
        return False
    encoding = (getattr(stream, "encoding", "utf-8") or "utf-8").lower()
    return encoding.startswith("utf")


def _console_width() -> int:
    """Rich's Console.size width without a terminal on stdout: COLUMNS, else the first of
    stdin/stdout/stderr that is a terminal, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    width = None
    for fd in (0, 1, 2):
        try:
            width, _ = os.get_terminal_size(fd)
        except (AttributeError, ValueError, OSError):
            continue
        break
    return width or 80


def _simple(text: str) -> bool:
    # Printable ASCII is one cell a character; Rich strips the ends of justified text.
    return text.isascii() and text.isprintable() and text == text.strip()


def _lines(table: PlainTable, width: int) -> list[str] | None:
    if table.caption is not None or not table.title or not table.rows or len(table.rows) > 20:
        return None
    cells = [list(row) for row in table.rows]
    if any(len(row) != len(table.columns) for row in cells):
        return None
    texts = [table.title, *table.columns, *(c for row in cells for c in row)]
    if not all(isinstance(t, str) and _simple(t) for t in texts):
        return None
    measured = cells + ([table.columns] if table.show_header else [])
    widths = [max([len(row[i]) for row in measured] + [0]) for i in range(len(table.columns))]
    if not all(widths):
        return None  # an empty column: Rich's own measuring
    total = sum(widths) + 3 * len(widths) + 1
    # Rich would expand to min_width, wrap a longer title, or shrink to fit the console.
    if total > width or len(table.title) > total or min(len(table.title), 60) > total:
        return None

    def row_line(row: list[str], bar: str) -> str:
        parts = [
            f" {c.ljust(w) if i == 0 else c.rjust(w)} "
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return bar + bar.join(parts) + bar

    def rule(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    lines = [table.title.ljust(total)]
    if table.show_header:  # Rich's box.HEAVY_HEAD
        lines += [rule("┏", "━", "┳", "┓"), row_line(table.columns, "┃"), rule("┡", "━", "╇", "┩")]
    else:  # HEAVY_HEAD without a header is drawn as box.SQUARE
        lines.append(rule("┌", "─", "┬", "┐"))
    lines += [row_line(row, "│") for row in cells]
    lines.append(rule("└", "─", "┴", "┘"))
    return lines
