"""Comparisons and logic: not differentiable, boolean results (operands promoted as
PyTorch's: an int64 tensor compared with 2.5 is compared in the default float dtype)."""

from __future__ import annotations

import numpy as np

from .core import NOTHING, UNARY, Op, register, same_shape
from .elementwise import binary

COMPARISONS = {
    "lt": (np.less, "less"), "le": (np.less_equal, "less_equal"),
    "gt": (np.greater, "greater"), "ge": (np.greater_equal, "greater_equal"),
    "eq": (np.equal, None), "ne": (np.not_equal, "not_equal"),
}  # fmt: skip
LOGIC = {"logical_and": np.logical_and, "logical_or": np.logical_or,
         "logical_xor": np.logical_xor}  # fmt: skip

register(
    *(binary(name, "", fn, None, "", saves=NOTHING, aliases=(alias,) if alias else ())
      for name, (fn, alias) in COMPARISONS.items()),
    *(binary(name, "", fn, None, "", saves=NOTHING, method=False) for name, fn in LOGIC.items()),
    Op("logical_not", "", np.logical_not, None, same_shape, saves=NOTHING, family=UNARY,
       method=False),
)  # fmt: skip
