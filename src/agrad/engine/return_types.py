"""Named results as PyTorch's ``torch.return_types``: tuples with ``.values`` and
``.indices`` (or ``.hist`` and ``.bin_edges``) that print as PyTorch prints them::

    torch.return_types.max(
    values=tensor([3., 4.]),
    indices=tensor([1, 0]))
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any


def named_result(name: str, fields: tuple[str, ...] = ("values", "indices")) -> type:
    """A tuple type named ``torch.return_types.<name>`` with ``fields``."""
    base = namedtuple(name, fields)  # type: ignore[misc]

    def __repr__(self: Any) -> str:  # noqa: N807
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self, strict=True))
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__})


RESULTS = {name: named_result(name) for name in ("max", "min", "sort", "topk", "kthvalue")}
HISTOGRAM = named_result("histogram", ("hist", "bin_edges"))
