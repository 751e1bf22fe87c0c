"""agrad.autograd.graph: PyTorch's torch.autograd.graph — Node, saved-tensor hooks,
save_on_cpu (a no-op: agrad has one device), allow_mutation_on_saved_tensors and
register_multi_grad_hook. The machinery is `agrad.engine.graph_hooks`."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ..engine import graph_hooks  # noqa: F401 - installs the Node API
from ..engine.graph_hooks import FEATURES, refresh
from ..engine.node import Node
from ..engine.tensor import Tensor, wrap

__all__ = [
    "Node", "allow_mutation_on_saved_tensors", "disable_saved_tensors_hooks",
    "register_multi_grad_hook", "save_on_cpu", "saved_tensors_hooks",
]  # fmt: skip


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Inside the block, each tensor an op saves for backward is handed to
    ``pack_hook(tensor)`` and what it returns is kept; backward calls ``unpack_hook`` on
    that to get the tensor back. The innermost block's hooks apply."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:  # fmt: skip
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self) -> saved_tensors_hooks:
        FEATURES.saved.append(self.hooks)
        refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        FEATURES.saved.remove(self.hooks)
        refresh()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """PyTorch moves saved tensors to the CPU; agrad is on the CPU already, so the
    tensors are kept as they are (``pin_memory`` is accepted and ignored)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str = "") -> Iterator[None]:
    """Saved-tensor hooks switched off inside the block."""
    kept = list(FEATURES.saved)
    FEATURES.saved.clear()
    refresh()
    try:
        yield
    finally:
        FEATURES.saved[:] = kept
        refresh()


class allow_mutation_on_saved_tensors(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Inside the block, a tensor saved for backward may be modified in place afterwards:
    backward uses its value at the time it was saved (kept as a copy)."""

    def __init__(self) -> None:
        super().__init__(lambda t: wrap(t._array.copy(), t.requires_grad, None), lambda t: t)


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> Any:
    """Call ``fn(grads)`` once per backward pass that computes a gradient for any of
    ``tensors``: ``grads`` has one entry per tensor, None where none was computed. The hook
    holds its tensors weakly, and goes away with them."""
    if mode != "all":
        raise ValueError("register_multi_grad_hook: agrad supports mode='all' only")
    entry = MultiGradHook(tuple(weakref.ref(t) for t in tensors), fn)
    FEATURES.multi.append(entry)
    refresh()
    return entry


class MultiGradHook:
    """A registered multi-grad hook; ``remove()`` unregisters it."""

    def __init__(self, tensors: tuple, fn: Callable) -> None:
        self.tensors, self.fn = tensors, fn

    def remove(self) -> None:
        FEATURES.multi[:] = [e for e in FEATURES.multi if e is not self]
        refresh()
