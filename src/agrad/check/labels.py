"""How agrad names an element of a tensor in every table, CSV file and message.

One convention: the index as a Python tuple — ``()`` for a single number,
``(1,)`` in a vector, ``(0, 1)`` in a matrix — so that a spreadsheet column or a
log line reads the same whichever command wrote it, and pastes into NumPy as
``a[(0, 1)]``. A Jacobian or Hessian entry has two: the output's index and the
input's (for a Hessian block of x and y: x's index, then y's). JSON uses lists.
"""

from __future__ import annotations

from collections.abc import Iterable


def index_label(index: Iterable[int]) -> str:
    """``(0, 1)``-style text for an index.

    >>> index_label(()), index_label((3,)), index_label((0, 1))
    ('()', '(3,)', '(0, 1)')
    """
    parts = [str(int(i)) for i in index]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
