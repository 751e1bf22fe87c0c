"""The registry of idiom snippets and the few helpers they share.

A snippet is a function ``name(torch) -> dict`` that takes the module it runs on (real PyTorch
or agrad) and returns plain results: numbers, bools, strings, None, and lists or tuples of
them. The same statements run on both modules, so PyTorch is the oracle for agrad.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Snippet:
    name: str
    mirrors: str  # the third-party code whose API calls and semantics the snippet exercises
    run: Callable[[Any], dict[str, Any]]
    nn: bool  # needs torch.nn (tallied apart: agrad.nn is issue 12)


SNIPPETS: dict[str, Snippet] = {}


def idiom(mirrors: str, *, nn: bool = False) -> Callable:
    """Register the decorated function as a snippet named after it."""

    def register(run: Callable[[Any], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
        if run.__name__ in SNIPPETS:
            raise ValueError(f"two snippets are named {run.__name__}")
        SNIPPETS[run.__name__] = Snippet(run.__name__, mirrors, run, nn)
        return run

    return register


def val(t: Any) -> Any:
    """A tensor (or None) as nested Python lists, for comparison."""
    return None if t is None else t.detach().tolist()


def vals(ts: Any) -> list:
    return [val(t) for t in ts]


def raised(fn: Callable[[], Any]) -> BaseException | None:
    """The exception ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as exc:  # the snippet inspects what was raised
        return exc
    return None


def printed(fn: Callable[[], Any]) -> str:
    """What ``fn()`` prints to stdout (tutorials print their results)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        fn()
    return buffer.getvalue()
