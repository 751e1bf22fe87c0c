"""Chains of in-place ops, into a tensor or through its views, where a later op's
derivative is infinite at a value an earlier write put there (sqrt_ after clamp_ at 0):
the overwritten values' gradient is 0 in PyTorch (CopySlices zeroes the slice; clamp's
rule is a where), never inf * 0 = nan. Against PyTorch, every chain through every route.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()

X0 = np.array([[0.3, 0.9, -0.2], [-0.7, 1.4, 0.0]])

ROUTES = {
    "direct": lambda y: y,
    "view": lambda y: y.view(6),
    "reshape": lambda y: y.reshape(3, 2),
    "transpose": lambda y: y.t(),
    "slice": lambda y: y[:, 1:],
    "select": lambda y: y[1],
    "diagonal": lambda y: y.diagonal(),
    "view_of_view": lambda y: y.t()[1:].unsqueeze(0),
    "unfold": lambda y: y.unfold(1, 1, 2),
}

CHAINS = {
    "clamp_sqrt": lambda v: v.clamp_(min=0.0).sqrt_(),
    "relu_sqrt": lambda v: v.relu_().sqrt_(),
    "zero_sqrt": lambda v: v.zero_().sqrt_(),
    "fill_log": lambda v: v.fill_(0.0).log_(),
    "setitem_sqrt": lambda v: (v.__setitem__(0, 0.0), v.sqrt_()),
    "masked_fill_reciprocal": lambda v: v.masked_fill_(v.detach() < 0.5, 0.0).reciprocal_(),
    "clamp_rsqrt": lambda v: v.clamp_(min=0.0).rsqrt_(),
    "inf_fill": lambda v: (v.div_(0.0), v.fill_(1.0)),
    "mul_zero_sqrt": lambda v: v.mul_(0.0).sqrt_(),
}


def _run(lib, route, chain):
    x = lib.tensor(X0, dtype=lib.float64, requires_grad=True)
    y = x.clone()
    CHAINS[chain](ROUTES[route](y))
    weights = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
    ((y + 1).log() * weights).sum().backward()
    return y.detach().numpy().copy(), x.grad.numpy().copy()


def _outcome(lib, route, chain):
    try:
        return _run(lib, route, chain)
    except Exception as exc:  # noqa: BLE001 - PyTorch's refusals are RuntimeErrors
        return exc


@pytest.mark.parametrize("chain", sorted(CHAINS))
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_inplace_chains_through_every_route_match_pytorch(route, chain):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ours = _outcome(agrad, route, chain)
    theirs = _outcome(torch, route, chain)
    if isinstance(theirs, Exception):  # relu_ saves its output: sqrt_ of it is refused
        assert isinstance(ours, Exception), f"{route}.{chain}: PyTorch refuses ({theirs})"
        return
    assert not isinstance(ours, Exception), f"{route}.{chain}: {ours!r}"
    for name, a, b in zip(("y", "x.grad"), ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=f"{route}.{chain}: {name}")


def test_an_overwritten_element_gets_zero_even_for_an_infinite_cotangent():
    for lib in (agrad, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x * 1.0
        y[0] = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            (g,) = lib.autograd.grad(y.sqrt().sum(), x)
        # 0, not nan (0 · inf); the other within an ulp (PyTorch's vectorised sqrt
        # backward rounds differently on some CPUs)
        assert g.tolist()[0] == 0.0, lib.__name__
        assert g.tolist()[1] == pytest.approx(0.5 / 2.0**0.5, rel=1e-15), lib.__name__
