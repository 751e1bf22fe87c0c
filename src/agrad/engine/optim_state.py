"""Optimizer state as PyTorch keeps it: tensors updated in place, a 0-d ``step`` tensor,
and ``state_dict`` / ``load_state_dict`` with PyTorch's layout and checks.

``state_dict()`` numbers the parameters in group order (0, 1, ... across the groups) and
returns ``{'state': {index: state}, 'param_groups': [{options..., 'params': [index...]}]}``
whose state dicts and tensors are the optimizer's own, as PyTorch's are (a snapshot needs
``copy.deepcopy``). ``load_state_dict`` maps the indices back onto this optimizer's
parameters in the same order, casts floating-point state to each parameter's dtype (the
``step`` keeps its own) and takes the saved hyper-parameters.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from itertools import chain
from typing import Any

import numpy as np

from .dtypes import get_default_dtype
from .tensor import Tensor, wrap


def buffer(values: Any) -> Tensor:
    """A state tensor holding a copy of ``values`` (its own storage, updated in place)."""
    return wrap(np.array(values, copy=True))


def overwrite(t: Tensor, values: Any) -> np.ndarray:
    """Write ``values`` into the state tensor ``t`` in place (as PyTorch's ``mul_``/
    ``add_`` do, so references to it see the change); returns its array."""
    t._array[...] = values
    return t._array


def step_tensor() -> Tensor:
    """PyTorch's ``step``: a 0-d tensor of the default float dtype (float32 unless the
    default is float64)."""
    kind = np.float64 if get_default_dtype() == np.float64 else np.float32
    return wrap(np.array(0.0, dtype=kind))


def advance(state: dict[str, Any]) -> float:
    """Count one more step in ``state['step']`` (in place); the new count as a float."""
    step = state["step"]
    if isinstance(step, Tensor):
        step._array += 1
        return float(step._array)
    state["step"] = step + 1  # (a number, from a state dict written by hand)
    return float(state["step"])


def state_dict(opt: Any) -> dict[str, Any]:
    mapping: dict[int, int] = {}
    groups = []
    for group in opt.param_groups:
        packed = {k: v for k, v in group.items() if k != "params"}
        for p in group["params"]:
            mapping.setdefault(id(p), len(mapping))
        packed["params"] = [mapping[id(p)] for p in group["params"]]
        groups.append(packed)
    state = {
        (mapping[id(k)] if isinstance(k, Tensor) else k): v
        for k, v in opt.state.items()
        if v or not isinstance(k, Tensor)  # (no entry for a parameter without state)
    }
    return {"state": state, "param_groups": groups}


def load_state_dict(opt: Any, saved: dict[str, Any]) -> None:
    saved = dict(saved)  # (shallow, as PyTorch's)
    groups = opt.param_groups
    saved_groups = copy.deepcopy(saved["param_groups"])
    if len(groups) != len(saved_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    if any(len(a["params"]) != len(b["params"]) for a, b in zip(groups, saved_groups, strict=True)):
        raise ValueError(
            "loaded state dict contains a parameter group that doesn't match the size of "
            "optimizer's group"
        )
    by_index = dict(
        zip(
            chain.from_iterable(g["params"] for g in saved_groups),
            chain.from_iterable(g["params"] for g in groups),
            strict=True,
        )
    )
    state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
    for key, value in saved["state"].items():
        if key in by_index:
            param = by_index[key]
            state[param] = _cast(param, value)
        else:
            state[key] = value  # (state for no parameter is kept as it is, as PyTorch)
    for group, new in zip(groups, saved_groups, strict=True):
        new["params"] = group["params"]
    opt.param_groups = saved_groups
    opt.state = state


def _cast(param: Tensor, value: Any, key: Any = None) -> Any:
    """PyTorch's casting of loaded state: tensors to the parameter's dtype when it is a
    floating one, except ``step``; containers element by element."""
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v, key) for v in value)
    if isinstance(value, np.ndarray):  # (a state written with NumPy: made a tensor)
        value = wrap(np.array(value, copy=True))
    if isinstance(value, Tensor) and key != "step" and param.dtype.kind in "fc":
        return value.to(param.dtype)
    return value
