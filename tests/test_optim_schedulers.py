"""AdamW, RMSprop, Adagrad, parameter groups and the learning-rate schedulers against
torch.optim: the same trajectories on a curved loss (float64, to 1e-12)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

START = [0.5, -1.5, 2.0]


def _loss(lib, p):
    return (p**4 - 3 * p**2 + p * lib.tensor([1.0, -2.0, 0.5])).sum()


def trajectory(lib, make_optimizer, make_scheduler=None, steps=12):
    p = lib.tensor(START, dtype=lib.float64, requires_grad=True)
    optimizer = make_optimizer(lib, [p])
    scheduler = make_scheduler(lib, optimizer) if make_scheduler else None
    out = []
    for _ in range(steps):
        optimizer.zero_grad()
        _loss(lib, p).backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
            out.append(scheduler.get_last_lr()[0])
        out.extend(p.detach().tolist())
    return out


OPTIMIZERS = {
    "adamw": lambda t, ps: t.optim.AdamW(ps, lr=0.05),
    "adamw_amsgrad": lambda t, ps: t.optim.AdamW(ps, lr=0.05, weight_decay=0.3, amsgrad=True),
    "rmsprop": lambda t, ps: t.optim.RMSprop(ps, lr=0.01),
    "rmsprop_centered_momentum": lambda t, ps: t.optim.RMSprop(
        ps, lr=0.01, momentum=0.9, centered=True, weight_decay=0.1
    ),
    "adagrad": lambda t, ps: t.optim.Adagrad(ps, lr=0.1),
    "adagrad_decay": lambda t, ps: t.optim.Adagrad(
        ps, lr=0.1, lr_decay=0.05, weight_decay=0.01, initial_accumulator_value=0.5
    ),
}
SCHEDULERS = {
    "step": lambda t, o: t.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda t, o: t.optim.lr_scheduler.MultiStepLR(o, [2, 5, 5], gamma=0.3),
    "exponential": lambda t, o: t.optim.lr_scheduler.ExponentialLR(o, gamma=0.8),
    "cosine": lambda t, o: t.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.001),
    "lambda": lambda t, o: t.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_pytorch(name):
    torch = require_torch()
    expected = trajectory(torch, OPTIMIZERS[name])
    np.testing.assert_allclose(trajectory(agrad, OPTIMIZERS[name]), expected, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_scheduler_matches_pytorch(name):
    # Cosine over 12 steps with T_max=4 crosses the bottom and climbs again (both branches).
    torch = require_torch()
    sgd = lambda t, ps: t.optim.SGD(ps, lr=0.05, momentum=0.5)  # noqa: E731
    expected = trajectory(torch, sgd, SCHEDULERS[name])
    np.testing.assert_allclose(trajectory(agrad, sgd, SCHEDULERS[name]), expected, rtol=1e-12)


def test_add_param_group_matches_pytorch_and_refuses_duplicates():
    torch = require_torch()
    results = []
    for lib in (torch, agrad):
        a = lib.tensor([1.0, -1.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([2.0], dtype=lib.float64, requires_grad=True)
        optimizer = lib.optim.Adam([a], lr=0.1)
        optimizer.add_param_group({"params": b, "lr": 0.3, "betas": (0.5, 0.9)})
        for _ in range(4):
            optimizer.zero_grad()
            ((a**2).sum() + (b**3).sum()).backward()
            optimizer.step()
        results.append([a.tolist(), b.tolist(), optimizer.param_groups[1]["lr"]])
        with pytest.raises(ValueError, match="more than one parameter group"):
            optimizer.add_param_group({"params": [a]})
    np.testing.assert_allclose(np.hstack(results[1][:2]), np.hstack(results[0][:2]), rtol=1e-12)
    assert results[1][2] == results[0][2]
