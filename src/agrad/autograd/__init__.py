"""agrad.autograd: grad, backward, Function, functional (jacobian/hessian/vjp/jvp), gradcheck."""

from __future__ import annotations

from ..engine.autograd import backward, grad
from ..engine.grad_mode import enable_grad, no_grad, set_grad_enabled
from . import function, functional
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "backward", "enable_grad", "function",
    "functional", "grad", "gradcheck", "gradgradcheck", "no_grad", "once_differentiable",
    "set_grad_enabled",
]  # fmt: skip
