"""Standard output and error that a closed reader cannot break.

``agrad jacobian ... | head`` closes the pipe while agrad is still writing; Python
then raises BrokenPipeError from whatever write or flush comes next. That is not
an error of the command: the rest of its output is discarded and it exits with
the status its results earned (0, or 1 for a failed check), never a traceback
and never 1 for the broken pipe itself. A stream that is closed from the start
(``agrad ... >&-``, where Python sets sys.stdout to None) is treated the same way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class QuietStream:
    """A text stream proxy that drops output once its reader has gone away."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.broken = stream is None

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except (BrokenPipeError, ValueError):  # ValueError: the stream was closed
                self._break()
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                self._break()

    def isatty(self) -> bool:
        return not self.broken and bool(getattr(self._stream, "isatty", lambda: False)())

    def _break(self) -> None:
        self.broken = True
        # Point the descriptor at /dev/null so that a flush of the data still buffered in
        # the real stream (at exit) finds somewhere to go instead of raising again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, buffer... of the real one
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextmanager
def guarded_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr as `QuietStream` for the duration of a command."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = QuietStream(saved[0]), QuietStream(saved[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved
