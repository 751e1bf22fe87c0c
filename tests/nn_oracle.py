"""PyTorch as the oracle for agrad.nn modules: build the same module in both libraries, copy
torch's parameters and buffers into agrad's, run both on the same inputs, and compare the
outputs, every input's gradient, every parameter's gradient and every buffer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import agrad


def copy_state(torch_module: Any, agrad_module: Any) -> None:
    """torch's parameters and buffers into agrad's module, by name (shapes must agree)."""
    state = {k: v.detach().numpy().copy() for k, v in torch_module.state_dict().items()}
    assert set(state) == set(agrad_module.state_dict()), (
        sorted(state),
        sorted(agrad_module.state_dict()),
    )
    agrad_module.load_state_dict({k: agrad.tensor(v) for k, v in state.items()})


def _leaves(lib: Any, arrays: Sequence[Any]) -> list[Any]:
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            out.append(lib.tensor(a, requires_grad=True))
        elif isinstance(a, np.ndarray):
            out.append(lib.tensor(a))
        else:
            out.append(a)
    return out


def _flat(result: Any) -> list[Any]:
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return [] if result is None else [result]


def run(lib: Any, module: Any, arrays: Sequence[Any], call: Callable | None, seed: int) -> dict:
    inputs = _leaves(lib, arrays)
    result = call(module, *inputs) if call else module(*inputs)
    outs = [o for o in _flat(result) if o.dtype.is_floating_point]
    rng = np.random.default_rng(seed)
    loss = 0
    for o in outs:
        weights = lib.tensor(rng.standard_normal(tuple(o.shape)).astype(o.detach().numpy().dtype))
        loss = loss + (o * weights).sum()
    if any(o.requires_grad for o in outs):
        loss.backward()
    grads = {
        f"input{i}": t.grad.numpy()
        for i, t in enumerate(inputs)
        if hasattr(t, "grad") and getattr(t, "requires_grad", False) and t.grad is not None
    }
    grads.update({n: p.grad.numpy() for n, p in module.named_parameters() if p.grad is not None})
    return {
        "outs": [o.detach().numpy() for o in outs],
        "grads": grads,
        "buffers": {n: b.detach().numpy() for n, b in module.named_buffers()},
    }


def compare(
    torch_module: Any,
    agrad_module: Any,
    arrays: Sequence[Any],
    call: Callable | None = None,
    tol: float = 1e-10,
    seed: int = 0,
) -> dict:
    """Copy torch's state into agrad's module, run both, assert agreement; return agrad's."""
    copy_state(torch_module, agrad_module)
    import torch  # noqa: PLC0415 - the oracle is optional

    got = run(agrad, agrad_module, arrays, call, seed)
    want = run(torch, torch_module, arrays, call, seed)
    assert len(got["outs"]) == len(want["outs"])
    for g, w in zip(got["outs"], want["outs"], strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    assert set(got["grads"]) == set(want["grads"]), (sorted(got["grads"]), sorted(want["grads"]))
    for name, w in want["grads"].items():
        np.testing.assert_allclose(got["grads"][name], w, rtol=tol, atol=tol, err_msg=name)
    for name, w in want["buffers"].items():
        np.testing.assert_allclose(got["buffers"][name], w, rtol=tol, atol=tol, err_msg=name)
    return got
