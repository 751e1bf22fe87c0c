"""Optimizers with PyTorch's update formulas: SGD (momentum, dampening, weight decay,
Nesterov, maximize) and Adam (with AMSGrad and weight decay).

Their state is PyTorch's: ``opt.state[p]`` (a defaultdict keyed by the parameter) holds
tensors updated in place (``momentum_buffer``, ``exp_avg``, a 0-d ``step`` tensor...), and
``state_dict()`` / ``load_state_dict()`` (`optim_state`) save and restore it with the
parameters numbered in group order, so training resumes with the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from . import optim_state
from .grad_mode import enable_grad, no_grad
from .optim_state import advance, buffer, overwrite, step_tensor
from .tensor import Tensor, bump_version


def _evaluate(closure: Any) -> Any:
    """Run a step's closure (which recomputes the loss and calls backward) with grad on."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


class Optimizer:
    """Base: parameter groups, per-parameter state, and zero_grad()."""

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got agrad.Tensor"
            )
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the defaults fill the rest)."""
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append({**self.defaults, **param_group, "params": params})

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's ``{'state': {index: {...}}, 'param_groups': [{..., 'params': [index,
        ...]}]}``: parameters numbered in group order; the state's tensors are the live
        ones (as PyTorch's: deep-copy it to keep a snapshot while training goes on)."""
        return optim_state.state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyper-parameters and state saved by `state_dict` into an optimizer over
        the same number of groups and parameters (tensors cast to each parameter's dtype),
        with PyTorch's errors when they differ."""
        optim_state.load_state_dict(self, state_dict)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad._array = np.zeros_like(p._grad._array)

    def step(self, closure: Any = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` (recomputing the
        loss and calling backward) runs first, with grad enabled, as in PyTorch."""
        loss = _evaluate(closure)
        with no_grad():
            self._update()
        return loss

    def _update(self) -> None:
        raise NotImplementedError

    def _params_with_grad(
        self, group: dict[str, Any], coupled_decay: bool = True, stateful: bool = True
    ):
        """(param, direction, state) for each parameter with a gradient: the gradient
        negated under ``maximize`` and, with ``coupled_decay``, plus weight_decay·p (the L2
        term every optimizer but AdamW adds to it, after the sign, as PyTorch's do). An
        optimizer without state for these options (SGD without momentum) gets None, and
        ``opt.state`` stays empty, as PyTorch's."""
        maximize, decay = group.get("maximize", False), group.get("weight_decay", 0)
        for p in group["params"]:
            if p._grad is not None:
                g = -p._grad._array if maximize else p._grad._array
                if decay and coupled_decay:
                    g = g + decay * p._array
                yield p, g, self.state[p] if stateful else None


class SGD(Optimizer):
    """Stochastic gradient descent, as torch.optim.SGD:

    g = grad + weight_decay * p;  buf = momentum * buf + (1 - dampening) * g  (buf = g at
    the first step);  g = g + momentum * buf if nesterov else buf;  p -= lr * g
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError("lr, momentum and weight_decay must be >= 0")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
            ),
        )

    def _update(self) -> None:
        for group in self.param_groups:
            lr, mom, damp = group["lr"], group["momentum"], group["dampening"]
            for p, g, state in self._params_with_grad(group, stateful=bool(mom)):
                if mom:
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = buffer(g)
                    else:
                        overwrite(buf, mom * buf._array + (1 - damp) * g)
                    g = g + mom * buf._array if group["nesterov"] else buf._array
                p._array -= lr * g
                bump_version(p)


class Adam(Optimizer):
    """Adam, as torch.optim.Adam (bias-corrected moments; optional AMSGrad)."""

    decoupled = False  # AdamW: weight decay shrinks p itself, not added to the gradient

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        if lr < 0 or eps < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError("invalid Adam hyper-parameters")
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
            ),
        )

    def _update(self) -> None:
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p, g, state in self._params_with_grad(group, coupled_decay=not self.decoupled):
                if not state:
                    state["step"] = step_tensor()
                    state["exp_avg"] = buffer(np.zeros_like(p._array))
                    state["exp_avg_sq"] = buffer(np.zeros_like(p._array))
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = buffer(np.zeros_like(p._array))
                t = advance(state)
                m = state["exp_avg"]._array
                m = overwrite(state["exp_avg"], m + (1 - beta1) * (g - m))
                v = state["exp_avg_sq"]._array
                v = overwrite(state["exp_avg_sq"], beta2 * v + (1 - beta2) * g * g)
                if group["amsgrad"]:
                    most = state["max_exp_avg_sq"]
                    v = overwrite(most, np.maximum(most._array, v))
                bias1, bias2 = 1 - beta1**t, 1 - beta2**t
                denom = np.sqrt(v) / np.sqrt(bias2) + group["eps"]
                if self.decoupled and group["weight_decay"]:
                    p._array *= 1 - group["lr"] * group["weight_decay"]
                p._array -= (group["lr"] / bias1) * (m / denom)
                bump_version(p)


class AdamW(Adam):
    """AdamW, as torch.optim.AdamW: Adam with decoupled weight decay, p *= 1 - lr·wd."""

    decoupled = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Tensor"]
