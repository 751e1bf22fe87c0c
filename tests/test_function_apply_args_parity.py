"""Custom Functions with defaulted forward parameters, as PyTorch's apply counts them:
``forward(ctx, x, scale=2.0)`` takes as many gradients as arguments given to apply
(keywords in place); with ``setup_context``, every parameter (defaults filled in).
Every call pattern x every number of returned gradients, against PyTorch: the same
success and gradients, or a refusal in both.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()


def _classic(lib, n_grads, log=None):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, a=2.0, b=3.0):
            ctx.a, ctx.b = a, b
            if log is not None:
                log.append(len(ctx.needs_input_grad))
            return x * a * b

        @staticmethod
        def backward(ctx, g):
            grads = (g * ctx.a * ctx.b, None, None)
            return grads[:n_grads] if n_grads > 1 else grads[0]

    return Scale


def _setup_context(lib, n_grads):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, a=2.0, b=3.0):
            return x * a * b

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.a, ctx.b = inputs[1], inputs[2]

        @staticmethod
        def backward(ctx, g):
            grads = (g * ctx.a * ctx.b, None, None)
            return grads[:n_grads] if n_grads > 1 else grads[0]

    return Scale


def _varargs(lib, n_grads):
    class Sum(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, *rest):
            return x * (1.0 + sum(rest))

        @staticmethod
        def backward(ctx, g):
            grads = (g * 2.0, None, None)
            return grads[:n_grads] if n_grads > 1 else grads[0]

    return Sum


KINDS = {"classic": _classic, "setup_context": _setup_context, "varargs": _varargs}
CALLS = {
    "x": lambda F, x: F.apply(x),
    "x, a": lambda F, x: F.apply(x, 5.0),
    "x, a, b": lambda F, x: F.apply(x, 5.0, 0.5),
    "x, a=": lambda F, x: F.apply(x, a=5.0),
    "x, b= (a gap)": lambda F, x: F.apply(x, b=0.5),
    "x, a, b=": lambda F, x: F.apply(x, 5.0, b=0.5),
}


def _outcome(lib, kind, call, n_grads):
    x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
    try:
        y = CALLS[call](KINDS[kind](lib, n_grads), x)
        (y * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward()
    except Exception as exc:  # noqa: BLE001 - PyTorch's errors are RuntimeError/TypeError
        return exc
    return y.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parametrize("n_grads", [1, 2, 3])
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_apply_counts_arguments_as_pytorch(kind, call, n_grads):
    ours, theirs = _outcome(agrad, kind, call, n_grads), _outcome(torch, kind, call, n_grads)
    what = f"{kind}: apply({call}), backward returns {n_grads}"
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{what}: PyTorch raised {theirs!r}, agrad ran"
        return
    assert not isinstance(ours, Exception), f"{what}: agrad raised {ours!r}"
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=what)


def test_needs_input_grad_has_one_entry_per_argument_given_as_pytorch():
    for lib in (agrad, torch):
        seen: list[int] = []
        F = _classic(lib, 1, seen)
        x = lib.tensor([1.0], requires_grad=True)
        for call in ("x", "x, a", "x, a="):
            CALLS[call](F, x)
        assert seen == [1, 2, 2], lib.__name__
