"""A count of values leaving the graph into Python, for the gradient checker.

Incremented (one list item, never on an op's path) where a tensor's value becomes a
Python value or an untracked tensor: ``item``, ``tolist``, ``numpy``, ``__array__``,
``__bool__``, ``detach``, ``.data``, constructors fed tensors, and every random draw.
`agrad.check.recorded` replays a recorded graph in place of the user's function only
when the recorded call did not move it: a gradient lost through such an escape would
be lost by the replay too.
"""

ESCAPES = [0]
