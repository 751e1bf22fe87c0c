"""Pausing the cyclic garbage collector around big, short-lived allocations."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class paused_gc:  # lower case: used as `with paused_gc():` and as `@paused_gc()`
    """Pause Python's cyclic garbage collector while a program runs or differentiates.

    A big program allocates hundreds of thousands of tensors and nodes that live until
    the end; each generation-2 pass rescans all of them, so with the collector on, a
    100,000-term program takes twice as long as it should. Graphs are freed by reference
    counting either way, and the collector resumes (with its normal thresholds) after.
    (A class, not a generator: `agrad fit` enters it every step.)
    """

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            gc.enable()

    def __call__(self, fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def paused(*args: Any, **kwargs: Any) -> T:
            with paused_gc():
                return fn(*args, **kwargs)

        return paused
