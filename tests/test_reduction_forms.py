"""Reductions called the ways PyTorch code calls them, against PyTorch (QA round 15):

- var/std (and var_mean/std_mean) positionally: ``std(x, 1, False)`` is the population
  std (PyTorch's ``(input, dim, unbiased, keepdim)``), ``std(x, False)`` too; agrad read the
  third argument as keepdim and returned the sample std, a wrong number in silence;
- no axes given (``dim=()``, ``dim=[]``) reduces every axis, as PyTorch's reductions do
  (NumPy's reduce none; agrad returned the input unchanged).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

X = [[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]]

SPREAD_CALLS = [
    ((1, False), {}),
    ((1, True), {}),
    ((False,), {}),
    ((True,), {}),
    ((0, True, True), {}),
    ((0, False, False), {}),
    ((1,), {"keepdim": True}),
    ((), {"dim": 1, "correction": 0}),
    ((), {"dim": 0, "unbiased": False, "keepdim": True}),
    ((1, False), {"keepdim": True}),
]


def _values(result):
    items = result if isinstance(result, tuple) else (result,)
    return [(tuple(t.shape), np.asarray(t.detach()).tolist()) for t in items]


@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
@pytest.mark.parametrize(("args", "kwargs"), SPREAD_CALLS, ids=str)
def test_spreads_take_pytorchs_positional_forms(name, args, kwargs):
    torch = require_torch()
    got = []
    for lib in (torch, agrad):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        result = getattr(lib, name)(x, *args, **kwargs)
        first = result[0] if isinstance(result, tuple) else result
        first.sum().backward()
        got.append((_values(result), np.asarray(x.grad).tolist()))
    (theirs, their_grad), (ours, our_grad) = got
    assert [s for s, _ in ours] == [s for s, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12)


def test_a_third_positional_that_is_not_unbiased_is_refused():
    torch = require_torch()
    for lib in (torch, agrad):
        with pytest.raises(TypeError):
            lib.std(lib.tensor(X, dtype=lib.float64), 1, 0)


@pytest.mark.parametrize("dim", [(), []], ids=["tuple", "list"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "std", "var", "norm"])
def test_no_axes_given_reduces_them_all(name, dim, keepdim):
    torch = require_torch()
    got = []
    for lib in (torch, agrad):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(x, dim=dim, keepdim=keepdim)
        if lib is torch and name in ("std", "var"):
            # (PyTorch's backward divides by n - 1 with n = 1 there: inf and nan; the
            # gradient of the value it gives is its gradient over every axis)
            getattr(lib, name)(x).sum().backward()
        else:
            y.sum().backward()
        got.append((tuple(y.shape), np.asarray(y.detach()).tolist(), np.asarray(x.grad).tolist()))
    (shape_t, value_t, grad_t), (shape_a, value_a, grad_a) = got
    assert shape_a == shape_t
    np.testing.assert_allclose(value_a, value_t, rtol=1e-12)
    np.testing.assert_allclose(grad_a, grad_t, rtol=1e-12)


def test_the_language_reduces_every_axis_for_an_empty_axis_list(cli):
    import json

    r = cli(["eval", "sum(X, axis=[])", "--set", "X=[[1,2,4],[3,5,9]]", "--format", "json"])
    assert r.code == 0 and json.loads(r.out)["value"] == 24


def test_norm_takes_fro_and_refuses_other_strings_cleanly():
    torch = require_torch()
    got = []
    for lib in (torch, agrad):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        y = lib.norm(x, "fro")
        y.backward()
        got.append((float(y.detach()), np.asarray(x.grad).tolist()))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12)
    from agrad.errors import AgradValueError

    with pytest.raises(AgradValueError, match="not supported"):
        agrad.norm(agrad.tensor(X), "nuc")
