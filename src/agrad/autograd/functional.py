"""torch.autograd.functional's API: jacobian, hessian, vjp, jvp, vhp, hvp."""

from ..engine.functional import hessian, jacobian, jvp, vjp
from ..engine.hessian_products import hvp, vhp

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
