"""The op table's error wording: a failed forward or shape rule, named after its op."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import (
    AgradError,
    AgradLimitError,
    AgradShapeError,
    AgradTypeError,
    AgradValueError,
)


def explain_failure(op: Any, datas: Sequence, params: dict, exc: Exception) -> Exception:
    if isinstance(exc, AgradError):  # the forward's own clean error keeps its class
        return with_op_name(op, exc)
    shapes = [np.shape(d) for d in datas]
    try:
        op.shape_rule(*shapes, **params)
    except (AgradShapeError, AgradValueError, AgradLimitError) as err:
        return with_op_name(op, err)
    return AgradValueError(f"{op.name}: {exc} (operand shapes {fmt_shapes(shapes)})")


def tracked_parameter(op: Any, name: str) -> AgradTypeError:
    """PyTorch's TypeError for a tensor where a number goes: as a parameter (not an
    operand) its gradient would be lost in silence, and a check would pass the loss."""
    return AgradTypeError(
        f"{op.api_name or op.name}(): argument '{name}' must be a number, not a Tensor that "
        "requires grad (its gradient would be lost); pass a number, or .item() to cut it"
    )


def with_op_name(op: Any, err: AgradError) -> Exception:
    """A shape rule's error, its message starting with the op's name."""
    text = str(err)
    if text.startswith(f"{op.name}:") or text.startswith(f"{op.name}("):
        return err
    return err.with_prefix(op.name)  # (PyTorch's wording, when shown, is left as it is)


def fmt_shapes(shapes: list) -> str:
    return ", ".join(str(tuple(s)) for s in shapes)
