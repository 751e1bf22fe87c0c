"""torch.autograd.functional's API: jacobian, hessian, vjp, jvp."""

from ..engine.functional import hessian, jacobian, jvp, vjp

__all__ = ["hessian", "jacobian", "jvp", "vjp"]
