"""agrad.check: numeric derivatives, verdicts and gradient reports (prints nothing).

>>> import numpy as np
>>> from agrad.check import check_numpy
>>> report = check_numpy(lambda x: np.sum(x**3), lambda x: 3 * x**2, {"x": np.array([1., 2.])})
>>> report.ok
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .options import CheckOptions
    from .report import CheckReport


def check_numpy(
    func: Callable[..., Any],
    grad: Callable[..., Any],
    values: Mapping[str, Any],
    wrt: Sequence[str] | None = None,
    **options: Any,
) -> CheckReport:
    """Check a hand-written gradient of a NumPy function (``func(**values)``; ``grad``
    returns one array per ``wrt`` name, or the Jacobian block for a non-scalar output).
    ``options`` are `CheckOptions` fields (method, eps, atol, rtol, strict, ...)."""
    from .checker import check_target
    from .numpy_target import NumpyTarget
    from .options import CheckOptions

    target = NumpyTarget(func, grad, values, list(wrt or values))
    return check_target(target, CheckOptions(**options))


__all__ = ["CheckOptions", "CheckReport", "check_numpy"]


def __getattr__(name: str) -> object:
    # The report's renderers import agrad.check.serial, which must not load the checker.
    if name == "CheckOptions":
        from .options import CheckOptions

        return CheckOptions
    if name == "CheckReport":
        from .report import CheckReport

        return CheckReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
