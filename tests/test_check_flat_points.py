"""Right gradients at points where float64 cannot see the function move must not fail.

sum(tanh(x)) at x = [20, -20]: tanh(±20) rounds to ±1, so autograd's rule 1 - tanh(x)² is
exactly 0 (PyTorch's too), while the complex step gives the exact 1.7e-17. The claim's
rounding floor is 4 ulps of |f| per unit of x, and here f cancels to 0, so the floor was 0
and a right gradient failed as "the rule is wrong" (QA, 2026-12-02). Where f does not move
at all in float64 along an element (f(x ± h) == f(x), bit for bit, at the ladder's first
step), a claim of rounding size is right, as it already was for finite differences.

std at a constant vector is a true kink (std(c + h·e) = |h|·const): the one-sided
derivatives are ±const and each converges, so it is a kink (a valid subgradient, 0 as
PyTorch gives, passes with a note), not "a kink closer than any step".

Oracles: PyTorch for the claims; algebra for the truths.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from agrad.check import check_numpy


@pytest.mark.parametrize("x", ["[20,-20]", "[30,-30,5]", "[40,-40]"])
def test_saturated_terms_that_cancel_pass(x, check_json):
    torch = pytest.importorskip("torch")
    t = torch.tensor(json.loads(x), dtype=torch.float64, requires_grad=True)
    torch.tanh(t).sum().backward()
    assert (t.grad[:2] == 0).all()  # the claim PyTorch makes too
    report = check_json("sum(tanh(x))", "--wrt", "x", "--set", f"x={x}")
    assert report["ok"], report["variables"]["x"]["verdict"]


@pytest.mark.parametrize("wrong", ["0*x + 1e-3", "0*x + 1e-9", "0*x - 1e-12"])
def test_a_claim_above_rounding_at_a_flat_point_still_fails(wrong, check_json):
    report = check_json(
        "sum(tanh(x))", "--wrt", "x", "--set", "x=[20,-20]", "--expect", f"x={wrong}"
    )
    assert not report["ok"]


def test_a_function_that_moves_keeps_the_exact_floor(check_json):
    # f = 1e-20·sum(x²) is tiny but moves in float64: a 2x wrong gradient of size 4e-20
    # is far below any absolute floor and must still fail.
    report = check_json(
        "1e-20*sum(x**2)", "--wrt", "x", "--set", "x=[1,-2]", "--expect", "x=4e-20*x"
    )
    assert not report["ok"]
    right = check_json("1e-20*sum(x**2)", "--wrt", "x", "--set", "x=[1,-2]")
    assert right["ok"]


@pytest.mark.parametrize("x", [[1.0, 1.0, 1.0], [-2.5, -2.5], [0.0, 0.0, 0.0, 0.0]])
def test_std_at_a_constant_vector_is_a_kink(x, check_json):
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    t.std().backward()
    claim = t.grad.numpy()  # PyTorch's subgradient: 0
    n = len(x)

    def std(x):
        return np.std(x, ddof=1)

    report = check_numpy(std, lambda x: claim, {"x": np.array(x)})
    v = report.variables["x"]
    assert report.ok and v.verdict == "kink", (v.verdict, v.counts())
    # each one-sided derivative along e_i is ±sqrt((n-1)/n)/sqrt(n-1) = ±1/sqrt(n):
    # a claim outside that interval is no subgradient
    outside = np.full(n, 1.5 / np.sqrt(n))
    bad = check_numpy(std, lambda x: outside, {"x": np.array(x)})
    assert not bad.ok
    language = check_json("std(x)", "--wrt", "x", "--set", f"x={x}")
    assert language["ok"] and language["variables"]["x"]["verdict"] == "kink"


@pytest.mark.parametrize("claim", ["[1e-6,-1e-8]", "[1e-6,2e-8]", "[1e-6,0]", "[1e-6,1e-3]"])
def test_the_flat_allowance_does_not_grow_with_another_element(claim, check_json):
    # f = 1e-6·x0 + 1e-8·x1 at x = [1e12, 1]: f ~ 1e6 does not move at x1's first step, and
    # an allowance of 64 ulps·max|x| (0.014, from x0) passed every one of these (QA)
    report = check_json("sum(x*[1e-6,1e-8])", "--wrt", "x", "--set", "x=[1e12,1]",
                        "--expect", f"x={claim}")  # fmt: skip
    assert not report["ok"]
    right = check_json("sum(x*[1e-6,1e-8])", "--wrt", "x", "--set", "x=[1e12,1]")
    assert right["ok"]


@pytest.mark.parametrize("leak", [0.01, -0.01, 1e-3])
def test_a_wrong_rule_where_f_is_zero_fails_beside_a_large_element(leak):
    torch = pytest.importorskip("torch")
    import agrad

    def relu_sum(lib, extra):
        class Relu(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return lib.relu(x).sum()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ((x > 0).to(x.dtype) + extra)

        return Relu.apply

    for lib in (agrad, torch):  # PyTorch's gradcheck, the oracle, fails it too
        x = lib.tensor([-1e12, -1.0], dtype=lib.float64, requires_grad=True)
        for fast in (False, True):
            passed = lib.autograd.gradcheck(
                relu_sum(lib, leak), (x,), fast_mode=fast, raise_exception=False
            )
            assert not passed, (lib.__name__, fast)
