"""agrad's exceptions: one small hierarchy, so the CLI has one error boundary.

Each message says what was wrong, where (line:column or the variable), and what
to do instead. Errors that PyTorch raises as RuntimeError or ValueError also
derive from those, so ``except RuntimeError`` code written for PyTorch works.

Context added on the way out (which option, which suite case) goes through
`AgradError.with_prefix`, which keeps the error's class, its caret snippet and
its position; rebuilding an error from its text would lose them.
"""

from __future__ import annotations

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


class AgradShapeError(AgradError, RuntimeError):
    """Operand shapes do not fit an operation (broadcasting, matmul, reshape...)."""


class AgradIndexError(AgradShapeError, IndexError):
    """A dimension or an index out of range (PyTorch raises IndexError for those)."""


class AgradValueError(AgradError, ValueError):
    """A bad value: wrong type or arity, unreadable file, bad option value."""


class AgradLimitError(AgradError):
    """A resource limit was hit: an allocation too large or nesting too deep."""


class AgradAutogradError(AgradError, RuntimeError):
    """Misuse of autograd, worded as PyTorch words it (second backward, in-place on a leaf...)."""


class AgradInterrupted(AgradError):
    """Ctrl-C, once what was done so far has been reported: the message says what that is."""

    exit_code = 130
