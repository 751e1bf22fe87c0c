"""More of torch.optim: RMSprop and Adagrad, with PyTorch's update formulas."""

from __future__ import annotations

from typing import Any

import numpy as np

from .optim import Optimizer
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
                    state.update(step=0, square_avg=np.zeros_like(p._array))
                    if mom:
                        state["momentum_buffer"] = np.zeros_like(p._array)
                    if group["centered"]:
                        state["grad_avg"] = np.zeros_like(p._array)
                state["step"] += 1
                v = state["square_avg"] = alpha * state["square_avg"] + (1 - alpha) * g * g
                if group["centered"]:
                    mean = state["grad_avg"] = alpha * state["grad_avg"] + (1 - alpha) * g
                    avg = np.sqrt(v - mean * mean) + eps
                else:
                    avg = np.sqrt(v) + eps
                if mom:
                    buf = state["momentum_buffer"] = mom * state["momentum_buffer"] + g / avg
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

    def _update(self) -> None:
        for group in self.param_groups:
            for p, g, state in self._params_with_grad(group):
                if not state:
                    start = group["initial_accumulator_value"]
                    state.update(step=0, sum=np.full_like(p._array, start))
                state["step"] += 1
                clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
                s = state["sum"] = state["sum"] + g * g
                p._array -= clr * (g / (np.sqrt(s) + group["eps"]))
                bump_version(p)
