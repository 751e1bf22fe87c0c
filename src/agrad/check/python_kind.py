"""What a user's Python function is written with: "agrad", "torch" or "numpy".

The names the function's own code uses decide (its globals, the modules it imports in
its body, and, through them, the helpers of its file that it calls): a NumPy function
in a file that also imports agrad (to check another function there) is a NumPy
function. Only when its code names none of them (``x.sum()`` alone) does its file's
imports decide, agrad first, then torch.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

KINDS = {"agrad": "agrad", "torch": "torch", "numpy": "numpy", "scipy": "numpy"}
WRITTEN = {
    "agrad": "with 'import agrad as torch'",
    "torch": "with PyTorch",
    "numpy": "with NumPy",
}
DEPTH = 4  # helpers of helpers of the file, followed this deep


def framework(func: Callable, module: Any) -> str:
    """ "agrad", "torch" or "numpy", and why (see the module's docstring)."""
    return detect(func, module)[0]


def detect(func: Callable, module: Any) -> tuple[str, str]:
    """(the kind, the reason in words) for a user's function."""
    used = _kinds_used(func, set(), 0)
    for kind in ("agrad", "torch"):  # NumPy beside them is constants and helpers
        if kind in used and not (used - {kind, "numpy"}):
            return kind, f"its code uses {kind}"
    if used == {"numpy"}:
        return "numpy", "its code uses NumPy and neither agrad nor torch"
    import agrad

    values = list(vars(module).values()) + list(getattr(func, "__globals__", {}).values())
    if any(v is agrad for v in values):
        return "agrad", "its file imports agrad"
    torch = sys.modules.get("torch")
    if torch is not None and any(v is torch for v in values):
        return "torch", "its file imports torch"
    return "numpy", "its file imports neither agrad nor torch"


def _kind_of(value: Any) -> str | None:
    if isinstance(value, types.ModuleType):
        name = value.__name__
    else:
        name = getattr(value, "__module__", None) or ""
        if not isinstance(name, str):
            return None
    return KINDS.get(name.split(".")[0])


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _kinds_used(func: Any, seen: set[int], depth: int) -> set[str]:
    func = getattr(func, "__func__", func)  # a bound method's function
    code = getattr(func, "__code__", None)
    if not isinstance(code, types.CodeType) or id(func) in seen or depth > DEPTH:
        return set()
    seen.add(id(func))
    scope = getattr(func, "__globals__", {})
    kinds: set[str] = set()
    for inner in _codes(code):
        for name in inner.co_names:
            if name not in scope:  # `import torch` in the function's body
                if name in ("agrad", "torch"):
                    kinds.add(name)
                continue
            value = scope[name]
            kind = _kind_of(value)
            if kind is not None:
                kinds.add(kind)
            elif isinstance(value, types.FunctionType) and value.__globals__ is scope:
                kinds |= _kinds_used(value, seen, depth + 1)  # a helper of the same file
    return kinds
