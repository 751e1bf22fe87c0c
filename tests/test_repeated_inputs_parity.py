"""The same tensor asked for more than once, as PyTorch: autograd.grad returns its
gradient at every position it was given (leaf or not, with create_graph or not, unused
ones None), backward(inputs=...) accumulates it once, and gradcheck/gradgradcheck of a
function given one tensor twice pass when the rule is right and fail when it is wrong.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()

X0 = [0.3, -1.2, 2.0]
Y0 = [0.5, 0.7, -0.4]


def _leaves(lib):
    x = lib.tensor(X0, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(Y0, dtype=lib.float64, requires_grad=True)
    return x, y


CASES = {
    "x,x": lambda x, y: ((x * 3 * x).sum(), [x, x]),
    "x,y,x": lambda x, y: ((x * y).sin().sum(), [x, y, x]),
    "y,x,x,y": lambda x, y: ((x**2 * y).sum(), [y, x, x, y]),
    "nonleaf twice": lambda x, y: (lambda h: ((h * h).sum(), [h, x, h]))(x * 2.0),
    "three times": lambda x, y: ((x.exp() * y).sum(), [x, x, x]),
}


def _grads(lib, case, create_graph):
    x, y = _leaves(lib)
    out, wanted = CASES[case](x, y)
    gs = lib.autograd.grad(out, wanted, create_graph=create_graph)
    result = [g.detach().numpy().copy() for g in gs]
    if create_graph:  # a second derivative through the repeated results
        (h,) = lib.autograd.grad(sum((g * g).sum() for g in gs), [x], allow_unused=True)
        result.append(None if h is None else h.numpy().copy())
    return result


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_of_a_repeated_input_matches_pytorch(case, create_graph):
    ours, theirs = _grads(agrad, case, create_graph), _grads(torch, case, create_graph)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=case)


def test_an_unused_repeated_input_is_none_at_every_position_as_pytorch():
    for lib in (agrad, torch):
        x, y = _leaves(lib)
        gs = lib.autograd.grad((x * 2).sum(), [y, x, y], allow_unused=True)
        assert gs[0] is None and gs[2] is None, lib.__name__
        assert gs[1].tolist() == [2.0, 2.0, 2.0], lib.__name__
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            lib.autograd.grad((x * 2).sum(), [x, y, y])


def test_backward_with_a_repeated_input_accumulates_as_pytorch():
    results = []
    for lib in (agrad, torch):
        x, y = _leaves(lib)
        (x * x * y).sum().backward(inputs=[x, x])
        results.append((x.grad.numpy().copy(), y.grad))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert results[0][1] is None and results[1][1] is None


def _wrong_square(lib, factor):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2 * a * factor

    return Square.apply


FUNCS = {
    "a*b": (lambda lib: lambda a, b: a * b, True),
    "a+2b": (lambda lib: lambda a, b: a + 2 * b, True),
    "sum(a*b)": (lambda lib: lambda a, b: (a * b).sum(), True),
    "sin(a)*b": (lambda lib: lambda a, b: a.sin() * b, True),
    "square(a)+b": (lambda lib: (lambda sq: lambda a, b: sq(a) + b)(_wrong_square(lib, 1.0)), True),
    "wrong square(a)*b": (
        lambda lib: (lambda sq: lambda a, b: sq(a) * b)(_wrong_square(lib, 1.5)),
        False,
    ),
    "wrong square(b)-a": (
        lambda lib: (lambda sq: lambda a, b: sq(b) - a)(_wrong_square(lib, 0.5)),
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_gradcheck_of_a_repeated_input_passes_when_right_and_fails_when_wrong(name):
    make, right = FUNCS[name]
    for lib in (torch, agrad):
        x = lib.tensor(X0, dtype=lib.float64, requires_grad=True)
        got = lib.autograd.gradcheck(make(lib), (x, x), raise_exception=False)
        assert got is right, f"{lib.__name__}: gradcheck {got}, expected {right}"


def test_gradcheck_with_a_repeated_input_among_others_matches_pytorch():
    for lib in (torch, agrad):
        x, y = _leaves(lib)
        f = lambda a, b, c: (a * b).exp() + c  # noqa: E731
        assert lib.autograd.gradcheck(f, (x, y, x), raise_exception=False), lib.__name__
        g = (lambda sq: lambda a, b, c: sq(a) * b + c)(_wrong_square(lib, 1.2))
        assert not lib.autograd.gradcheck(g, (x, y, x), raise_exception=False), lib.__name__


def test_gradgradcheck_of_a_repeated_input_matches_pytorch():
    for lib in (torch, agrad):
        x = lib.tensor(X0, dtype=lib.float64, requires_grad=True)
        ok = lib.autograd.gradgradcheck(lambda a, b: (a * b).sin(), (x, x), raise_exception=False)
        assert ok, lib.__name__
