"""A count of values leaving the graph into Python, for the gradient checker.

Incremented (one list item, never on an op's path) where a tensor's value becomes a
Python value or an untracked tensor: ``item``, ``tolist``, ``numpy``, ``__array__``,
``__bool__``, ``detach``, ``.data``, constructors fed tensors, every random draw, and
(`read_values`) every untracked result computed from a tracked tensor's values: a
comparison's mask, indices (argmax, sort, topk, nonzero, max along a dim), an integer
cast. `agrad.check.recorded` replays a recorded graph in place of the user's function only
when the recorded call did not move it: a gradient lost through such an escape would be
lost by the replay too, and a mask or an index the replay holds fixed hides the jump or
kink it makes (two jumps of opposite weight even cancel in every value a probe sees).
"""

from typing import Any

# [0]: every escape; [1]: those of a tracked value (one that requires grad), and every
# constant of a graph made from a tracked value's values (`decided_by`): what a replay
# whose leaves take new values would hold fixed (`agrad fit`'s and the language checker's;
# a random draw repeats there, since every run of a program is seeded alike).
ESCAPES = [0, 0]


def escape(t: Any) -> None:
    """Count the values of ``t`` leaving the graph."""
    ESCAPES[0] += 1
    if getattr(t, "_rg", False):
        ESCAPES[1] += 1


def decided_by(*tensors: Any) -> None:
    """Count it when one of ``tensors`` is tracked: a constant of the graph (a mask, a sign,
    which branch of a composite) is being made from its values. The graph is still the
    function's own near the point (the checker's replay of a Python function, cross-checked
    by calls, keeps it), but not where those values change (`agrad fit`'s replay)."""
    for t in tensors:
        if getattr(t, "_rg", False):
            ESCAPES[1] += 1
            return


def read_values(*tensors: Any) -> None:
    """Count it when one of ``tensors`` is tracked (requires grad): its values are being
    read to make something the graph does not record."""
    for t in tensors:
        if getattr(t, "_rg", False):
            ESCAPES[0] += 1
            ESCAPES[1] += 1
            return
