"""`Parameter`, and the one place agrad.nn reads and writes tensor values.

agrad.nn touches a tensor's values only through `values`, `assign` and `retype` (never
through the internal array): reading is the array protocol, writing is ``copy_`` under
``no_grad`` (an in-place write, so version counters see it), and a change of dtype is
PyTorch's ``t.data = converted`` (the same object, holding new storage).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.args import as_tensor
from ..engine.grad_mode import no_grad
from ..engine.tensor import Tensor


class _ParameterType(type):
    """Makes ``isinstance(t, Parameter)`` read the mark `Parameter` leaves on its tensors."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and bool(getattr(obj, "_is_parameter", False))

    def __subclasscheck__(cls, sub: Any) -> bool:
        return sub is cls


class Parameter(Tensor, metaclass=_ParameterType):
    """A module's parameter: a leaf that requires grad (by default), found by
    ``Module.parameters()``; it shares its values with the tensor it is made from.

    It is an agrad Tensor marked as a parameter (``isinstance(p, Parameter)`` holds, and
    ``type(p)`` is Tensor): the engine's backward pass tells leaves from graph nodes by
    their exact type, so a subclass instance would not be a leaf there.

    >>> p = agrad.nn.Parameter(agrad.zeros(2))
    >>> p.requires_grad, p.is_leaf, isinstance(p, agrad.nn.Parameter)
    (True, True, True)
    """

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        base = as_tensor(np.zeros(0) if data is None else data)
        leaf = base.detach()  # shares the values, cut from any graph
        leaf.requires_grad = requires_grad
        leaf._is_parameter = True
        return leaf  # type: ignore[return-value]


def values(t: Any) -> np.ndarray:
    """The values of a tensor (or array) as a NumPy array, sharing memory where it can."""
    return np.asarray(t)


def assign(t: Tensor, new: Any) -> Tensor:
    """Write ``new`` into ``t`` in place (broadcast to its shape, cast to its dtype)."""
    with no_grad():
        t.copy_(np.asarray(new, dtype=t.dtype))
    return t


def retype(t: Tensor, dtype: np.dtype) -> Tensor:
    """Give ``t`` itself its values converted to ``dtype`` (new storage, as PyTorch's
    ``t.data = t.to(dtype)`` in ``Module._apply``): whoever holds ``t`` sees the change."""
    t.data = as_tensor(values(t).astype(dtype))
    return t
