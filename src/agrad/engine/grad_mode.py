"""Grad mode: whether operations record a graph (PyTorch's no_grad & co.)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradState(threading.local):
    """Read on every op. Per thread, as PyTorch's grad mode is: one thread's ``no_grad``
    must not stop another's recording (a thread-local read costs ~50 ns more than a
    plain attribute: about 1% of a recorded node)."""

    def __init__(self) -> None:  # (runs once in each thread that reads it)
        self.enabled = True


STATE = _GradState()

# Called before grad mode is switched off (empty unless a forward-AD dual level is open,
# which refuses it: agrad's forward AD runs on the recorded graph).
OFF_GUARDS: list[Callable[[], None]] = []


def _switching_off() -> None:
    for guard in OFF_GUARDS:
        guard()


def set_mode(mode: bool) -> bool:
    """Set grad mode (switching it off runs the guards first) and return the mode it was in:
    what the contexts do on entry, without an object (for paths run on every call)."""
    previous = STATE.enabled
    if not mode and OFF_GUARDS:
        _switching_off()
    STATE.enabled = mode
    return previous


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad record a graph."""
    return STATE.enabled


class set_grad_enabled:  # noqa: N801 - PyTorch's name
    """Context manager, decorator or plain call that sets grad mode.

    >>> with set_grad_enabled(False):
    ...     agrad.tensor(1.0, requires_grad=True) * 2  # recorded nothing: no grad_fn
    tensor(2.)
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = set_mode(self.mode)

    def __enter__(self) -> set_grad_enabled:
        return self

    def __exit__(self, *exc: object) -> None:
        STATE.enabled = self.prev

    def __call__(self, fn: F) -> F:
        # Used as a decorator: the constructor already flipped the mode; undo it.
        STATE.enabled = self.prev
        return _decorated(fn, self.mode)


def _decorated(fn: F, mode: bool) -> F:
    """``fn`` run with grad mode set to ``mode`` (the decorator form of the contexts)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with set_grad_enabled(mode):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _GradModeContext:
    """Base for no_grad / enable_grad: context manager and decorator (with or without
    parentheses: ``@no_grad()`` and ``@no_grad`` both work, as in PyTorch)."""

    mode = True

    def __new__(cls, fn: Any = None) -> Any:
        context = super().__new__(cls)
        return context if fn is None else context(fn)

    def __enter__(self) -> None:
        self.prev = set_mode(self.mode)

    def __exit__(self, *exc: object) -> None:
        STATE.enabled = self.prev

    def __call__(self, fn: F) -> F:
        return _decorated(fn, self.mode)


class no_grad(_GradModeContext):  # noqa: N801 - PyTorch's name
    """Disable graph recording: `with agrad.no_grad(): ...` or `@agrad.no_grad()`."""

    mode = False


class enable_grad(_GradModeContext):  # noqa: N801 - PyTorch's name
    """Re-enable graph recording inside a no_grad block."""

    mode = True
