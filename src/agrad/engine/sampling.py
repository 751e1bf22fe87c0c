"""Random sampling that PyTorch code uses beyond randn/rand: multinomial, randperm, normal.

All draw from a `Generator` (``generator=``, else the default one): seeded and repeatable,
but NumPy's streams, so not PyTorch's numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradValueError
from . import limits
from .args import as_tensor, shape_of
from .dtypes import get_default_dtype
from .generator import numpy_rng
from .tensor import Tensor, _autograd_error, wrap


def multinomial(
    input: Any,  # noqa: A002 - PyTorch's name
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Any = None,
) -> Tensor:
    """Indices drawn from the categories with probability proportional to ``input``'s
    (non-negative) weights: one row of ``num_samples`` per row of a 2-D ``input``."""
    weights = np.asarray(as_tensor(input)._array, dtype=np.float64)
    if weights.ndim not in (1, 2):
        raise _autograd_error("prob_dist must be 1 or 2 dim")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise _autograd_error("probability tensor contains either `inf`, `nan` or element < 0")
    rng = numpy_rng(generator)
    rows = weights.reshape(-1, weights.shape[-1])
    drawn = np.empty((rows.shape[0], int(num_samples)), dtype=np.int64)
    for i, row in enumerate(rows):
        total = row.sum()
        if total <= 0:
            raise _autograd_error("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > np.count_nonzero(row):
            raise _autograd_error(
                "invalid multinomial distribution (with replacement=False, not enough "
                "non-negative category to sample)"
            )
        drawn[i] = rng.choice(row.size, size=int(num_samples), replace=replacement, p=row / total)
    return wrap(drawn.reshape(weights.shape[:-1] + (int(num_samples),)))


def randperm(n: int, *, generator: Any = None, dtype: Any = None, **_: Any) -> Tensor:
    """A random permutation of 0 .. n-1 (int64)."""
    limits.check_count(int(n), "randperm")
    perm = numpy_rng(generator).permutation(int(n))
    return wrap(perm.astype(np.int64 if dtype is None else np.dtype(dtype)))


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    requires_grad: bool = False,
    **_: Any,
) -> Tensor:
    """Normal numbers: ``normal(0., 1., (2, 3))``, or elementwise for tensor mean/std."""
    rng = numpy_rng(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m, s = np.asarray(as_tensor(mean)._array), np.asarray(as_tensor(std)._array)
        if np.any(s < 0):
            raise AgradValueError("normal: std must be non-negative")
        kind = np.result_type(m, s) if np.result_type(m, s).kind == "f" else get_default_dtype()
        data = rng.normal(m, s).astype(kind)
    else:
        if size is None:
            raise TypeError("normal() with numbers for mean and std needs a size")
        if float(std) < 0:
            raise AgradValueError(f"normal: std must be non-negative, got {std}")
        shape = shape_of((size,))
        limits.check_shape(shape, "normal")
        data = rng.normal(float(mean), float(std), shape)
        data = data.astype(get_default_dtype() if dtype is None else np.dtype(dtype))
    out = wrap(np.asarray(data))
    if requires_grad:
        out.requires_grad = True
    return out
