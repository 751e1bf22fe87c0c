"""``strict=True`` in torch.autograd.functional: refuse an output or input that autograd
would silently fill with zeros, with PyTorch's messages (its code catches RuntimeError)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .tensor import Tensor, wrap

_UNUSED = "The output of the user-provided function is independent of input {i}."
_NOT_ALLOWED = " This is not allowed in strict mode."
_NO_GRAD = {
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs must "
        "be computed in a differentiable manner from the input when running in strict mode."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function." + _NOT_ALLOWED
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input {i} is independent of the input." + _NOT_ALLOWED + " You should "
        "ensure that your function is twice differentiable and that the jacobian depends on "
        "the inputs (this would be violated by a linear function for example)."
    ),
}
_MISSING = {
    "back": _UNUSED + _NOT_ALLOWED,
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the "
        "grad_outputs when using the double backward trick to compute forward mode "
        "gradients." + _NOT_ALLOWED
    ),
    "double_back": "The jacobian of the user-provided function is independent of input {i}."
    + _NOT_ALLOWED,
}
_CONSTANT = (
    "The {what} of the user-provided function is independent of input {i}. This is not "
    "allowed in strict mode when create_graph=True."
)


def check_requires_grad(items: Any, kind: str, strict: bool) -> None:
    """Each of ``items`` (outputs, first gradients...) must be a tensor that requires grad."""
    if not strict:
        return
    for i, t in enumerate(items):
        if t is None:
            raise RuntimeError((_UNUSED + _NOT_ALLOWED).format(i=i))
        if not t.requires_grad:
            raise RuntimeError(_NO_GRAD[kind].format(i=i))


def fill_in_zeros(
    grads: Any, refs: Any, strict: bool, create_graph: bool, stage: str
) -> tuple[Tensor, ...]:
    """Zeros for the gradients autograd left out (None), or, with ``strict``, an error."""
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = wrap(np.zeros_like(ref._array))
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(_CONSTANT.format(what=what, i=i))
        result.append(g)
    return tuple(result)


def check_jacobian_block(block: Any, out_index: int, in_index: int, strict: bool,
                         create_graph: bool) -> None:  # fmt: skip
    """jacobian(strict=True): output ``out_index`` must depend on input ``in_index``."""
    if not strict:
        return
    if block is None:
        raise RuntimeError(
            f"Output {out_index} of the user-provided function is independent of input "
            f"{in_index}." + _NOT_ALLOWED
        )
    if create_graph and not block.requires_grad:  # (PyTorch's text names the output's index)
        raise RuntimeError(_CONSTANT.format(what="jacobian", i=out_index))
