"""Python functions written with agrad as check targets (gradcheck, `agrad check --python`).

The numeric side calls the function itself at every point, with its floating inputs in
float64 — never a replay of the recorded graph: a gradient lost through ``.item()``,
``.numpy()`` or ``.detach()`` would be lost by the replay too, and the check must see the
function the user wrote. The claim is autograd's Jacobian, one batched backward pass per
output, in the inputs' dtype and, for the precision triage, with float64 inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..engine.autograd import grad as autograd_grad
from ..engine.functional import batched_jacobian
from ..engine.grad_mode import set_grad_enabled
from ..engine.tensor import Tensor, wrap
from .targets import Variable, pointwise


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class AgradCallableTarget:
    """``func(*inputs)`` at ``inputs``: each input that is a floating Tensor requiring grad
    is a variable (named by ``names``, default "input 0", "input 1", ...)."""

    def __init__(
        self,
        func: Callable[..., Any],
        inputs: Sequence[Any],
        names: Sequence[str] | None = None,
        positions: Sequence[int] | None = None,
    ) -> None:
        self.func = func
        self.inputs = tuple(inputs)
        if positions is None:
            positions = [
                i for i, x in enumerate(self.inputs) if isinstance(x, Tensor) and x.requires_grad
            ]
        self.positions = list(positions)
        self.names = list(names) if names is not None else [f"input {i}" for i in positions]
        outputs = self._call(self.inputs, record=True)
        self.outputs = outputs
        self.dtype = _common_dtype([self.inputs[i] for i in self.positions])
        self.shapes = [tuple(o.shape) for o in outputs]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self._claims: dict[bool, dict[str, np.ndarray]] = {}

    def _call(self, args: tuple, record: bool) -> list[Tensor]:
        with set_grad_enabled(record):
            result = _as_tuple(self.func(*args))
        outs = []
        for o in result:
            if not isinstance(o, Tensor):
                raise TypeError(
                    f"the function must return a Tensor or a tuple of Tensors, got "
                    f"{type(o).__name__}"
                )
            if o.dtype.kind in "fc":  # integer outputs have no derivative to check
                outs.append(o)
        return outs

    def output_shape(self, name: str) -> tuple[int, ...]:
        return self.shapes[0] if len(self.shapes) == 1 else (sum(self.sizes),)

    def position(self, name: str) -> int:
        return self.positions[self.names.index(name)]

    def function(self, name: str) -> Variable:
        # Called as PyTorch's gradcheck calls it: grad mode on, the inputs still requiring
        # grad (a function that differentiates inside, as gradgradcheck's does, needs both).
        k = self.position(name)
        wide = tuple(_widened(x, leaf=True) for x in self.inputs)
        base = wide[k]._array.astype(np.float64)

        def value(point: np.ndarray) -> np.ndarray:
            args = list(wide)
            args[k] = wrap(np.array(point, dtype=np.float64), True)
            outs = self._call(tuple(args), record=True)
            return np.concatenate([np.asarray(o._array, np.float64).reshape(-1) for o in outs])

        return Variable(base, pointwise(value))

    def claim(self, name: str, wide: bool = False) -> np.ndarray:
        if wide not in self._claims:
            self._claims[wide] = self._jacobians(wide)
        return self._claims[wide][name]

    def _jacobians(self, wide: bool) -> dict[str, np.ndarray]:
        if wide:
            args = tuple(_widened(x, leaf=True) for x in self.inputs)
            outputs = self._call(args, record=True)
        else:
            args, outputs = self.inputs, self.outputs
        leaves = tuple(args[i] for i in self.positions)
        rows: dict[str, list[np.ndarray]] = {n: [] for n in self.names}
        for out, size in zip(outputs, self.sizes, strict=True):
            blocks = batched_jacobian(out, leaves)
            for name, leaf, block in zip(self.names, leaves, blocks, strict=True):
                n = leaf._array.size
                rows[name].append(
                    np.zeros((size, n)) if block is None
                    else block._array.astype(np.float64).reshape(size, n)
                )  # fmt: skip
        m = sum(self.sizes)
        return {
            name: np.concatenate(r, axis=0) if r else np.zeros((m, 0)) for name, r in rows.items()
        }

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        leaf = self.inputs[self.position(name)]
        parts, start = [], 0
        wanted = []
        for out, size in zip(self.outputs, self.sizes, strict=True):
            if out.requires_grad:
                piece = np.asarray(u[start : start + size], dtype=out.dtype).reshape(out.shape)
                parts.append(wrap(piece))
                wanted.append(out)
            start += size
        if not wanted:
            return np.zeros(leaf._array.size)
        g = autograd_grad(wanted, [leaf], grad_outputs=parts, retain_graph=True,
                          allow_unused=True)[0]  # fmt: skip
        return np.zeros(leaf._array.size) if g is None else g._array.astype(np.float64).reshape(-1)


def _widened(x: Any, leaf: bool = False) -> Any:
    """A floating tensor in float64 (a fresh leaf with its requires_grad when ``leaf``)."""
    if isinstance(x, Tensor) and x.dtype.kind == "f":
        return wrap(x._array.astype(np.float64), leaf and x.requires_grad)
    return x


def _common_dtype(tensors: list[Tensor]) -> str:
    names = {np.dtype(t.dtype).name for t in tensors}
    return "float64" if not names or "float64" in names else sorted(names)[0]
