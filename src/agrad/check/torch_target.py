"""A PyTorch function as a check target: torch's autograd is the claim, agrad's numeric
side (the function called at every point, in float64) the judge — with agrad's verdicts,
diagnoses and reports. torch is imported only here, and only when the user's function
is a torch function: it is never a dependency of agrad.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import AgradValueError
from .targets import Variable, pointwise


class TorchTarget:
    def __init__(
        self, func: Callable[..., Any], arguments: Mapping[str, Any], wrt: Sequence[str],
        label: str,
    ) -> None:  # fmt: skip
        import torch

        self.torch, self.func, self.label = torch, func, label
        self.arguments = dict(arguments)
        self.names = list(wrt)
        kinds = {np.asarray(self.arguments[n]).dtype.name for n in self.names}
        self.dtype = "float32" if kinds == {"float32"} else "float64"
        with torch.enable_grad():  # (every call as gradcheck's: see `function`)
            out = self._call(self._tensors(wide=False, grad=self.names))
        self.out_shape = tuple(out.shape)
        self._claims: dict[bool, dict[str, np.ndarray]] = {}

    def _tensors(self, wide: bool, grad: Sequence[str], **override: Any) -> dict[str, Any]:
        torch = self.torch
        tensors = {}
        for name, value in {**self.arguments, **override}.items():
            array = np.asarray(value)
            if array.dtype.kind == "f":
                dtype = torch.float64 if wide or array.dtype == np.float64 else torch.float32
                tensors[name] = torch.tensor(array, dtype=dtype, requires_grad=name in grad)
            elif array.dtype.kind in "iub":
                tensors[name] = torch.tensor(array)
            else:
                tensors[name] = value
        return tensors

    def _call(self, kwargs: dict[str, Any]) -> Any:
        out = self.func(**kwargs)
        if not isinstance(out, self.torch.Tensor) or not out.dtype.is_floating_point:
            raise AgradValueError(
                f"{self.label} must return a floating torch.Tensor, got "
                f"{type(out).__name__}{'' if not hasattr(out, 'dtype') else ' ' + str(out.dtype)}"
            )
        return out

    def _backward(self, out: Any, leaves: list, cotangent: Any) -> tuple:
        """torch.autograd.grad, its failures the user's backward's (QA round 29: a custom
        backward's gradient of the wrong shape was an internal error of agrad's)."""
        try:
            return self.torch.autograd.grad(out, leaves, grad_outputs=cotangent,
                                            retain_graph=True, allow_unused=True)  # fmt: skip
        except (RuntimeError, TypeError, ValueError) as exc:
            raise AgradValueError(
                f"the backward of {self.label} raised {type(exc).__name__}: {exc}"
            ) from None

    def output_shape(self, name: str) -> tuple[int, ...]:
        return self.out_shape

    def function(self, name: str) -> Variable:
        base = np.asarray(self.arguments[name], dtype=np.float64)

        def value(point: np.ndarray) -> np.ndarray:
            # As torch.autograd.gradcheck calls it: grad mode on, the inputs requiring grad.
            # Code that branches on them (a fused inference path beside a custom Function
            # for training) is then judged on the branch whose gradient is claimed.
            with self.torch.enable_grad():
                out = self._call(self._tensors(wide=True, grad=self.names, **{name: point}))
            return out.detach().numpy().astype(np.float64).reshape(-1)

        return Variable(base, pointwise(value, int(np.prod(self.out_shape)), base))

    def claim(self, name: str, wide: bool = False) -> np.ndarray:
        if wide not in self._claims:
            self._claims[wide] = self._jacobians(wide)
        return self._claims[wide][name]

    def _jacobians(self, wide: bool) -> dict[str, np.ndarray]:
        tensors = self._tensors(wide=wide, grad=self.names)
        out = self._call(tensors)
        leaves = [tensors[n] for n in self.names]
        m = out.numel()
        rows = {n: np.zeros((m, tensors[n].numel())) for n in self.names}
        if not out.requires_grad:
            return rows
        flat = out.reshape(-1)
        for i in range(m):  # one backward per output element, as gradcheck's slow mode
            grads = self._backward(flat[i], leaves, None)
            for n, g in zip(self.names, grads, strict=True):
                if g is not None:
                    rows[n][i] = g.detach().numpy().astype(np.float64).reshape(-1)
        return rows

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        """uᵀJ by PyTorch's backward with the cotangent u (not from the claim: a backward
        that does not multiply by its cotangent shows only here, see `cotangents`)."""
        torch = self.torch
        tensors = self._tensors(wide=False, grad=self.names)
        out = self._call(tensors)
        leaf = tensors[name]
        if not out.requires_grad:
            return np.zeros(leaf.numel())
        cotangent = torch.as_tensor(np.asarray(u).reshape(out.shape), dtype=out.dtype)
        (g,) = self._backward(out, [leaf], cotangent)
        if g is None:
            return np.zeros(leaf.numel())
        return g.detach().numpy().astype(np.float64).reshape(-1)
