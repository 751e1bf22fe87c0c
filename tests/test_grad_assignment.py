"""Assigning to ``.grad`` and ``grad_dtype``: the same acceptances, errors and texts as
PyTorch (the values mirror what training loops assign: None, zeros_like, a float by
mistake, a wrong-shaped or wrong-dtype tensor, an array)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

VALUES = {
    "none": lambda t: None,
    "float": lambda t: 0.0,
    "int": lambda t: 0,
    "list": lambda t: [1.0, 2.0],
    "ndarray": lambda t: np.ones(2),
    "same": lambda t: t.ones(2, dtype=t.float64),
    "other_dtype": lambda t: t.ones(2, dtype=t.float32),
    "int_dtype": lambda t: t.ones(2, dtype=t.int64),
    "other_shape": lambda t: t.ones(3, dtype=t.float64),
    "scalar_tensor": lambda t: t.tensor(1.0, dtype=t.float64),
}


def _assign(lib: Any, make: Any, any_dtype: bool) -> Any:
    x = lib.ones(2, dtype=lib.float64, requires_grad=True)
    if any_dtype:
        x.grad_dtype = None
    try:
        x.grad = make(lib)
    except (TypeError, RuntimeError) as exc:
        return (_kind(exc), str(exc))
    g = x.grad
    return ("ok", None if g is None else (np.asarray(g.numpy()).tolist(), str(g.dtype)))


def _kind(exc: Exception) -> str:
    return "TypeError" if isinstance(exc, TypeError) else "RuntimeError"


@pytest.mark.parametrize("any_dtype", [False, True], ids=["default", "grad_dtype_none"])
@pytest.mark.parametrize("name", VALUES)
def test_assigning_grad_as_pytorch(name: str, any_dtype: bool) -> None:
    assert _assign(agrad, VALUES[name], any_dtype) == _assign(torch, VALUES[name], any_dtype)


def test_grad_dtype_defaults_to_the_dtype_and_is_for_leaves_only() -> None:
    for lib in (torch, agrad):
        x = lib.ones(2, dtype=lib.float32, requires_grad=True)
        assert str(x.grad_dtype) == "torch.float32"
        x.grad_dtype = None
        assert x.grad_dtype is None
    ours, theirs = agrad.ones(2, requires_grad=True) * 2, torch.ones(2, requires_grad=True) * 2
    for verb, action in [("get", lambda y: y.grad_dtype), ("set", _set_none)]:
        with pytest.raises(RuntimeError) as a:
            action(ours)
        with pytest.raises(RuntimeError) as b:
            action(theirs)
        assert str(a.value) == str(b.value), verb


def _set_none(y: Any) -> None:
    y.grad_dtype = None


def test_a_grad_dtype_agrad_cannot_honour_is_refused() -> None:
    # PyTorch casts incoming gradients to grad_dtype; agrad's engine does not, so it refuses
    # rather than hand back gradients of another dtype than asked for.
    x = agrad.ones(2, dtype=agrad.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="grad_dtype"):
        x.grad_dtype = agrad.float32
    x.grad_dtype = agrad.float64  # its own dtype: fine
    assert str(x.grad_dtype) == "torch.float64"
