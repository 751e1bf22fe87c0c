"""agrad's exceptions: one small hierarchy, so the CLI has one error boundary.

Each message says what was wrong, where (line:column or the variable), and what
to do instead. Errors that PyTorch raises as RuntimeError or ValueError also
derive from those, so ``except RuntimeError`` code written for PyTorch works.

Context added on the way out (which option, which suite case) goes through
`AgradError.with_prefix`, which keeps the error's class, its caret snippet and
its position; rebuilding an error from its text would lose them.
"""

from __future__ import annotations

import threading
from typing import TypeVar

_E = TypeVar("_E", bound="AgradError")


class AgradError(Exception):
    """Base class: anything agrad reports to a user as `error: ...` (exit 2)."""

    exit_code = 2  # what the CLI exits with; see agrad.cli.ExitCode
    snippet = ""  # the offending source line and a caret line under the column, if any

    def with_prefix(self: _E, prefix: str) -> _E:
        """The same error with ``prefix: `` before its message, snippet and position kept.

        >>> from agrad.lang.parser import parse
        >>> try:
        ...     parse("[1, 2")
        ... except AgradError as exc:
        ...     err = exc.with_prefix("--set x")
        >>> str(err).startswith("--set x: line 1, column 6:"), err.snippet.splitlines()[0]
        (True, '[1, 2')
        """
        if self.args and self.args[0] is getattr(self, "torch_message", None):
            return self  # PyTorch's text stands alone, as PyTorch prints it
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new.args = (f"{prefix}: {self}",)
        return new


class AgradSyntaxError(AgradError):
    """The program text does not parse. Carries line, column and a caret snippet."""

    def __init__(self, message: str, line: int = 0, column: int = 0, snippet: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.snippet = snippet


class AgradNameError(AgradError, NameError):
    """An unknown variable, function or keyword argument."""


_WORDING = threading.local()


class agrad_wording:  # lower case: used as `with agrad_wording():`
    """Errors raised inside use agrad's own wording (what, where, what to do instead), not
    PyTorch's: the CLI and the language run in it; the Python API does not.
    (A class, not a generator: every run of a program enters it.)"""

    __slots__ = ("before",)

    def __enter__(self) -> None:
        self.before = getattr(_WORDING, "agrad", False)
        _WORDING.agrad = True

    def __exit__(self, *exc: object) -> None:
        _WORDING.agrad = self.before


class AgradShapeError(AgradError, RuntimeError):
    """Operand shapes do not fit an operation (broadcasting, matmul, reshape...).

    ``torch`` is PyTorch's text for the same error, where PyTorch has one: code written for
    PyTorch (and its tests) compares it, so the Python API shows it; inside `agrad_wording`
    (the CLI, the language) the error keeps agrad's text, which says what to do instead.
    Both stay readable as ``agrad_message`` and ``torch_message``.
    """

    def __init__(self, message: str, torch: str | None = None) -> None:
        self.agrad_message, self.torch_message = message, torch
        use_torch = torch is not None and not getattr(_WORDING, "agrad", False)
        super().__init__(torch if use_torch else message)


class AgradIndexError(AgradShapeError, IndexError):
    """A dimension or an index out of range: PyTorch raises IndexError for these."""


class AgradDtypeError(AgradError, RuntimeError):
    """A dtype PyTorch refuses with a RuntimeError: integers to a negative integer power, a
    float result written in place into an integer tensor. The message is PyTorch's (code
    written for PyTorch compares it) and stands alone: no op name is put before it."""

    def __init__(self, message: str) -> None:
        self.agrad_message = self.torch_message = message
        super().__init__(message)


class AgradTypeError(AgradError, TypeError):
    """An argument of the wrong kind (PyTorch's TypeError): a tensor that requires grad
    where an op takes a number, whose gradient would be lost."""


class AgradValueError(AgradError, ValueError):
    """A bad value: wrong type or arity, unreadable file, bad option value."""


class AgradValueRuntimeError(AgradValueError, RuntimeError):
    """A bad value that PyTorch refuses with a RuntimeError (code written for PyTorch
    catches that): a probability outside [0, 1], an integer division by zero. The message
    is PyTorch's and stands alone, as `AgradDtypeError`'s."""

    def __init__(self, message: str) -> None:
        self.agrad_message = self.torch_message = message
        super().__init__(message)


class AgradLimitError(AgradError):
    """A resource limit was hit: an allocation too large or nesting too deep."""


class AgradAutogradError(AgradError, RuntimeError):
    """Misuse of autograd, worded as PyTorch words it (second backward, in-place on a leaf...)."""


class AgradInterrupted(AgradError):
    """Ctrl-C, once what was done so far has been reported: the message says what that is."""

    exit_code = 130
