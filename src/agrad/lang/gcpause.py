"""Pause the cyclic garbage collector while a program runs (see `paused_gc`)."""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
_PAUSES: list = [0, True]  # pauses in progress, and whether the collector ran before


class paused_gc:  # lower case: used as `with paused_gc():` and as `@paused_gc()`
    """Pause Python's cyclic garbage collector while a program runs or differentiates.

    A big program allocates hundreds of thousands of tensors and nodes that live until
    the end; each generation-2 pass rescans all of them, so with the collector on, a
    100,000-term program takes twice as long as it should. Graphs are freed by reference
    counting either way, and the collector resumes (with its normal thresholds) after.
    (A class, not a generator: `agrad fit` enters it every step.) The collector is the
    process's: with runs overlapping in several threads, the first to enter pauses it and
    the last to leave restores what the first found.
    """

    def __enter__(self) -> None:
        with _LOCK:
            if _PAUSES[0] == 0:
                _PAUSES[1] = gc.isenabled()
                gc.disable()
            _PAUSES[0] += 1

    def __exit__(self, *exc: object) -> None:
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
