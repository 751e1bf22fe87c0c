"""agrad.autograd.function: custom Functions (PyTorch's torch.autograd.function)."""

from __future__ import annotations

from ..engine.function import Function, FunctionCtx, FunctionMeta, once_differentiable

__all__ = ["Function", "FunctionCtx", "FunctionMeta", "once_differentiable"]
