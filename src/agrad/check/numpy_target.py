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

from collections.abc import Callable, Collection, Mapping, Sequence
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
        grad_label: str = "the gradient function",
    ) -> None:
        self.func, self.grad, self.label, self.grad_label = func, grad, label, grad_label
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
        result = self.func(**_copies(values))
        out = np.asarray(result)
        if out.dtype.kind not in "fiub":
            raise AgradValueError(
                f"{self.label} must return numbers (an array or a float), got a "
                f"{type(result).__name__}"
            )
        return out

    def output_shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.out.shape)

    def function(self, name: str) -> Variable:
        wide = {k: _wide(v) for k, v in self.values.items()}

        def value(point: np.ndarray) -> np.ndarray:
            return self._value({**wide, name: point}).astype(np.float64).reshape(-1)

        base = wide[name].astype(np.float64)
        return Variable(base, pointwise(value, self.out.size, base))

    def claim(self, name: str, wide: bool = False) -> np.ndarray:
        if wide not in self._claims:
            values = {k: _wide(v) for k, v in self.values.items()} if wide else self.values
            self._claims[wide] = self._gradients(values)
        return self._claims[wide][name]

    def _gradients(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        if self.grad is None:
            raise AgradValueError(f"{self.label}: a gradient function is needed (--grad)")
        shapes = {n: self.values[n].shape for n in self.names}
        return hand_claims(self.grad(**_copies(values)), self.names, shapes, self.out.shape,
                           self.grad_label, arguments=self.values)  # fmt: skip

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        return self.claim(name).T @ np.asarray(u, dtype=np.float64).reshape(-1)


def _copies(values: Mapping[str, Any]) -> dict[str, Any]:
    """Arrays of their own for one call: a function that writes into its arguments
    (``x -= x.mean()``, ``y /= y.sum()``) must neither change the point every later call
    reads nor hand its gradient function other values than its own (a wrong gradient of
    such a function passed: QA round 13)."""
    return {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v
            for k, v in values.items()}  # fmt: skip


def hand_claims(
    result: Any, names: list[str], shapes: Mapping[str, tuple], out_shape: tuple,
    label: str = "the gradient function", arguments: Collection[str] = (),
) -> dict[str, np.ndarray]:  # fmt: skip
    """A hand-written gradient's result as one (m, n) claim per variable: an array for one
    variable, a tuple/list (in ``names`` order) or a dict by name for several; each the
    gradient (a scalar output) or the Jacobian block output.shape + variable.shape. A
    dict's entries for other ``arguments`` of the function (a backward's gradients of
    everything, data included) are not checked; an entry for no argument is an error."""
    if isinstance(result, Mapping):
        missing = [n for n in names if n not in result]
        if missing:
            raise AgradValueError(f"{label} returned no entry for {missing[0]!r}")
        extra = [k for k in result if k not in names and k not in arguments]
        if extra:
            raise AgradValueError(
                f"{label} returned an entry for {extra[0]!r}, which is no argument of the "
                f"function (the --wrt variables are {', '.join(names)}); return one entry "
                "per --wrt variable (entries for its other arguments are not checked)"
            )
        parts = [result[n] for n in names]
    elif isinstance(result, (tuple, list)):
        parts = list(result)
    else:
        parts = [result]
    if len(parts) != len(names):
        raise AgradValueError(
            f"{label} returned {len(parts)} array(s); expected one per --wrt variable "
            f"({', '.join(names)}), in that order"
        )
    m = int(np.prod(out_shape)) if out_shape else 1
    claims = {}
    for name, part in zip(names, parts, strict=True):
        if part is None:
            raise AgradValueError(f"{label} returned None for {name!r}; expected an array")
        if np.iscomplexobj(part):  # (float64 would drop the imaginary part without a word)
            raise AgradValueError(
                f"{label} returned a complex gradient for {name!r}; gradients of a real "
                "function are real: return the real array"
            )
        try:
            array = np.asarray(part, dtype=np.float64)
        except (TypeError, ValueError):
            raise AgradValueError(
                f"{label} returned a {type(part).__name__} for {name!r}; expected an array"
            ) from None
        shape = tuple(shapes[name])
        expected = tuple(out_shape) + shape
        if array.shape != expected and not (m == 1 and array.shape == shape):
            raise AgradValueError(
                f"{label}: the gradient for {name!r} has shape {tuple(array.shape)}; expected "
                f"{expected} (output shape {tuple(out_shape)} + {name}'s shape {shape})"
            )
        claims[name] = array.reshape(m, int(np.prod(shape)) if shape else 1)
    return claims


def _wide(value: np.ndarray) -> np.ndarray:
    return value.astype(np.float64) if value.dtype.kind == "f" else value
