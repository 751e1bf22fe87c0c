"""Dtypes under PyTorch's names, and the default float dtype.

``agrad.float32`` is a `DType`: it prints as PyTorch's does (``torch.float32``: code written
for ``import torch`` compares printed text, so agrad answers with the name that code uses)
and stands for its NumPy dtype everywhere NumPy takes one (``np.zeros(2, dtype=agrad.float32)``,
``t.dtype == np.float32``, ``t.dtype.kind``), through NumPy's ``.dtype`` protocol.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np


class DType:
    """A NumPy dtype with PyTorch's face: ``str(agrad.float32) == 'torch.float32'``."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype  # NumPy reads this attribute wherever it is given a DType

    def __getattr__(self, name: str) -> Any:  # kind, name, itemsize, type, char ...
        return getattr(self.dtype, name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.dtype == other.dtype
        try:
            return bool(self.dtype == np.dtype(other))  # type: ignore[call-overload]
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.dtype)  # as the NumPy dtype's, so either finds the other in a dict

    def __repr__(self) -> str:
        return f"torch.{_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}"

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (as_dtype, (self.dtype.name,))

    @property
    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.dtype.kind in "ifc"


_TORCH_NAMES = {"complex64": "complex64", "complex128": "complex128"}
_BY_NUMPY: dict[np.dtype, DType] = {}


def as_dtype(dtype: Any) -> DType:
    """The `DType` of a NumPy dtype, an agrad dtype or a name (one object per dtype)."""
    d = dtype.dtype if isinstance(dtype, DType) else np.dtype(dtype)
    found = _BY_NUMPY.get(d)
    if found is None:
        found = _BY_NUMPY[d] = DType(d)
    return found


# PyTorch's names; `agrad/__init__.py` exports them (agrad.float32, agrad.float, ...).
DTYPES: dict[str, DType] = {
    name: as_dtype(numpy_name)
    for name, numpy_name in {
        "float16": "float16", "half": "float16", "float32": "float32", "float": "float32",
        "float64": "float64", "double": "float64", "int8": "int8", "int16": "int16",
        "short": "int16", "int32": "int32", "int": "int32", "int64": "int64", "long": "int64",
        "uint8": "uint8", "bool": "bool", "complex64": "complex64", "cfloat": "complex64",
        "complex128": "complex128", "cdouble": "complex128",
    }.items()
}  # fmt: skip


class _Session(threading.local):
    """A dtype that agrad's own runs (a program's ``--dtype``, check's float64 replays) set
    for the calling thread only. PyTorch's default dtype is process-global, and so is the
    public `set_default_dtype`; a session must neither change another thread's dtype nor
    read the one another thread's session chose."""

    dtype: DType | None = None  # (a class default: no per-thread setup on the first read)


_DEFAULT = [DTYPES["float64"]]  # process-global, as PyTorch's
_SESSION = _Session()
_LOCK = threading.Lock()
_ACTIVE = [0]  # sessions under way in any thread: while none is, skip the per-thread read


def get_default_dtype() -> DType:
    """The dtype of floating tensors created from Python numbers (float64 unless changed)."""
    if _ACTIVE[0]:
        return _SESSION.dtype or _DEFAULT[0]
    return _DEFAULT[0]


def _floating(dtype: Any) -> DType:
    d = np.dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    return as_dtype(d)


def set_default_dtype(dtype: Any) -> None:
    """Change the default floating dtype (float32 or float64), as torch.set_default_dtype:
    for the whole process, every thread (inside a `session_dtype` block of this thread,
    the block's dtype still wins until it ends)."""
    _DEFAULT[0] = _floating(dtype)


class session_dtype:  # lower case: used as `with session_dtype(...):`
    """Within the block, this thread's default dtype is ``dtype`` (None: unchanged); other
    threads and the process-global default are untouched.
    (A class, not a generator: every run of a program enters it, ``agrad fit`` ten
    thousand times, and a generator-based context costs several times more.)"""

    __slots__ = ("dtype", "previous")

    def __init__(self, dtype: Any) -> None:
        self.dtype = None if dtype is None else _floating(dtype)

    def __enter__(self) -> None:
        if self.dtype is None:
            return
        self.previous, _SESSION.dtype = _SESSION.dtype, self.dtype
        with _LOCK:  # (+= is a read and a write: two threads' could interleave)
            _ACTIVE[0] += 1

    def __exit__(self, *exc: object) -> None:
        if self.dtype is None:
            return
        _SESSION.dtype = self.previous
        with _LOCK:
            _ACTIVE[0] -= 1


def to_dtype(dtype: Any) -> np.dtype | None:
    """A NumPy dtype from an agrad/NumPy dtype or its name; None stays None."""
    return None if dtype is None else np.dtype(dtype)
