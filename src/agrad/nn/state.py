"""A module's state dict (saving and loading by dotted name) and its hook handles."""

from __future__ import annotations

import os
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any

from .parameter import assign, values


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find, and those it did not use."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


class RemovableHandle:
    """What ``register_forward_hook`` returns: ``handle.remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict) -> None:
        self.hooks, self.id = hooks, RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks.pop(self.id, None)


def state_dict(module: Any, destination: Any, prefix: str, keep_vars: bool) -> OrderedDict:
    out = OrderedDict() if destination is None else destination
    for path, m in module.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
        base = f"{path}." if path else ""
        for name, p in m._parameters.items():
            if p is not None:
                out[base + name] = p if keep_vars else p.detach()
        for name, b in m._buffers.items():
            if b is not None and name not in m._non_persistent:
                out[base + name] = b if keep_vars else b.detach()
    return out


def load_state_dict(module: Any, source: Any, strict: bool) -> IncompatibleKeys:
    if isinstance(source, (str, os.PathLike)):
        from .utils import load_npz

        source = load_npz(source)
    if not isinstance(source, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(source).__name__}.")
    own = state_dict(module, None, "", keep_vars=True)
    missing = [k for k in own if k not in source]
    unexpected = [k for k in source if k not in own]
    errors = []
    if strict and missing:
        errors.append(
            "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
        )
    if strict and unexpected:
        errors.append(
            "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". "
        )
    for key, target in own.items():
        if key in source and values(source[key]).shape != tuple(target.shape):
            errors.append(
                f"size mismatch for {key}: copying a param with shape "
                f"{list(values(source[key]).shape)} from checkpoint, the shape in current model "
                f"is {list(target.shape)}."
            )
    if errors:
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors)
        )
    for key, target in own.items():
        if key in source:
            assign(target, values(source[key]))
    return IncompatibleKeys(missing, unexpected)
