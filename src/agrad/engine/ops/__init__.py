"""THE op table: every primitive, defined once. Importing this package fills `TABLE`."""

from . import elementwise, indexing, linalg, reduction, shape  # noqa: F401 - each registers
from .core import TABLE, Case, Op, apply

__all__ = ["TABLE", "Case", "Op", "apply"]
