"""The element limit: the largest array an op or a constructor may allocate.

The Python API sets none (as PyTorch). The language sets one for each run of a program
(``--max-elements``): `ops.core.apply` checks it, from the op's shape rule, before the
forward of any op that can give more elements than its largest input (broadcasting,
matmul, expand, fancy indexing, concat/stack), and the constructors check it before
they allocate. Running out of memory anyway becomes the same error, never a crash.
"""

from __future__ import annotations

import math
import threading

from ..errors import AgradLimitError


class _Limit:
    """Whether any thread has a limit set: ``elements`` is None when none has (the check
    every op makes then costs one plain attribute read), else the count of runs that
    set one. The limit itself is per thread (`_THREAD`): one thread's program run must
    not bound (or unbound) another thread's work."""

    __slots__ = ("elements",)

    def __init__(self) -> None:
        self.elements: int | None = None


class _ThreadLimit(threading.local):
    # Class defaults: a thread that never sets a limit reads them without any setup.
    elements: int | None = None
    hint = "use smaller inputs"


LIMIT = _Limit()
_THREAD = _ThreadLimit()
_LOCK = threading.Lock()


class max_elements:  # lower case: used as `with max_elements(n):`
    """Refuse results of more than ``n`` elements inside the block, in this thread; ``hint``
    ends the message (the language says how to raise its limit).
    (A class, not a generator: every run of a program enters it.)"""

    __slots__ = ("n", "hint", "before")

    def __init__(self, n: int | None, hint: str = "use smaller inputs") -> None:
        self.n, self.hint = n, hint

    def __enter__(self) -> None:
        self.before = _THREAD.elements, _THREAD.hint
        _THREAD.elements, _THREAD.hint = self.n, self.hint
        with _LOCK:
            LIMIT.elements = (LIMIT.elements or 0) + 1

    def __exit__(self, *exc: object) -> None:
        _THREAD.elements, _THREAD.hint = self.before
        with _LOCK:
            LIMIT.elements = (LIMIT.elements or 1) - 1 or None


def thread_limit() -> int | None:
    """This thread's limit (None: it has none)."""
    return _THREAD.elements


def check_shape(shape: tuple[int, ...], what: str) -> None:
    """Refuse a result of ``shape`` if it exceeds the limit (before allocating it)."""
    if LIMIT.elements is not None and _THREAD.elements is not None:
        check_count(math.prod(shape), what)


def check_count(n: int, what: str) -> None:
    """Refuse a result of ``n`` elements if that exceeds this thread's limit."""
    limit = _THREAD.elements if LIMIT.elements is not None else None
    if limit is not None and n > limit:
        raise AgradLimitError(
            f"{what}: the result would have {n:,} elements, more than the limit of "
            f"{limit:,}; {_THREAD.hint}"
        )


def out_of_memory(what: str) -> AgradLimitError:
    """The error for a MemoryError: a clean limit error, with the way out."""
    return AgradLimitError(f"{what}: out of memory computing this value; use smaller inputs")
