"""More of torch.optim: RMSprop and Adagrad, with PyTorch's update formulas."""

from __future__ import annotations

from typing import Any

import numpy as np

from .optim import Optimizer
from .optim_state import advance, buffer, overwrite, step_tensor
from .tensor import bump_version


class RMSprop(Optimizer):
    """RMSprop, as torch.optim.RMSprop: v = α·v + (1-α)·g²; p -= lr·g / (sqrt(v) + eps)
    (centered: v minus the squared mean gradient; momentum: a buffer of those steps)."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        if lr < 0 or eps < 0 or alpha < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError("invalid RMSprop hyper-parameters")
        options = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                       momentum=momentum, centered=centered, maximize=maximize)  # fmt: skip
        super().__init__(params, options)

    def _update(self) -> None:
        for group in self.param_groups:
            alpha, eps, mom = group["alpha"], group["eps"], group["momentum"]
            for p, g, state in self._params_with_grad(group):
                if not state:
                    state["step"] = step_tensor()
                    state["square_avg"] = buffer(np.zeros_like(p._array))
                    if mom:
                        state["momentum_buffer"] = buffer(np.zeros_like(p._array))
                    if group["centered"]:
                        state["grad_avg"] = buffer(np.zeros_like(p._array))
                advance(state)
                square = state["square_avg"]
                v = overwrite(square, alpha * square._array + (1 - alpha) * g * g)
                if group["centered"]:
                    mean = state["grad_avg"]
                    mean = overwrite(mean, alpha * mean._array + (1 - alpha) * g)
                    avg = np.sqrt(v - mean * mean) + eps
                else:
                    avg = np.sqrt(v) + eps
                if mom:
                    buf = state["momentum_buffer"]
                    buf = overwrite(buf, mom * buf._array + g / avg)
                    p._array -= group["lr"] * buf
                else:
                    p._array -= group["lr"] * (g / avg)
                bump_version(p)


class Adagrad(Optimizer):
    """Adagrad, as torch.optim.Adagrad: s += g²; p -= lr / (1 + (t-1)·lr_decay) · g /
    (sqrt(s) + eps)."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        if lr < 0 or lr_decay < 0 or weight_decay < 0 or eps < 0:
            raise ValueError("invalid Adagrad hyper-parameters")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize))  # fmt: skip

        for group in self.param_groups:  # PyTorch's Adagrad makes its state at once
            for p in group["params"]:
                self._initial_state(p, group)

    def _initial_state(self, p: Any, group: dict[str, Any]) -> None:
        state = self.state[p]
        state["step"] = step_tensor()
        state["sum"] = buffer(np.full_like(p._array, group["initial_accumulator_value"]))

    def _update(self) -> None:
        for group in self.param_groups:
            for p, g, state in self._params_with_grad(group):
                if not state:  # (a group added later)
                    self._initial_state(p, group)
                t = advance(state)
                clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
                s = overwrite(state["sum"], state["sum"]._array + g * g)
                p._array -= clr * (g / (np.sqrt(s) + group["eps"]))
                bump_version(p)
