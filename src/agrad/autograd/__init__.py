"""agrad.autograd: grad, backward, Function, functional (jacobian/hessian/vjp/jvp/vhp/hvp),
gradcheck, graph (Node, saved-tensor hooks), anomaly mode, inference mode, the profiler,
Variable."""

from __future__ import annotations

from ..engine.autograd import backward, grad
from ..engine.grad_mode import enable_grad, no_grad, set_grad_enabled
from . import forward_ad, function, functional, graph, profiler
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .inference import Variable, inference_mode, is_inference_mode_enabled

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "Variable", "backward", "detect_anomaly",
    "enable_grad", "forward_ad", "function", "functional", "grad", "gradcheck",
    "gradgradcheck", "graph",
    "inference_mode", "is_anomaly_enabled", "is_inference_mode_enabled", "no_grad",
    "once_differentiable", "profiler", "set_detect_anomaly",
    "set_grad_enabled",
]  # fmt: skip
