"""Pausing the cyclic garbage collector around big, short-lived allocations."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a program runs or differentiates.

    A big program allocates hundreds of thousands of tensors and nodes that live until
    the end; each generation-2 pass rescans all of them, so with the collector on, a
    100,000-term program takes twice as long as it should. Graphs are freed by reference
    counting either way, and the collector resumes (with its normal thresholds) after.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
