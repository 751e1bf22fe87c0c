"""torch.autograd.functional's strict=True and create_graph=True against PyTorch.

Every function (jacobian, hessian, vjp, jvp, vhp) on functions that break strict mode in
each way PyTorch distinguishes — an unused input, a constant output, a linear function (its
Jacobian does not depend on the input), a nonlinear one that is fine — with strict and
create_graph on and off: the same error text or the same numbers, and the same
requires_grad on what comes back.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

FUNCTIONS = {
    "unused_input": lambda x, y: (x * x).sum() * 2,
    "linear": lambda x, y: (3 * x + 2 * y).sum(),
    "constant": lambda x, y: x.detach().sum() * 0,
    "nonlinear": lambda x, y: (x.sin() * y * y).sum(),
}


def _call(lib: Any, api: str, fn: Any, strict: bool, create_graph: bool) -> Any:
    x = lib.tensor([0.5, -1.0], dtype=lib.float64)
    y = lib.tensor([2.0, 0.25], dtype=lib.float64)
    v = lib.tensor([1.5, -0.5], dtype=lib.float64)
    F = lib.autograd.functional
    kw = {"strict": strict, "create_graph": create_graph}
    if api == "jacobian":
        return F.jacobian(fn, (x, y), **kw)
    if api == "hessian":
        return F.hessian(fn, (x, y), **kw)
    if api == "vjp":
        return F.vjp(fn, (x, y), lib.tensor(1.0, dtype=lib.float64), **kw)
    if api == "jvp":
        return F.jvp(fn, (x, y), (v, v * 2), **kw)
    return F.vhp(fn, (x, y), (v, v * 2), **kw)


def _observed(lib: Any, *args: Any) -> Any:
    try:
        result = _call(lib, *args)
    except RuntimeError as exc:
        return ("error", str(exc))
    return ("ok", _flatten(result))


def _flatten(result: Any) -> list:
    if isinstance(result, (tuple, list)):
        return [item for r in result for item in _flatten(r)]
    return [(np.asarray(result.detach().numpy()).tolist(), bool(result.requires_grad))]


CASES = list(
    itertools.product(["jacobian", "hessian", "vjp", "jvp", "vhp"], FUNCTIONS, [False, True],
                      [False, True])
)  # fmt: skip


@pytest.mark.parametrize(("api", "name", "strict", "create_graph"), CASES)
def test_strict_and_create_graph_as_pytorch(api, name, strict, create_graph) -> None:
    fn = FUNCTIONS[name]
    expected = _observed(torch, api, fn, strict, create_graph)
    actual = _observed(agrad, api, fn, strict, create_graph)
    assert actual[0] == expected[0], (expected, actual)
    if expected[0] == "error":
        assert actual[1] == expected[1]
    else:
        assert len(actual[1]) == len(expected[1])
        for (a, a_rg), (e, e_rg) in zip(actual[1], expected[1], strict=True):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-14)
            assert a_rg == e_rg


def test_vjp_with_create_graph_returns_an_output_in_the_graph() -> None:
    # PyTorch's vjp docstring example: exp_reducer's output keeps grad_fn=<SumBackward1>.
    x = agrad.rand(4, 4, dtype=agrad.float64)
    out, v = agrad.autograd.functional.vjp(
        lambda t: t.exp().sum(dim=1), x, agrad.ones(4, dtype=agrad.float64), create_graph=True
    )
    assert out.grad_fn is not None and out.grad_fn.name() == "SumBackward1" and v.requires_grad
