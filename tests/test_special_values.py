"""Every elementwise op of the table at special values, against PyTorch: zeros of both
signs, ±1, a tiny and a huge magnitude, nan and ±inf, and for binary ops every pair of them (0**0,
0/0, x**0 at 0, ties of maximum/minimum, ...). Values and both gradients must agree,
nan with nan and inf with inf: a 0·inf in a rule shows here as nan where PyTorch has a
number."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from conftest import require_torch
from opinfo import torch_fn

import agrad
from agrad.engine.ops import TABLE
from agrad.engine.ops.core import apply, broadcast_shape, same_shape

NONFINITE = (np.nan, np.inf, -np.inf)
POINTS = (0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-300, 30.0, -30.0, 800.0, -800.0)
POINTS += NONFINITE
PAIRS = tuple(
    itertools.product((0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1e-300, 800.0, *NONFINITE), repeat=2)
)
# Elementwise entries, by their shape rule (whatever family made their public face);
# those that need a parameter (pow_scalar's exponent, clip's bounds) are covered by their
# generated tests.
UNARIES = [
    op for op in TABLE.values()
    if op.vjp is not None and op.arity == 1 and op.shape_rule is same_shape
    and op.name not in ("pow_scalar", "rpow", "rsub", "clone", "astype", "clip")
]  # fmt: skip
BINARIES = [
    op for op in TABLE.values()
    if op.vjp is not None and op.arity == 2 and op.shape_rule is broadcast_shape
]  # fmt: skip


def _ours(op, values, params):
    xs = [agrad.tensor(np.array(v), requires_grad=True) for v in values]
    out = apply(op, *xs, **params)
    grads = agrad.autograd.grad(out, xs, allow_unused=True)
    return [float(out.data)] + [0.0 if g is None else float(g.data) for g in grads]


def _theirs(torch, op, values, params):
    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = torch_fn(op.name)(torch, *xs, **params)
    grads = torch.autograd.grad(out, xs, allow_unused=True)
    return [float(out)] + [0.0 if g is None else float(g) for g in grads]


def _disagreements(op, points, params=None):
    params = params or {}
    torch = require_torch()
    bad = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for values in points:
            ours, theirs = _ours(op, values, params), _theirs(torch, op, values, params)
            for a, b in zip(ours, theirs, strict=True):
                if not (np.isnan(a) and np.isnan(b)) and not (
                    a == b or abs(a - b) <= 1e-9 * max(1.0, abs(b))
                ):
                    bad.append((values, ours, theirs))
                    break
    return bad


@pytest.mark.parametrize("op", UNARIES, ids=[op.name for op in UNARIES])
def test_unary_op_at_special_values_as_pytorch(op):
    assert _disagreements(op, [(p,) for p in POINTS]) == []


@pytest.mark.parametrize("op", BINARIES, ids=[op.name for op in BINARIES])
def test_binary_op_at_every_pair_of_special_values_as_pytorch(op):
    assert _disagreements(op, PAIRS) == []


# The entries with a parameter, over the parameter's special values too (x**-0.5 at -inf:
# PyTorch's rsqrt gives nan where NumPy's power gives 0; 0**x at a nan exponent).
PARAMETRISED = [
    ("pow_scalar", {"exponent": e}) for e in (2.0, 3.0, 0.5, -0.5, -1.0, 0.0, 1 / 3, 2.5, -2.0)
] + [("rpow", {"base": b}) for b in (2.0, 0.0, 0.5, 1.0)]


@pytest.mark.parametrize(
    "name, params", PARAMETRISED, ids=[f"{n}-{next(iter(p.values())):.3g}" for n, p in PARAMETRISED]
)
def test_parametrised_op_at_special_values_as_pytorch(name, params):
    assert _disagreements(TABLE[name], [(p,) for p in POINTS], params) == []
