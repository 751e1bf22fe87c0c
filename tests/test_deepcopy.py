"""copy.deepcopy of tensors, Parameters and modules as PyTorch's: a Parameter's copy starts
without .grad (a plain leaf's keeps it), values are independent of the original, and a
deep-copied model (a target network, an EMA copy) trains to PyTorch's numbers — before, the
copy carried the original's gradient into its first backward (found by the nn helper)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")


def test_a_parameter_copy_has_no_grad_a_tensor_copy_keeps_it():
    for lib in (agrad, torch):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        t = lib.ones(2, dtype=lib.float64, requires_grad=True)
        ((p * 2).sum() + (t * 3).sum()).backward()
        q, u = copy.deepcopy(p), copy.deepcopy(t)
        assert q.grad is None and isinstance(q, lib.nn.Parameter) and q.requires_grad
        np.testing.assert_array_equal(u.grad.numpy(), [3.0, 3.0])
        with lib.no_grad():
            q.add_(1.0)
        np.testing.assert_array_equal(p.detach().numpy(), [1.0, 1.0])  # independent values


def _target_network_run(lib):
    """A DQN-style loop: the online net learns towards a deep-copied target net."""
    lib.manual_seed(0)
    net = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        net.weight.copy_(lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3)))
        net.bias.copy_(lib.tensor([0.1, -0.2]))
    x = lib.tensor(np.cos(np.arange(12.0)).reshape(4, 3))
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    net(x).sum().backward()  # a gradient present when the copy is made
    target = copy.deepcopy(net)
    opt.zero_grad()
    for _ in range(3):
        loss = ((net(x) - target(x).detach()) ** 2 + net(x)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    target(x).sum().backward()
    return net.weight.detach().numpy(), target.weight.grad.numpy()


def test_a_deep_copied_model_trains_as_pytorchs():
    mine, theirs = _target_network_run(agrad), _target_network_run(torch)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
