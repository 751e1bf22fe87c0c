"""Tensors printed as PyTorch prints them, and ``set_printoptions``.

The layout is PyTorch's (``torch/_tensor_str.py``), re-derived on NumPy: one format for
every element (whole numbers as ``2.``, else fixed or scientific notation, chosen from the
nonzero finite values), right-aligned to a common width; rows wrapped to the line width
with a continuation indent under the first element; more than ``threshold`` elements shown
as ``edgeitems`` at each end around ``...``; then the suffixes (``dtype=`` when the dtype is
not a default one, ``grad_fn=`` or ``requires_grad=True``), each moved to a line of its own
when it would pass the line width.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..records import as_dict, record
from .dtypes import as_dtype, get_default_dtype


@record
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTIONS = PrintOptions()
PROFILES = {
    "default": PrintOptions(),
    "short": PrintOptions(precision=2, edgeitems=2),
    "full": PrintOptions(threshold=math.inf),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Change how tensors print (torch.set_printoptions): a profile ("default", "short",
    "full") first, then the options given."""
    if profile is not None:
        if profile not in PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r}: use {list(PROFILES)}")
        for key, value in as_dict(PROFILES[profile]).items():
            setattr(OPTIONS, key, value)
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):  # fmt: skip
        if value is not None:
            setattr(OPTIONS, key, value)
    OPTIONS.sci_mode = sci_mode  # as PyTorch: None goes back to choosing automatically


def get_printoptions() -> dict[str, Any]:
    return as_dict(OPTIONS)


class _Formatter:
    """One format for every element of a tensor, and the width they are padded to."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max([len(self._plain(v)) for v in flat.tolist()], default=1)
            return
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return
        magnitudes = np.abs(shown.astype(np.float64))
        big, small = magnitudes.max(), magnitudes.min()
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        auto = bool(big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4)
        self.sci_mode = auto if OPTIONS.sci_mode is None else OPTIONS.sci_mode
        p = OPTIONS.precision
        for v in shown.tolist():
            if self.sci_mode:
                text = f"{v:.{p}e}"
            elif self.int_mode:
                text = f"{v:.0f}."
            else:
                text = f"{v:.{p}f}"
            self.width = max(self.width, len(text))

    @staticmethod
    def _plain(v: Any) -> str:
        return str(v)

    def __call__(self, v: Any) -> str:
        if not self.floating:
            text = self._plain(v)
        elif self.sci_mode:
            text = f"{v:{self.width}.{OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{OPTIONS.precision}f}"
        return text.rjust(self.width)


def _summarized(data: np.ndarray) -> np.ndarray:
    """The elements that are shown when ``data`` is summarised (they set the format)."""
    edge = OPTIONS.edgeitems
    for axis in range(data.ndim):
        n = data.shape[axis]
        if n > 2 * edge:
            keep = list(range(edge)) + list(range(n - edge, n))
            data = np.take(data, keep, axis=axis)
    return data


def _vector(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.width + 2))
    edge, n = OPTIONS.edgeitems, data.shape[0]
    if summarize and not edge:
        cells = ["..."]
    elif summarize and n > 2 * edge:
        cells = [fmt(v) for v in data[:edge].tolist()] + [" ..."]
        cells += [fmt(v) for v in data[n - edge :].tolist()]
    else:
        cells = [fmt(v) for v in data.tolist()]
    lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    # Iterative over the leading axes would gain nothing: the depth is the tensor's rank.
    if data.ndim == 0:
        return fmt(data.item())
    if data.ndim == 1:
        return _vector(data, indent, summarize, fmt)
    edge, n = OPTIONS.edgeitems, data.shape[0]
    if summarize and n > 2 * edge:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(edge)]
        rows.append("...")
        rows += [_nested(data[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
    else:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def format_data(data: np.ndarray, indent: int) -> str:
    """The bracketed body of a repr, as PyTorch lays it out."""
    if data.size == 0:
        return "[]"
    if data.dtype.kind == "f" and data.dtype.itemsize < 4:
        data = data.astype(np.float32)  # as PyTorch prints half precision
    summarize = data.size > OPTIONS.threshold
    fmt = _Formatter(_summarized(data) if summarize else data)
    return _nested(data, indent, summarize, fmt)


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text`` and its suffixes; one that would pass the line width starts a new line."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(t: Any) -> str:
    if t.__dict__.get("_is_parameter"):  # agrad.nn.Parameter, printed as PyTorch prints one
        return "Parameter containing:\n" + _tensor_repr(t)
    return _tensor_repr(t)


def _tensor_repr(t: Any) -> str:
    data = np.asarray(t._array)
    prefix = "tensor("
    suffixes = []
    default = get_default_dtype()
    dtype = as_dtype(data.dtype)
    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype != default:  # an empty tensor shows any dtype but the default float
            suffixes.append(f"dtype={dtype}")
    else:
        if not OPTIONS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        complex_default = np.dtype("complex128" if default == np.float64 else "complex64")
        if dtype not in (default, complex_default, np.dtype("int64"), np.dtype(bool)):
            suffixes.append(f"dtype={dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + format_data(data, len(prefix)), suffixes, len(prefix))
