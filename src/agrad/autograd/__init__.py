"""agrad.autograd: grad, backward, functional (jacobian/hessian/vjp/jvp), gradcheck."""

from __future__ import annotations

from ..engine.autograd import backward, grad
from ..engine.grad_mode import enable_grad, no_grad, set_grad_enabled
from . import functional
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "GradcheckError", "backward", "enable_grad", "functional", "grad", "gradcheck",
    "gradgradcheck", "no_grad", "set_grad_enabled",
]  # fmt: skip
