"""--fast (gradcheck's fast_mode) must not pass a wrong output because it is small.

Random projections uᵀJv weigh each output by its scale: beside an output of size 1e6, a
50% wrong gradient of an output of size 1e-6 changes uᵀJv by 1e-12 of it, far inside any
tolerance, so it passed (QA, 2026-12-02; PyTorch's gradcheck passes it in both modes). Up
to 64 outputs are now each compared on their own along every random direction (one VJP an
output). Oracles: algebra (the exact Jacobian of each function below).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import agrad
from agrad.check.projections import EACH_ROW


class _TwoScales(agrad.autograd.Function):
    """[1e6·sum(x²), 1e-6·sum(sin x)], the second row's backward scaled by ``factor``."""

    factor = 1.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return agrad.stack([1e6 * (x**2).sum(), 1e-6 * x.sin().sum()])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g[0] * 2e6 * x + g[1] * 1e-6 * x.cos() * _TwoScales.factor


@pytest.mark.parametrize("factor", [1.0, 1.5, 1.01, -1.0, 0.0])
def test_fast_mode_catches_a_wrong_small_output(factor, monkeypatch):
    monkeypatch.setattr(_TwoScales, "factor", factor)
    x = agrad.tensor([0.3, -1.2, 2.0], dtype=agrad.float64, requires_grad=True)
    for fast in (False, True):
        passed = agrad.autograd.gradcheck(
            _TwoScales.apply, (x,), fast_mode=fast, raise_exception=False
        )
        assert passed == (factor == 1.0), (fast, factor)


def test_fast_mode_catches_a_wrong_small_output_of_a_tuple():
    def f(x):  # two outputs: 1e4·x² (right) and 1e-4·exp(x) with a gradient 2% off
        return (1e4 * x**2, _ScaledExp.apply(x))

    x = agrad.tensor([0.5, 1.5], dtype=agrad.float64, requires_grad=True)
    assert not agrad.autograd.gradcheck(f, (x,), fast_mode=True, raise_exception=False)


class _ScaledExp(agrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1e-4 * x.exp()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 1e-4 * x.exp() * 1.02


def test_the_cli_fast_check_names_the_output(cli, tmp_path):
    path = tmp_path / "two.py"
    path.write_text(
        textwrap.dedent(
            """
            import agrad as torch

            class Two(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return torch.stack([1e6 * (x**2).sum(), 1e-6 * x.sin().sum()])

                @staticmethod
                def backward(ctx, g):
                    (x,) = ctx.saved_tensors
                    return g[0] * 2e6 * x + g[1] * 1e-6 * x.cos() * 1.5

            def f(x):
                return Two.apply(x)
            """
        )
    )
    result = cli(["check", "--python", f"{path}:f", "--set", "x=[0.3,-1.2,2.0]", "--fast"])
    assert result.code == 1, result.out + result.err
    assert "at output (1,)" in result.out


def test_many_outputs_still_use_one_projection_each_direction():
    # beyond EACH_ROW outputs, one random u per direction (one VJP a direction): a wrong
    # rule of outputs of one scale is still caught
    n = EACH_ROW + 6
    w = np.linspace(0.5, 1.5, n)

    class Wrong(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.tanh() * agrad.tensor(w)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (1 - x.tanh() ** 2) * agrad.tensor(w) * 1.01

    x = agrad.tensor(np.linspace(-1, 1, n), dtype=agrad.float64, requires_grad=True)
    assert not agrad.autograd.gradcheck(Wrong.apply, (x,), fast_mode=True, raise_exception=False)


def _many(n: int, small_factor: float, offset: float = 0.0):
    """n outputs tanh(x)·w·1e6, and one more, offset + 1e-6·sin(x0), whose backward is
    scaled by ``small_factor``."""
    w = np.linspace(0.5, 1.5, n)

    class Many(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            big = x.tanh() * agrad.tensor(w) * 1e6
            return agrad.cat([big, offset + (x.sin() * 1e-6)[:1]])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            grad = g[:n] * 1e6 * (1 - x.tanh() ** 2) * agrad.tensor(w)
            small = agrad.zeros(n, dtype=x.dtype)
            small[0] = g[n] * 1e-6 * x[0].cos() * small_factor
            return grad + small

    return Many.apply


@pytest.mark.parametrize("factor", [1.0, 1.5, 0.0, -1.0])
def test_beyond_64_outputs_a_wrong_small_output_still_fails(factor):
    # one u a direction, each output weighed by the inverse of its size: the small one
    # counts as much as the large ones
    n = EACH_ROW + 6
    x = agrad.tensor(np.linspace(-1, 1, n), dtype=agrad.float64, requires_grad=True)
    passed = agrad.autograd.gradcheck(_many(n, factor), (x,), fast_mode=True, raise_exception=False)
    assert passed == (factor == 1.0)


def test_beyond_64_outputs_constant_and_swamped_outputs_do_not_spoil_a_right_check():
    # an output that does not change (a constant) or whose size swamps its change
    # (1e6 + 1e-6·sin) keeps the neutral weight: it adds no rounding, and a right
    # Jacobian passes
    n = EACH_ROW + 6
    x = agrad.tensor(np.linspace(-1, 1, n), dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(_many(n, 1.0, offset=1e6), (x,), fast_mode=True)

    def with_constant(x):
        return (x.tanh() * 3, agrad.ones(80, dtype=x.dtype) * 7.0)

    assert agrad.autograd.gradcheck(with_constant, (x,), fast_mode=True)
