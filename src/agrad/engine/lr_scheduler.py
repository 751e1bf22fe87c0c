"""torch.optim.lr_scheduler: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR.

Each changes its optimizer's ``param_groups[i]["lr"]`` at every ``step()`` by PyTorch's
recurrences (so the learning rates are PyTorch's to the last bit, and a rate edited by hand
between steps is carried on, as in PyTorch).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


class LRScheduler:
    """Base: remembers each group's initial rate, steps the epoch counter, sets the rates."""

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The rates the last step() set, one per parameter group."""
        return list(self._last_lr)

    def step(self) -> None:
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class StepLR(LRScheduler):
    """lr × gamma every ``step_size`` epochs."""

    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class MultiStepLR(LRScheduler):
    """lr × gamma at each epoch listed in ``milestones``."""

    def __init__(self, optimizer: Any, milestones: Any, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        hits = self.milestones.count(self.last_epoch)
        return [lr * self.gamma**hits for lr in self._current()]


class ExponentialLR(LRScheduler):
    """lr × gamma every epoch."""

    def __init__(self, optimizer: Any, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class CosineAnnealingLR(LRScheduler):
    """lr from its base down to ``eta_min`` along half a cosine over ``T_max`` epochs."""

    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return self._current()
        if self._step_count == 1 and t > 0:  # resumed: the closed form
            return [low + (b - low) * (1 + math.cos(t * math.pi / n)) / 2 for b in self.base_lrs]
        if (t - 1 - n) % (2 * n) == 0:  # at the bottom: the next half period starts
            return [lr + (b - low) * (1 - math.cos(math.pi / n)) / 2
                    for lr, b in zip(self._current(), self.base_lrs, strict=True)]  # fmt: skip
        ratio = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
        return [ratio * (lr - low) + low for lr in self._current()]


class LambdaLR(LRScheduler):
    """lr = base lr × ``lr_lambda(epoch)`` (one function, or one per group)."""

    def __init__(self, optimizer: Any, lr_lambda: Callable[[int], float] | list,
                 last_epoch: int = -1) -> None:  # fmt: skip
        groups = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, list) else [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [b * f(self.last_epoch) for b, f in zip(self.base_lrs, self.lr_lambdas, strict=True)]
