"""A NumPy function with a hand-written gradient as a check target (what
``scipy.optimize.check_grad`` and course assignments' numerical-gradient checks do).

``func(**values)`` returns an array; ``grad(**values)`` returns, per variable in ``wrt``
order, its gradient (a scalar output) or its Jacobian block of shape
output.shape + variable.shape — one array for one variable, a tuple/list (or a dict by
name) for several. Both are called with NumPy arrays; the numeric side calls ``func``
in float64, the claim is ``grad`` at the values as given (float32 stays float32) and, for
the precision triage, in float64.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import AgradValueError
from .targets import Variable, pointwise


class NumpyTarget:
    def __init__(
        self,
        func: Callable[..., Any],
        grad: Callable[..., Any] | None,
        values: Mapping[str, Any],
        wrt: Sequence[str],
        label: str = "the function",
    ) -> None:
        self.func, self.grad, self.label = func, grad, label
        self.values = {k: np.asarray(v) for k, v in values.items()}
        self.names = list(wrt)
        for name in self.names:
            if name not in self.values:
                raise AgradValueError(f"--wrt {name}: {label} has no argument {name!r}")
        kinds = {np.dtype(self.values[n].dtype).name for n in self.names}
        self.dtype = "float32" if kinds == {"float32"} else "float64"
        self.out = self._value(self.values)
        self._claims: dict[bool, dict[str, np.ndarray]] = {}

    def _value(self, values: Mapping[str, Any]) -> np.ndarray:
        out = np.asarray(self.func(**values))
        if out.dtype.kind not in "fiub":
            raise AgradValueError(
                f"{self.label} must return numbers (an array or a float), got {out.dtype}"
            )
        return out

    def output_shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.out.shape)

    def function(self, name: str) -> Variable:
        wide = {k: _wide(v) for k, v in self.values.items()}

        def value(point: np.ndarray) -> np.ndarray:
            return self._value({**wide, name: point}).astype(np.float64).reshape(-1)

        return Variable(wide[name].astype(np.float64), pointwise(value))

    def claim(self, name: str, wide: bool = False) -> np.ndarray:
        if wide not in self._claims:
            values = {k: _wide(v) for k, v in self.values.items()} if wide else self.values
            self._claims[wide] = self._gradients(values)
        return self._claims[wide][name]

    def _gradients(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        if self.grad is None:
            raise AgradValueError(f"{self.label}: a gradient function is needed (--grad)")
        result = self.grad(**values)
        if isinstance(result, Mapping):
            missing = [n for n in self.names if n not in result]
            if missing:
                raise AgradValueError(f"the gradient function returned no entry for {missing[0]!r}")
            parts = [result[n] for n in self.names]
        elif isinstance(result, (tuple, list)):
            parts = list(result)
        else:
            parts = [result]
        if len(parts) != len(self.names):
            raise AgradValueError(
                f"the gradient function returned {len(parts)} array(s); expected one per "
                f"--wrt variable ({', '.join(self.names)}), in that order"
            )
        m = self.out.size
        claims = {}
        for name, part in zip(self.names, parts, strict=True):
            array = np.asarray(part, dtype=np.float64)
            shape = self.values[name].shape
            expected = tuple(self.out.shape) + tuple(shape)
            if array.shape != expected and not (m == 1 and array.shape == tuple(shape)):
                raise AgradValueError(
                    f"the gradient for {name!r} has shape {array.shape}; expected {expected} "
                    "(output shape + variable shape)"
                )
            claims[name] = array.reshape(m, int(np.prod(shape)) if shape else 1)
        return claims

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        return self.claim(name).T @ np.asarray(u, dtype=np.float64).reshape(-1)


def _wide(value: np.ndarray) -> np.ndarray:
    return value.astype(np.float64) if value.dtype.kind == "f" else value
