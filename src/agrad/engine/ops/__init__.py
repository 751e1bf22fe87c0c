"""THE op table: every primitive, defined once. Importing this package fills `TABLE`."""

from . import (  # noqa: F401 - each module registers its entries
    activation,
    bce,
    conv,
    cumulative,
    decomp,
    einsum,
    elementwise,
    elementwise_math,
    indexing,
    linalg,
    logic,
    losses,
    matrix,
    normalization,
    pooling,
    reduction,
    rounding,
    scatter,
    shape,
    unfold,
    windows,
)
from .core import TABLE, Case, Op, apply

__all__ = ["TABLE", "Case", "Op", "apply"]
