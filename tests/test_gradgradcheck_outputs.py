"""gradgradcheck differentiates only the outputs that require grad, as PyTorch's does: an
argmax, a mask, a constant or a detached tensor beside them is not an error (it raised
"element 1 of tensors does not require grad", even with raise_exception=False; QA,
2026-12-02), and a wrong second derivative in the differentiable ones still fails. The
oracle is torch.autograd.gradgradcheck on the same functions."""

from __future__ import annotations

import pytest

import agrad

torch = pytest.importorskip("torch")


def _cubed(lib):
    class Cube(lib.autograd.Function):  # a custom backward whose own derivative is wrong
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2  # detached: no second derivative through x

    return Cube.apply


BESIDE = {  # an output that does not require grad, next to a differentiable one
    "argmax": lambda lib, a: a.argmax(),
    "mask": lambda lib, a: a > 0,
    "constant": lambda lib, a: lib.ones(3, dtype=lib.float64),
    "detached": lambda lib, a: (a * 2).detach(),
}
MAIN = {
    "sin": (lambda lib, a: a.sin(), True),
    "cube_with_a_detached_backward": (lambda lib, a: _cubed(lib)(a), False),
}


@pytest.mark.parametrize("beside", sorted(BESIDE))
@pytest.mark.parametrize("main", sorted(MAIN))
@pytest.mark.parametrize("first", [True, False])
def test_outputs_that_do_not_require_grad_are_left_out(beside, main, first):
    results = {}
    for lib in (agrad, torch):
        make, _ = MAIN[main]

        def f(a, lib=lib, make=make):
            outs = (make(lib, a), BESIDE[beside](lib, a))
            return outs if first else outs[::-1]

        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        results[lib.__name__] = lib.autograd.gradgradcheck(f, (x,), raise_exception=False)
    assert results["agrad"] == results["torch"] == MAIN[main][1], results


def test_only_outputs_that_do_not_require_grad_pass_vacuously():
    # Nothing to differentiate, so nothing is wrong. (PyTorch 2.13 raises a TypeError from
    # its own internals here: "<lambda>() missing 1 required positional argument".)
    x = agrad.tensor([0.5, -1.5], dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradgradcheck(lambda a: (a.argmax(), a > 0), (x,))
