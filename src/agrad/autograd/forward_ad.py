"""torch.autograd.forward_ad: dual tensors and their tangents, inside ``dual_level()``.

agrad has no forward-mode engine; it computes the same tangents from the recorded graph.
``make_dual(p, t)`` returns a view of ``p`` that autograd records from; ``unpack_dual(y)``
gives J·t by differentiating the vector-Jacobian product in its cotangent (the rules are
linear in it: every op's JVP this way is tested against finite differences). Because the
tangent comes from the graph, grad mode must stay on inside a dual level: ``no_grad`` there
(where PyTorch still propagates tangents) raises instead of losing them.

Differences from PyTorch, none of them in the numbers: a dual tensor requires grad and has a
grad_fn (it is recorded), prints without ``tangent=``, each ``unpack_dual`` of a result
costs two backward passes, and an in-place write over a value the graph saved raises
reverse mode's error (PyTorch's forward mode needs no saved values).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..engine.autograd import grad
from ..engine.grad_mode import OFF_GUARDS, set_grad_enabled
from ..engine.tensor import Tensor, wrap

__all__ = [
    "UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual",
    "unpack_dual",
]  # fmt: skip


class UnpackedDualTensor(NamedTuple):
    primal: Any
    tangent: Any


class _Level:
    def __init__(self) -> None:
        self.leaves: list[Tensor] = []  # what the duals are views of (what we differentiate by)
        self.tangents: list[Tensor] = []
        self.duals: dict[int, tuple[Tensor, Tensor]] = {}  # id(dual) -> (dual, tangent)


_LEVELS: list[_Level] = []
_COMPUTING = [False]  # unpack_dual's own backward passes may switch grad mode off


def _refuse_no_grad() -> None:
    if not _COMPUTING[0]:
        raise NotImplementedError(
            "grad mode switched off inside a forward-AD dual_level: agrad computes tangents "
            "from the recorded graph, so no_grad/inference_mode there would lose them; leave "
            "the no_grad block outside the dual_level"
        )


def enter_dual_level() -> int:
    """Open a new level (PyTorch allows one at a time) and return its index."""
    if _LEVELS:
        raise RuntimeError(
            "Entering a new forward AD level but the current level is not valid. Make sure "
            "you did not modified it."
        )
    _LEVELS.append(_Level())
    OFF_GUARDS.append(_refuse_no_grad)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    if _LEVELS:
        _LEVELS.pop()
        OFF_GUARDS.remove(_refuse_no_grad)


class dual_level:  # noqa: N801 - PyTorch's name
    """``with dual_level(): ...``: tangents made inside are forgotten at the end."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with ``tensor``'s values (a view of it) whose tangent is ``tangent``."""
    if not _LEVELS:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    level = _LEVELS[-1]
    leaf = tensor if tensor.requires_grad else wrap(tensor._array, True)
    with set_grad_enabled(True):
        dual = leaf.view_as(leaf)
    level.leaves.append(leaf)
    level.tangents.append(tangent.detach())
    level.duals[id(dual)] = (dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``; the tangent is None outside a level or for a tensor that does
    not depend on any dual tensor."""
    if not _LEVELS or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    current = _LEVELS[-1]
    known = current.duals.get(id(tensor))
    if known is not None and known[0] is tensor:
        return UnpackedDualTensor(tensor.detach(), known[1])
    if not tensor.requires_grad or not current.leaves:
        return UnpackedDualTensor(tensor, None)
    _COMPUTING[0] = True
    try:
        tangent = _tangent(tensor, current)
    finally:
        _COMPUTING[0] = False
    return UnpackedDualTensor(tensor.detach(), tangent)


def _tangent(y: Tensor, level: _Level) -> Tensor | None:
    # J·t = d/du <vjp(u), t> for a cotangent u (the VJP is linear in u).
    u = wrap(np.zeros_like(y._array), True)
    firsts = grad([y], level.leaves, grad_outputs=[u], create_graph=True, allow_unused=True)
    pairs = [(g, t) for g, t in zip(firsts, level.tangents, strict=True) if g is not None]
    if not pairs:
        return None
    wired = [(g, t) for g, t in pairs if g.requires_grad]
    if not wired:  # y depends on a dual, but not linearly through u: a zero tangent
        return wrap(np.zeros_like(y._array))
    (jv,) = grad([g for g, _ in wired], [u], grad_outputs=[t for _, t in wired],
                 allow_unused=True)  # fmt: skip
    return wrap(np.zeros_like(y._array)) if jv is None else jv.detach()
