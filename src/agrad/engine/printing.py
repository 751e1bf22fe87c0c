"""PyTorch-style ``repr`` of tensors: ``tensor([1., 2.], requires_grad=True)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import get_default_dtype

THRESHOLD = 1000  # more elements than this are summarised with "..."
EDGE_ITEMS = 3


def _float_formatter(values: np.ndarray, precision: int = 4) -> Any:
    """PyTorch's choice: whole numbers as ``2.``, else fixed or scientific notation."""
    finite = np.abs(values[np.isfinite(values)])
    nonzero = finite[finite != 0]
    big = nonzero.max() if nonzero.size else 0.0
    small = nonzero.min() if nonzero.size else 0.0
    if np.all(finite == np.round(finite)):
        pattern = f"{{:.{precision}e}}" if big > 1e8 else "{:.0f}."
    elif big / small > 1000.0 or big > 1e8 or small < 1e-4:
        pattern = f"{{:.{precision}e}}"
    else:
        pattern = f"{{:.{precision}f}}"

    def fmt(v: Any) -> str:
        v = float(v)
        return pattern.format(v) if np.isfinite(v) else str(v)

    return fmt


def format_data(data: np.ndarray, indent: int) -> str:
    """The bracketed body of a repr, elements right-aligned to a common width."""
    summarize = data.size > THRESHOLD
    shown = _shown_values(data, summarize)
    fmt = str if data.dtype.kind in "biu" else _float_formatter(shown.astype(np.float64))
    flat = shown.reshape(-1)
    if data.dtype.kind == "f" and np.isfinite(flat).any():
        flat = flat[np.isfinite(flat)]  # PyTorch: non-finite cells do not set the width
    width = max((len(fmt(v)) for v in flat), default=0)
    return _nest(data, indent, lambda v: fmt(v).rjust(width), summarize)


def _shown_values(data: np.ndarray, summarize: bool) -> np.ndarray:
    if not summarize or data.ndim == 0:
        return data
    for axis in range(data.ndim):
        if data.shape[axis] > 2 * EDGE_ITEMS:
            head = np.take(data, range(EDGE_ITEMS), axis=axis)
            tail = np.take(data, range(data.shape[axis] - EDGE_ITEMS, data.shape[axis]), axis=axis)
            data = np.concatenate([head, tail], axis=axis)
    return data


def _nest(data: np.ndarray, indent: int, cell: Any, summarize: bool) -> str:
    if data.ndim == 0:
        return cell(data.item())
    n = data.shape[0]
    if summarize and n > 2 * EDGE_ITEMS:
        idx = list(range(EDGE_ITEMS)) + [None] + list(range(n - EDGE_ITEMS, n))
    else:
        idx = list(range(n))
    if data.ndim == 1:
        parts = ["..." if i is None else cell(data[i].item()) for i in idx]
        return "[" + ", ".join(parts) + "]"
    sep = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    parts = ["..." if i is None else _nest(data[i], indent + 1, cell, summarize) for i in idx]
    return "[" + sep.join(parts) + "]"


def tensor_repr(t: Any) -> str:
    data = t.data
    prefix = "tensor("
    body = "[]" if data.size == 0 and data.ndim == 1 else format_data(data, len(prefix))
    extras = []
    if data.size == 0 and data.ndim != 1:
        extras.append(f"size={tuple(data.shape)}")
    default = get_default_dtype() if data.dtype.kind == "f" else np.dtype("int64")
    if data.dtype not in (default, np.dtype(bool)):
        extras.append(f"dtype=agrad.{data.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return prefix + body + "".join(", " + e for e in extras) + ")"
