"""tensor_split, hsplit, vsplit and dsplit, as PyTorch's: slices of the input (views of
it, SliceBackward0 each), composed from basic indexing like `reorder.split`.

Unlike split's and chunk's pieces, PyTorch lets these pieces be written in place (they
are separate slices, not one multi-output view function), so they are not marked.
``tensor_split(x, 3)`` gives pieces whose sizes differ by at most one (the first ones
larger); ``tensor_split(x, [1, 4])`` cuts before positions 1 and 4, as Python slices
``x[:1], x[1:4], x[4:]`` (negative positions count from the end, out of range ones clamp).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import shaping
from .args import first
from .grad_attr import scalar_type_name
from .tensor import Tensor

_OVERLOADS = (
    "(Tensor input, tuple of ints indices, int dim = 0)",
    "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
    "(Tensor input, int sections, int dim = 0)",
)


def checked_dim(x: Tensor, dim: int) -> int:
    """``dim`` of ``x`` as a non-negative index, or PyTorch's IndexError."""
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return dim % nd


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _invalid(name: str, value: Any, overloads: tuple[str, ...]) -> TypeError:
    listed = "".join(f"\n * {o}" for o in overloads)
    return TypeError(
        f"{name}() received an invalid combination of arguments - got (Tensor, "
        f"{type(value).__name__}), but expected one of:{listed}"
    )


def _cuts(x: Tensor, spec: Any) -> int | list[int]:
    """``spec`` as a number of sections (an int) or a list of cut positions."""
    if isinstance(spec, Tensor):
        if spec.dtype != np.dtype(np.int64):
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but "
                f"got {scalar_type_name(spec._array.dtype)}"
            )
        if spec.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {spec.ndim} dims"
            )
        values = np.asarray(spec._array)  # (positions, not values of the graph)
        return int(values) if spec.ndim == 0 else [int(i) for i in values]
    if _is_int(spec):
        return int(spec)
    if isinstance(spec, (list, tuple)) and all(_is_int(i) for i in spec):
        return [int(i) for i in spec]
    raise _invalid("tensor_split", spec, _OVERLOADS)


def _keyword(spec: Any, sections: Any, indices: Any, tensor: Any = None) -> Any:
    given = [v for v in (spec, sections, indices, tensor) if v is not None]
    if len(given) != 1:
        raise TypeError("expected exactly one of indices_or_sections, sections or indices")
    return given[0]


def tensor_split(
    x: Any,
    indices_or_sections: Any = None,
    dim: int = 0,
    *,
    sections: Any = None,
    indices: Any = None,
    tensor_indices_or_sections: Any = None,
) -> tuple[Tensor, ...]:
    """``x`` cut along ``dim`` into ``n`` nearly equal pieces, or before each given position.

    >>> [p.tolist() for p in tensor_split(agrad.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    x = first(x)
    spec = _keyword(indices_or_sections, sections, indices, tensor_indices_or_sections)
    if x.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = checked_dim(x, dim)
    cuts = _cuts(x, spec)
    n = x.shape[d]
    if isinstance(cuts, int):
        if cuts <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {cuts}")
        small, extra = divmod(n, cuts)
        sizes = [small + 1] * extra + [small] * (cuts - extra)
        bounds, start = [], 0
        for size in sizes:
            bounds.append((start, start + size))
            start += size
    else:
        starts, ends = [0, *cuts], [*cuts, None]
        bounds = list(zip(starts, ends, strict=True))
    lead = (slice(None),) * d
    return tuple(shaping.index(x, (*lead, slice(a, b))) for a, b in bounds)


def _directional(name: str, dim: int, least: int) -> Any:
    def fn(x: Any, indices_or_sections: Any = None, *, sections: Any = None, indices: Any = None):
        x = first(x)
        spec = _keyword(indices_or_sections, sections, indices)
        if x.ndim < least:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {least} dimension, but got a "
                f"tensor with {x.ndim} dimensions!"
            )
        d = 0 if name == "hsplit" and x.ndim == 1 else dim
        if _is_int(spec):
            size = x.shape[d]
            if spec == 0 or size % int(spec) != 0:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {d}, but the size of the "
                    f"dimension {size} is not divisible by the split_size {int(spec)}!"
                )
        elif not (isinstance(spec, (list, tuple)) and all(_is_int(i) for i in spec)):
            raise _invalid(name, spec, ("(Tensor input, int sections)",
                                        "(Tensor input, tuple of ints indices)"))  # fmt: skip
        return tensor_split(x, spec, d)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"``tensor_split`` along dimension {dim}"
        + (" (0 for a 1-D tensor)" if name == "hsplit" else "")
        + "; an int number of sections must divide that dimension's size."
    )
    return fn


hsplit = _directional("hsplit", 1, 1)
vsplit = _directional("vsplit", 0, 2)
dsplit = _directional("dsplit", 2, 3)

FUNCTIONS = {"tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit}
