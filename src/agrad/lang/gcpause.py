"""Pausing the cyclic garbage collector around big, short-lived allocations."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_PAUSES: list = [0, True]  # pauses in progress, and whether the collector ran before


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a program runs or differentiates.

    A big program allocates hundreds of thousands of tensors and nodes that live until
    the end; each generation-2 pass rescans all of them, so with the collector on, a
    100,000-term program takes twice as long as it should. Graphs are freed by reference
    counting either way, and the collector resumes (with its normal thresholds) after.
    """
    # The collector is the process's: with runs overlapping in several threads, the first
    # to enter pauses it and the last to leave restores what the first found.
    with _LOCK:
        if _PAUSES[0] == 0:
            _PAUSES[1] = gc.isenabled()
            gc.disable()
        _PAUSES[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _PAUSES[0] -= 1
            if _PAUSES[0] == 0 and _PAUSES[1]:
                gc.enable()
