"""Pause the cyclic garbage collector while a program runs, in the CLI only (see `paused_gc`).

The collector belongs to whoever owns the process. A library must not disable or retune
it: a user's program may rely on it, or run other threads meanwhile. So `paused_gc` does
nothing until `allow_pausing()` is called, which only the command line does, since the
CLI's process is agrad's own.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
_PAUSES: list = [0, True]  # pauses in progress, and whether the collector ran before
_ALLOWED = [False]  # set by the CLI (allow_pausing): library calls leave the collector alone


def allow_pausing(allowed: bool = True) -> None:
    """Let `paused_gc` pause the collector: for a process agrad owns (the CLI)."""
    _ALLOWED[0] = allowed


def pausing_allowed() -> bool:
    """Whether `paused_gc` pauses the collector (the CLI) or does nothing (a library)."""
    return _ALLOWED[0]


class paused_gc:  # lower case: used as `with paused_gc():` and as `@paused_gc()`
    """In the CLI, pause Python's cyclic garbage collector while a program runs or
    differentiates; elsewhere (agrad used as a library) do nothing.

    A big program allocates hundreds of thousands of tensors and nodes that live until
    the end, and every collection pass rescans the young ones: with the collector on, a
    100,000-term program takes 10-20% longer (measured 2026-12-02). Graphs are freed by
    reference counting either way, and the collector resumes (with its normal thresholds)
    after.
    (A class, not a generator: `agrad fit` enters it every step.) The collector is the
    process's: with runs overlapping in several threads, the first to enter pauses it and
    the last to leave restores what the first found.
    """

    def __enter__(self) -> None:
        self.pausing = _ALLOWED[0]  # fixed at entry, so an exit always matches its entry
        if not self.pausing:
            return
        with _LOCK:
            if _PAUSES[0] == 0:
                _PAUSES[1] = gc.isenabled()
                gc.disable()
            _PAUSES[0] += 1

    def __exit__(self, *exc: object) -> None:
        if not self.pausing:
            return
        with _LOCK:
            _PAUSES[0] -= 1
            if _PAUSES[0] == 0 and _PAUSES[1]:
                gc.enable()

    def __call__(self, fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def paused(*args: Any, **kwargs: Any) -> T:
            with paused_gc():
                return fn(*args, **kwargs)

        return paused
