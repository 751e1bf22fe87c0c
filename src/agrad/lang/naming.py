"""How the language meets PyTorch's habits, and what it says about a name it does not know.

- keyword aliases: ``dim=``/``keepdim=`` are ``axis=``/``keepdims=`` (PyTorch's names);
- method calls: ``x.sum(axis=0)`` is ``sum(x, axis=0)`` for every function whose first
  argument is a tensor (the one function table, no second list of methods), and sizes
  may come one by one (``x.reshape(2, 3)``);
- suggestions: only close matches (a near-miss of the spelling), and for the names PyTorch
  or NumPy users reach for, the real alternative.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import AgradValueError

KEYWORD_ALIASES = {"dim": "axis", "keepdim": "keepdims"}

# Names from PyTorch/NumPy that the language spells otherwise (or does not have).
ALTERNATIVES = {
    "inverse": "inv", "linalg": "call inv, det, solve, cholesky by themselves",
    "mm": "matmul (or @)", "bmm": "matmul (or @)", "mv": "matmul (or @)",
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "power": "pow (or **)",
    "concatenate": "concat", "hstack": "concat([a, b], axis=-1)", "vstack": "stack",
    "view": "reshape", "permute": "transpose(x, [1, 0])", "t": ".T", "swapaxes": "transpose",
    "amax": "max", "amin": "min", "clamp_min": "clip(x, min=...)",
    "log_sum_exp": "logsumexp", "logistic": "sigmoid", "expit": "sigmoid",
    "mse": "mse_loss", "nll_loss": "cross_entropy", "l2norm": "norm", "frobenius": "norm",
    "diagflat": "diag", "matrix_power": "repeated @", "outer_product": "outer",
    **dict.fromkeys(("svd", "qr", "eig", "eigh", "lstsq", "pinv", "lu"),
                    "det, inv, solve, cholesky or einsum: agrad has no such decomposition"),
}  # fmt: skip
# A program's own names are short, and 'xx' for 'x' is the usual typo: difflib at 0.6. For
# functions, difflib's ratio misleads (inv -> sin, trace -> stack, foo -> floor): a typo is
# one edit away (two in a longer name), a swap of neighbours counting as one.
NAME_CUTOFF = 0.6


def suggest(name: str, candidates: Iterable[str], alternatives: bool = False) -> str:
    """``; did you mean 'x'?`` for a close spelling, or (for a function, ``alternatives``)
    the real alternative, or nothing."""
    if alternatives and name in ALTERNATIVES:
        return f"; use {ALTERNATIVES[name]}"
    others = [c for c in candidates if c != name]
    if alternatives:  # a function: a typo's edit distance, or a prefix (logsum -> logsumexp)
        limit = 1 if len(name) <= 4 else 2
        scored = sorted((_distance(name, c), c) for c in others)
        close = [c for d, c in scored[:1] if d <= limit]
        if not close and len(name) > 3:
            close = [c for c in others if c.startswith(name)][:1]
    else:
        import difflib  # (here: only a misspelt name needs it, not every start-up)

        close = difflib.get_close_matches(name, others, n=1, cutoff=NAME_CUTOFF)
    return f"; did you mean {close[0]!r}?" if close else ""


def _distance(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            row.append(cost)
        prev2, prev = prev, row
    return prev[-1]


def keyword_aliases(fn: Any, kwargs: dict) -> dict:
    """PyTorch's keyword names as the function's own (``dim`` -> ``axis``)."""
    params = {p.name for p in fn.params}
    renamed = {}
    for key, value in kwargs.items():
        own = KEYWORD_ALIASES.get(key)
        if own is not None and own in params and key not in params:
            if own in kwargs:
                raise AgradValueError(
                    f"{fn.name}() got both {key!r} and {own!r}, which mean the same; give one"
                )
            key = own
        renamed[key] = value
    return renamed


def trailing_sizes(fn: Any, args: list, as_list: Any) -> list:
    """PyTorch's ``x.reshape(2, 3)``: sizes given one by one where the function's last
    parameter is a shape become that one shape (``reshape(x, [2, 3])``)."""
    params = fn.params
    if fn.variadic is not None or not params or len(args) <= len(params):
        return args
    if params[-1].kind != "shape":
        return args
    head = len(params) - 1
    return [*args[:head], as_list(args[head:])]


def check_method(fn: Any) -> None:
    """A method call needs a function whose first argument is a tensor."""
    first = fn.params[0] if fn.params else None
    if first is None or first.kind not in ("tensor", "value"):
        what = "takes no tensor first" if first is None else f"takes {first.kind} first"
        raise AgradValueError(
            f"'.{fn.name}()' cannot be a method: {fn.name} {what}; call it as a function: "
            f"{fn.signature()}"
        )
