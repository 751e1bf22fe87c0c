"""agrad's exceptions: one small hierarchy, so the CLI has one error boundary.

Each message says what was wrong, where (line:column or the variable), and what
to do instead. Errors that PyTorch raises as RuntimeError or ValueError also
derive from those, so ``except RuntimeError`` code written for PyTorch works.
"""

from __future__ import annotations


class AgradError(Exception):
    """Base class: anything agrad reports to a user as `error: ...` (exit 2)."""


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


class AgradValueError(AgradError, ValueError):
    """A bad value: wrong type or arity, unreadable file, bad option value."""


class AgradLimitError(AgradError):
    """A resource limit was hit: an allocation too large or nesting too deep."""


class AgradAutogradError(AgradError, RuntimeError):
    """Misuse of autograd, worded as PyTorch words it (second backward, in-place on a leaf...)."""
