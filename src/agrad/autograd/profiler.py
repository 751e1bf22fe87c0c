"""torch.autograd.profiler.profile, minimal and honest: per-op counts and wall-clock times,
forward ops under PyTorch's ``aten::`` names (aten::pow, aten::mul, ...) and backward steps
under their node names (PowBackward0, ...), measured with time.perf_counter around each op.
There are no CUDA, memory, shape or stack records, and no nested attribution: an op's
"self" time is its whole time (agrad's ops do not call each other through the table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.graph_hooks import FEATURES, refresh


@dataclass
class FunctionEventAvg:
    key: str
    count: int = 0
    cpu_time_total: float = 0.0  # microseconds, as PyTorch reports them

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0


class EventList(list):
    """The averages per op name; ``table()`` prints them as PyTorch's profiler does."""

    _SORT_KEYS = {"self_cpu_time_total", "cpu_time_total", "cpu_time", "count"}

    def table(self, sort_by: str | None = None, row_limit: int = 100, **_: Any) -> str:
        rows = list(self)
        if sort_by is not None:
            key = sort_by if sort_by in self._SORT_KEYS else "cpu_time_total"
            rows.sort(key=lambda e: getattr(e, key), reverse=True)
        rows = rows[:row_limit] if row_limit and row_limit > 0 else rows
        total = sum(e.cpu_time_total for e in self) or 1.0
        name_width = max([len("Name"), *(len(e.key) for e in rows)]) + 2
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg", "# of Calls"]  # fmt: skip
        widths = [name_width] + [max(len(h), 12) + 2 for h in headers[1:]]
        rule = "-" * (sum(widths) + len(widths) - 1)

        def line(cells: list[str]) -> str:
            first = cells[0].ljust(widths[0])
            return " ".join(
                [first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))]
            )

        out = [rule, line(headers), rule]
        for e in rows:
            share = f"{100 * e.cpu_time_total / total:.2f}%"
            out.append(line([e.key, share, _us(e.cpu_time_total), share, _us(e.cpu_time_total),
                              _us(e.cpu_time), str(e.count)]))  # fmt: skip
        out += [rule, f"Self CPU time total: {_us(total if self else 0.0)}", ""]
        return "\n".join(out)


def _us(us: float) -> str:
    return f"{us / 1000:.3f}ms" if us >= 1000 else f"{us:.3f}us"


class profile:  # noqa: N801 - PyTorch's name
    """``with agrad.autograd.profiler.profile() as prof: ...`` then
    ``print(prof.key_averages().table(sort_by="self_cpu_time_total"))``."""

    def __init__(self, enabled: bool = True, **_: Any) -> None:
        self.enabled = enabled
        self._totals: dict[str, FunctionEventAvg] = {}

    def add(self, name: str, seconds: float) -> None:
        event = self._totals.get(name)
        if event is None:
            event = self._totals[name] = FunctionEventAvg(name)
        event.count += 1
        event.cpu_time_total += seconds * 1e6

    def __enter__(self) -> profile:
        if self.enabled:
            FEATURES.profilers.append(self)
            refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        if self in FEATURES.profilers:
            FEATURES.profilers.remove(self)
            refresh()

    def key_averages(self, **_: Any) -> EventList:
        return EventList(self._totals.values())

    def table(self, **kwargs: Any) -> str:
        return self.key_averages().table(**kwargs)

    def __str__(self) -> str:
        return self.table()
