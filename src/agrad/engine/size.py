"""`Size`: what ``Tensor.shape`` and ``Tensor.size()`` return, a tuple printed as PyTorch's.

It prints ``torch.Size([2, 3])``, PyTorch's text, for the reason dtypes print ``torch.float32``
(`agrad.engine.dtypes`): code written for ``import torch`` compares what it prints.
"""

from __future__ import annotations

import math
from typing import Any


class Size(tuple):
    """A tuple of ints: ``agrad.Size([2, 3]) == (2, 3)``, printed ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        return super().__new__(cls, (int(n) for n in sizes))

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(n) for n in self)}])"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        return math.prod(self)
