"""Three classes of wrong verdicts a QA pass found (2026-12-02), each against an oracle.

- A small element beside a large one in the same output row, checked by finite
  differences: the claim passed within 1e-9 of the row's scale, so dropping 2e-3 beside
  1e7 (or being 0.9% wrong there) passed; the finite differences resolve it to 1e-16.
  Oracle: algebra, and PyTorch's gradcheck, which fails these.
- An odd function about the point (sin(k·x) at 0): its one-sided gap is exactly 0 at
  every step, so steps far too coarse looked settled ("flat"): right gradients were
  undecided for k >= 1e3 and "wrong" for k = 1e5. Oracle: algebra (k·f'(k·x)).
- Saturated elementwise rules (sigmoid at 30, tanh at 15 beside 100, softmax at [30, 0,
  1]) round to ulps of f; the allowance was ulps of f over the variable's largest |x|, and
  the cotangent test allowed no rounding at all. Oracle: PyTorch's gradients of the same
  ops (bit for bit what agrad computes) and its gradcheck, which passes them.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad.check import check_numpy


@pytest.mark.parametrize(
    "big, factor, ok",
    [(b, f, ok) for b in (1e4, 1e7) for f, ok in ((0.0, False), (1.009, False),
                                                  (1 + 1e-4, False), (1.0, True))]
    # (beside 1e10, 1e-12 of the row's scale is 1e-2: only the dropped term is caught)
    + [(1e10, 0.0, False), (1e10, 1.0, True)],
)  # fmt: skip
def test_a_small_element_beside_a_large_one_is_compared_by_finite_differences(big, factor, ok):
    report = check_numpy(lambda x: big * x[0] + 0.25 * x[1] ** 2,
                         lambda x: np.array([big, 0.5 * x[1] * factor]),
                         {"x": np.array([0.0, 2.0])})  # fmt: skip
    assert report.ok is ok


def test_a_custom_function_dropping_a_small_term_fails_as_in_pytorch():
    torch = require_torch()

    def make(lib):
        class Dropped(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 1e7 * x[0] + 1e-3 * x[1] ** 2

            @staticmethod
            def backward(ctx, g):
                return g * lib.tensor([1e7, 0.0], dtype=lib.float64)

        return Dropped.apply

    x = [0.0, 1.0]
    ours = agrad.autograd.gradcheck(make(agrad), (agrad.tensor(x, requires_grad=True),),
                                    raise_exception=False)  # fmt: skip
    theirs = torch.autograd.gradcheck(make(torch), (torch.tensor(x, dtype=torch.float64,
                                      requires_grad=True),), raise_exception=False)  # fmt: skip
    assert ours is theirs is False


ODD = {
    "sin": (np.sin, np.cos),
    "tanh": (np.tanh, lambda u: 1 - np.tanh(u) ** 2),
    "arctan": (np.arctan, lambda u: 1 / (1 + u**2)),
    "sigmoid": (lambda u: 1 / (1 + np.exp(-u)), lambda u: np.exp(-u) / (1 + np.exp(-u)) ** 2),
}


@pytest.mark.parametrize("name", sorted(ODD))
@pytest.mark.parametrize("k", [1e2, 1e3, 1e4, 1e5])
@pytest.mark.parametrize("where", [0.0, 0.3])
@pytest.mark.parametrize("factor, verdict", [(1.0, "pass"), (1 + 1e-3, "fail")])
def test_a_fast_function_about_its_centre_is_decided(name, k, where, factor, verdict):
    f, df = ODD[name]
    report = check_numpy(lambda x: f(k * x), lambda x: k * df(k * x) * factor,
                         {"x": np.array(where / k)})  # fmt: skip
    assert report.variables["x"].verdict == verdict


SATURATED = [
    ("sigmoid", [30.0]),
    ("sigmoid", [30.0, -30.0, 0.5]),
    ("tanh", [15.0, 100.0]),
    ("tanh", [19.0, -3.0, 40.0]),
    ("softmax", [30.0, 0.0, 1.0]),
    ("weighted softmax", [30.0, 0.0, 1.0]),
]


def _op(lib, name):
    if name == "weighted softmax":
        return lambda x: (lib.softmax(x, dim=0) * lib.tensor([1.0, 2.0, 3.0])).sum()
    if name == "softmax":
        return lambda x: lib.softmax(x, dim=0)
    return getattr(lib, name)


@pytest.mark.parametrize("name, x", SATURATED, ids=[f"{n}{x}" for n, x in SATURATED])
def test_saturated_rules_pass_as_pytorch_computes_and_passes_them(name, x):
    torch = require_torch()
    ours_x = agrad.tensor(x, dtype=agrad.float64, requires_grad=True)
    theirs_x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    _op(agrad, name)(ours_x).sum().backward()
    _op(torch, name)(theirs_x).sum().backward()
    # The same numbers as PyTorch's (to a few ulps of f), so a pass is owed to both.
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-6, atol=1e-15)
    assert torch.autograd.gradcheck(_op(torch, name), (theirs_x.detach().requires_grad_(),))
    assert agrad.autograd.gradcheck(_op(agrad, name), (ours_x.detach().requires_grad_(),))


def test_random_saturated_points_pass_as_in_pytorch():
    torch = require_torch()
    rng = np.random.default_rng(9)
    for _ in range(40):
        x = rng.normal(0.0, 10.0, 5)
        assert torch.autograd.gradcheck(torch.tanh, (torch.tensor(x, requires_grad=True),))
        assert agrad.autograd.gradcheck(agrad.tanh, (agrad.tensor(x, requires_grad=True),)), x


@pytest.mark.parametrize("x", [[30.0, 0.5], [15.0, 100.0, 0.25]])
def test_a_wrong_element_beside_saturated_ones_still_fails(check_json, x):
    # d/dx tanh = 1 - tanh²: wrong by 1e-3 (relative) where it is not saturated.
    n = len(x)
    report = check_json("sum(tanh(x))", "--wrt", "x", "--set", f"x={x}",
                        "--expect", "x=(1 - tanh(x)**2) * (1 + 1e-3 * (x < 1))")  # fmt: skip
    assert report["ok"] is False, (n, report)
