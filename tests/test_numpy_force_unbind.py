"""Tensor.numpy(force=True) and Tensor.unbind / agrad.unbind, as PyTorch's: force gives
the data of a tensor that requires grad (shared memory, as detach().numpy()); unbind
returns views (shared storage, UnbindBackward0) whose gradients reach the input."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()


@pytest.mark.parametrize("lib", [agrad, torch], ids=lambda m: m.__name__)
def test_numpy_force_on_a_tensor_that_requires_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        y.numpy()
    a = y.numpy(force=True)
    assert a.tolist() == [3.0, 6.0]
    assert np.shares_memory(a, y.detach().numpy())
    assert x.numpy(force=True).tolist() == [1.0, 2.0]
    assert lib.tensor([4.0]).numpy(force=False).tolist() == [4.0]
    with pytest.raises(TypeError):
        y.numpy(True)  # (keyword-only, as PyTorch)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_unbind_values_views_and_gradients_match_pytorch(dim):
    results = []
    for lib in (agrad, torch):
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4) / 5, dtype=lib.float64,
                       requires_grad=True)  # fmt: skip
        y = x * 1.0
        for pieces in (y.unbind(dim), lib.unbind(y, dim), lib.unbind(y, dim=dim)):
            assert all(type(p.grad_fn).__name__ == "UnbindBackward0" for p in pieces)
            assert all(p._base is y for p in pieces)
        pieces = y.unbind(dim)
        loss = sum(((k + 1) * p.sin()).sum() for k, p in enumerate(pieces))
        loss.backward()
        results.append(([p.detach().numpy().copy() for p in pieces], x.grad.numpy().copy()))
    (ours, g_ours), (theirs, g_theirs) = results
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-12)


def test_unbind_refusals_match_pytorch():
    for lib in (agrad, torch):
        x = lib.zeros(2, 3)
        with pytest.raises((IndexError, RuntimeError)):
            x.unbind(2)
        with pytest.raises((IndexError, RuntimeError)):
            lib.tensor(1.0).unbind()
        y = lib.zeros(2, 3, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
            y.unbind()[1].mul_(2)
