"""Anomaly detection for the Python API (torch.autograd.detect_anomaly & co.): a backward
rule that returns nan or inf raises RuntimeError naming its node ("Function
'SqrtBackward0' returned nan values in its 0th output."). The language has its own, which
also points at the program's line (`agrad.lang.anomaly`)."""

from __future__ import annotations

import warnings
from typing import Any

from ..engine.graph_hooks import FEATURES, refresh


def is_anomaly_enabled() -> bool:
    return FEATURES.anomaly


def _set(mode: bool) -> None:
    FEATURES.anomaly = bool(mode)
    refresh()


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off: a plain call, or a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = FEATURES.anomaly
        _set(mode and check_nan)

    def __enter__(self) -> set_detect_anomaly:
        return self

    def __exit__(self, *exc: object) -> None:
        _set(self.prev)


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Anomaly detection inside the block (or the decorated function)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = FEATURES.anomaly
        _set(self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _set(self.prev)

    def __call__(self, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper
