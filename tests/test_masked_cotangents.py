"""A rule that masks its gradient (relu, clamp, maximum, the zero-gradient steps) gives 0
where it masks, whatever arrives: a nan or inf cotangent times a 0 mask is nan, which
PyTorch's where-based rules never give (found by the nn helper through lp_pool). Also
next_functions lists no edge for an operand that never gets a gradient (where's
condition), as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

X = [-1.5, 0.0, 0.5, 1.0, 2.0, np.nan]
CASES = {
    "relu": lambda t, x: t.relu(x),
    "sign": lambda t, x: t.sign(x),
    "floor": lambda t, x: t.floor(x),
    "ceil": lambda t, x: t.ceil(x),
    "round": lambda t, x: t.round(x),
    "trunc": lambda t, x: t.trunc(x),
    "clamp": lambda t, x: x.clamp(0.0, 1.0),
    "clamp_min": lambda t, x: x.clamp(min=0.5),
    "maximum": lambda t, x: t.maximum(x, t.full_like(x, 0.5)),
    "minimum": lambda t, x: t.minimum(x, t.full_like(x, 1.0)),
    "where": lambda t, x: t.where(x > 0.7, x, t.zeros_like(x)),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x),
    "relu6": lambda t, x: t.nn.functional.relu6(x),
}
COTANGENTS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}


@pytest.mark.parametrize("cotangent", list(COTANGENTS))
@pytest.mark.parametrize("name", list(CASES))
def test_masked_rules_give_pytorchs_gradient_for_non_finite_cotangents(name, cotangent):
    grads = []
    for lib in (agrad, torch):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        y = CASES[name](lib, x)
        y.backward(lib.full_like(y, COTANGENTS[cotangent]))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_create_graph_through_a_zero_rule_still_records():
    x = agrad.tensor([0.3, 1.7], requires_grad=True)
    (g,) = agrad.autograd.grad((agrad.floor(x) * x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), np.floor([0.3, 1.7]))
    assert g.requires_grad


def _edges(lib, fn):
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    return [None if n is None else type(n).__name__ for n, _ in fn(lib, x).grad_fn.next_functions]


@pytest.mark.parametrize(
    "fn",
    [lambda t, x: t.where(x > 0, x, x * 2), lambda t, x: t.where(x > 0, x, t.zeros(2)),
     lambda t, x: t.where(x > 0, 3 * x, x.exp())],
)  # fmt: skip
def test_where_lists_no_edge_for_its_condition(fn):
    assert _edges(agrad, fn) == _edges(torch, fn)
