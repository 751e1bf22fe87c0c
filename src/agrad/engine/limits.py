"""The element limit: the largest array an op or a constructor may allocate.

The Python API sets none (as PyTorch). The language sets one for each run of a program
(``--max-elements``): `ops.core.apply` checks it, from the op's shape rule, before the
forward of any op that can give more elements than its largest input (broadcasting,
matmul, expand, fancy indexing, concat/stack), and the constructors check it before
they allocate. Running out of memory anyway becomes the same error, never a crash.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import AgradLimitError


class _Limit:
    """The current limit (None: no limit) and what the message says to do about it."""

    __slots__ = ("elements", "hint")

    def __init__(self) -> None:
        self.elements: int | None = None
        self.hint = "use smaller inputs"


LIMIT = _Limit()


@contextmanager
def max_elements(n: int | None, hint: str = "use smaller inputs") -> Iterator[None]:
    """Refuse results of more than ``n`` elements inside the block; ``hint`` ends the
    message (the language says how to raise its limit)."""
    before = LIMIT.elements, LIMIT.hint
    LIMIT.elements, LIMIT.hint = n, hint
    try:
        yield
    finally:
        LIMIT.elements, LIMIT.hint = before


def check_shape(shape: tuple[int, ...], what: str) -> None:
    """Refuse a result of ``shape`` if it exceeds the limit (before allocating it)."""
    if LIMIT.elements is not None:
        check_count(math.prod(shape), what)


def check_count(n: int, what: str) -> None:
    """Refuse a result of ``n`` elements if that exceeds the limit."""
    limit = LIMIT.elements
    if limit is not None and n > limit:
        raise AgradLimitError(
            f"{what}: the result would have {n:,} elements, more than the limit of "
            f"{limit:,}; {LIMIT.hint}"
        )


def out_of_memory(what: str) -> AgradLimitError:
    """The error for a MemoryError: a clean limit error, with the way out."""
    return AgradLimitError(f"{what}: out of memory computing this value; use smaller inputs")
