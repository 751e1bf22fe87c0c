"""x³ as a custom ``autograd.Function`` of either library, for the tests that check
custom backwards: ``cube(T, scale)`` is PyTorch's (``T = torch``) or agrad's Function
whose backward is ``scale(x)`` times the right one (a number, or a function of x for a
slip that depends on the input, its dtype say)."""

from __future__ import annotations

from typing import Any


def cube(T: Any, scale: Any = 1.0) -> Any:
    factor = scale if callable(scale) else (lambda x: scale)

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2 * factor(x)

    return Cube
