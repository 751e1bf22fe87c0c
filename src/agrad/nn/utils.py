"""agrad.nn.utils: gradient clipping, flat parameter vectors, and weights in ``.npz`` files.

Weights travel as NumPy ``.npz`` archives (one array per state-dict key), read with
``allow_pickle=False``: agrad never loads a pickle, so ``torch.load`` checkpoints are
converted on a machine with PyTorch first::

    np.savez("resnet18.npz", **{k: v.numpy() for k, v in model.state_dict().items()})
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..engine.creation import tensor
from ..engine.grad_mode import no_grad
from ..engine.tensor import Tensor
from ..errors import AgradValueError
from .parameter import assign, values


def _listed(parameters: Any) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _norm(array: np.ndarray, norm_type: float) -> float:
    flat = np.abs(array.reshape(-1))
    if math.isinf(norm_type):
        return float(flat.max(initial=0.0))
    return float(np.sum(flat**norm_type) ** (1.0 / norm_type))


def clip_grad_norm_(
    parameters: Any,
    max_norm: float,
    norm_type: float | str = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most ``max_norm``
    (by max_norm / (norm + 1e-6), never up); returns the norm before clipping."""
    norm_type = float(norm_type)
    grads = [p.grad for p in _listed(parameters) if p.grad is not None]
    if not grads:
        return tensor(0.0)
    total = _norm(np.array([_norm(values(g), norm_type) for g in grads]), norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    coef = min(float(max_norm) / (total + 1e-6), 1.0)
    with no_grad():
        for g in grads:
            g.mul_(coef)
    return tensor(total, dtype=grads[0].dtype)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    with no_grad():
        for p in _listed(parameters):
            if p.grad is not None:
                p.grad.clamp_(-float(clip_value), float(clip_value))


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter's values, flattened and joined (a copy, without gradient)."""
    return tensor(np.concatenate([values(p).reshape(-1) for p in parameters]))


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of ``vec`` into the parameters (the inverse of the above)."""
    flat, start = values(vec).reshape(-1), 0
    for p in parameters:
        n = p.numel()
        assign(p, flat[start : start + n].reshape(p.shape))
        start += n


def load_npz(path: str | os.PathLike) -> OrderedDict:
    """A state dict from a ``.npz`` archive (arrays only: pickles are refused)."""
    try:
        with np.load(os.fspath(path), allow_pickle=False) as archive:
            return OrderedDict((key, archive[key]) for key in archive.files)
    except (OSError, ValueError) as exc:
        raise AgradValueError(f"cannot read weights from {os.fspath(path)!r}: {exc}") from None


def save_npz(state: Mapping[str, Any] | Any, path: str | os.PathLike) -> None:
    """Write a state dict (or a module's) as a ``.npz`` archive that `load_npz` reads."""
    if hasattr(state, "state_dict"):
        state = state.state_dict()
    np.savez(os.fspath(path), **{key: values(v) for key, v in state.items()})


__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "load_npz",
    "parameters_to_vector",
    "save_npz",
    "vector_to_parameters",
]
