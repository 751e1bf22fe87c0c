"""inference_mode (torch.inference_mode): no graph is recorded inside, and tensors made
there are inference tensors (``t.is_inference()``), which autograd refuses to save for a
backward later, as PyTorch does."""

from __future__ import annotations

import functools
from typing import Any

from ..engine.grad_mode import set_grad_enabled
from ..engine.graph_hooks import FEATURES, refresh
from ..engine.tensor import Tensor, wrap


class inference_mode:  # noqa: N801 - PyTorch's name
    """Context manager and decorator (``@inference_mode()`` or bare ``@inference_mode``)."""

    def __new__(cls, mode: Any = True) -> Any:
        self = super().__new__(cls)
        if callable(mode):  # bare decorator: @inference_mode
            self.mode = True
            return self(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        if not callable(mode):
            self.mode = bool(mode)

    def __enter__(self) -> None:
        self.grad = set_grad_enabled(False) if self.mode else None
        if self.mode:
            FEATURES.inference += 1
            refresh()

    def __exit__(self, *exc: object) -> None:
        if self.grad is not None:
            FEATURES.inference -= 1
            refresh()
            self.grad.__exit__()

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(self.mode):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    return FEATURES.inference > 0


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # noqa: N802
    """torch.autograd.Variable, the deprecated wrapper: a tensor sharing ``data``'s values."""
    t = data.detach() if isinstance(data, Tensor) else wrap(Tensor(data)._array)
    return t.requires_grad_(requires_grad) if requires_grad else t
