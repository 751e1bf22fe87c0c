"""The element limit at one op application (`agrad.engine.limits`, set by the language's
``--max-elements``): checked before the forward of an op that can give more elements than
its operands hold, from the op's shape rule, or, for an op declared ``within_operands``,
from the product of the operands' sizes when that is within the limit (no shape rule on
the common path: a few attribute reads instead of microseconds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from .. import limits
from ..shape_rules import broadcast_shape
from .failures import with_op_name

_SCALARS = (int, float, bool, complex)  # (constants that broadcast as one element)


def check_limit(op: Any, datas: Sequence, params: dict) -> None:
    limit = limits.thread_limit()
    if limit is None:  # (another thread's run set a limit, this one has none)
        return
    if op.within_operands:  # a bound from the sizes alone: no shape rule on the common path
        bound = 1
        for d in datas:
            if type(d) is np.ndarray:
                bound *= d.size
            elif type(d) not in _SCALARS:
                bound = 0  # (anything else: the shape rule decides)
        if 0 < bound <= limit:
            return
    if op.shape_rule is broadcast_shape:  # elementwise: grows only when shapes differ
        shape = None
        for d in datas:
            if type(d) is np.ndarray:  # (a Python number broadcasts without growing)
                if shape is None:
                    shape = d.shape
                elif d.shape != shape:
                    break
        else:
            return
    try:
        shape = op.shape_rule(*[np.shape(d) for d in datas], **params)
    except (AgradShapeError, AgradValueError) as err:
        raise with_op_name(op, err) from None
    limits.check_shape(shape, op.name)
