"""Ctrl-C in the CLI: exit at once, except where a command reports what it did so far.

The console script (`_agrad_entry`) makes SIGINT end the process immediately with
``error: interrupted`` and exit 130, wherever it arrives (an import, a NumPy
call, an error message). A loop whose partial results are worth showing (fit's
steps, a suite's cases) runs inside `reporting_interrupts`, where Ctrl-C raises
KeyboardInterrupt as usual, so that it can stop, show the state reached and
raise `AgradInterrupted`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def reporting_interrupts() -> Iterator[None]:
    """Inside: Ctrl-C raises KeyboardInterrupt (in the main thread; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
