"""gradcheck of a function that also reaches its inputs other than through its arguments:
a closure, a module's parameters, tied weights (QA round 28).

PyTorch's gradcheck moves each input in place, so every use of it moves; its analytical
side is autograd's gradient with respect to the input tensor, which covers every use too.
agrad called the function with fresh copies instead: its finite differences saw only the
path through the argument, so a backward that forgot the other path passed, and a right one
failed. Each case below is written once and run under both libraries (``T`` is the
module): PyTorch's verdict is the oracle, and the gradients are also checked by algebra
where that is short.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()


def _projection(T, forget_weight: bool):
    """logits = h @ W.T as a custom Function; the buggy one returns no gradient for W."""

    class Projection(T.autograd.Function):
        @staticmethod
        def forward(ctx, h, W):
            ctx.save_for_backward(h, W)
            return h @ W.t()

        @staticmethod
        def backward(ctx, g):
            h, W = ctx.saved_tensors
            return g @ W, None if forget_weight else g.t() @ h

    return Projection


def _tied(T, forget_weight: bool):
    """A language model's tied embedding and output weights: the argument is the embedding
    table, the output layer reads the same tensor from the module."""
    W = T.tensor(np.random.default_rng(0).standard_normal((5, 3)), requires_grad=True)
    idx = T.tensor([0, 3, 1])
    projection = _projection(T, forget_weight)

    def loss(table, idx):
        return projection.apply(table[idx].tanh(), W).logsumexp(1).sum()

    return loss, (W, idx)


def _mul(T, forget_second: bool):
    class Mul(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, None if forget_second else g * a

    return Mul


def _square_through_closure(T, forget_second: bool):
    """a · x with x the input itself, read from the enclosing scope: x², derivative 2x."""
    x = T.tensor([0.7, -1.3, 0.4, 2.1], dtype=T.float64, requires_grad=True)
    mul = _mul(T, forget_second)
    return (lambda a: mul.apply(a, x)), (x,)


def _module_parameters(T, dtype):
    """``gradcheck(lambda *p: model(x).sum(), tuple(model.parameters()))``: the function
    ignores its arguments; the parameters move under the module."""
    T.manual_seed(0)
    layer = T.nn.Linear(3, 2).to(dtype)
    with T.no_grad():
        for p, values in zip(layer.parameters(), _LINEAR, strict=True):
            p.copy_(T.tensor(values, dtype=dtype))
    x = T.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=dtype)
    return (lambda *p: layer(x).tanh().sum()), tuple(layer.parameters())


_LINEAR = ([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]], [0.05, -0.1])

CASES = {  # name: (maker, right)
    "tied weights, right backward": (lambda T: _tied(T, False), True),
    "tied weights, backward forgets the weight": (lambda T: _tied(T, True), False),
    "input read through a closure, right backward": (
        lambda T: _square_through_closure(T, False), True),
    "input read through a closure, backward forgets it": (
        lambda T: _square_through_closure(T, True), False),
    "module parameters, float64": (lambda T: _module_parameters(T, T.float64), True),
}  # fmt: skip


def _verdict(T, name: str) -> bool:
    f, inputs = CASES[name][0](T)
    return T.autograd.gradcheck(f, inputs, raise_exception=False)


@pytest.mark.parametrize("name", list(CASES))
def test_the_verdict_is_pytorchs(name):
    right = CASES[name][1]
    assert _verdict(torch, name) is right  # the oracle, and the case is what it says
    assert _verdict(agrad, name) is right


def test_the_module_idiom_in_float32():
    # float32 parameters and a float32 input: agrad's finite differences run in float64,
    # where the float32 constant meets float64 values (a product's refusal of mixed
    # dtypes is waived there, and only there)
    f, params = _module_parameters(agrad, agrad.float32)
    assert agrad.autograd.gradcheck(f, params, eps=1e-3, atol=1e-3, rtol=1e-3)
    with pytest.raises(agrad.errors.AgradDtypeError, match="same dtype"):
        agrad.ones(2, 3, dtype=agrad.float32) @ agrad.ones(3, 2, dtype=agrad.float64)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_callers_tensors_are_left_as_they_were(dtype):
    f, params = _module_parameters(agrad, getattr(agrad, dtype))
    arrays = [p._array for p in params]
    values = [a.copy() for a in arrays]
    agrad.autograd.gradcheck(f, params, eps=1e-3, atol=1e-2, rtol=1e-2, raise_exception=False)
    for p, array, before in zip(params, arrays, values, strict=True):
        assert p._array is array and p.dtype == getattr(agrad, dtype)
        np.testing.assert_array_equal(array, before)
        assert p.grad is None


def test_a_failing_function_leaves_the_callers_tensors_as_they_were():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    array = x._array
    calls = []

    def f(t):
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("refused")
        return (t * x).sum()

    with pytest.raises(ValueError, match="refused"):
        agrad.autograd.gradcheck(f, (x,))
    assert x._array is array and array.tolist() == [1.0, 2.0]


def test_the_same_tensor_given_twice_moves_as_one():
    # both arguments are x: moving one moves the other, as in PyTorch (total derivative)
    def make(T):
        x = T.tensor([0.3, -0.8, 1.1], dtype=T.float64, requires_grad=True)
        return (lambda p, q: (p * q.sin()).sum()), (x, x)

    for T in (torch, agrad):
        f, inputs = make(T)
        assert T.autograd.gradcheck(f, inputs)


def _cube_in_place(T):
    class CubeInPlace(T.autograd.Function):  # right: its backward reads the original x
        @staticmethod
        def forward(ctx, x):
            ctx.x0 = x.detach().clone()
            x.pow_(3)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3 * ctx.x0**2

    return CubeInPlace


def test_a_function_that_writes_into_its_input_is_refused_clearly():
    # Each call would start from the values the last one left (PyTorch's gradcheck gives a
    # garbage Jacobian; agrad said "a leaf Variable ... in-place" of its own copy, QA 28)
    cube = _cube_in_place(agrad)
    base = agrad.tensor([0.7, -1.3, 0.4], requires_grad=True)
    with pytest.raises(ValueError, match="writes into input 0 in place.*clone"):
        agrad.autograd.gradcheck(cube.apply, (base * 1.0,))
    scale = agrad.tensor([2.0, 3.0, 4.0])  # a constant input written in place: the same
    with pytest.raises(ValueError, match="writes into input 1 in place"):
        agrad.autograd.gradcheck(lambda x, c: (x * c.mul_(2)).sum(), (base, scale))
    # the way out the message gives: as in PyTorch, where it passes too
    assert agrad.autograd.gradcheck(lambda t: cube.apply(t.clone()), (base * 1.0,))
    t = torch.tensor([0.7, -1.3, 0.4], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda u: _cube_in_place(torch).apply(u.clone()), (t * 1.0,))


def _aliases(T, kind: str):
    """A function that also reads its input W through an alias made outside the call (QA
    round 29): PyTorch moves W's storage in place, so every alias moves with it."""
    rng = np.random.default_rng(1)
    W = T.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x = T.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    if kind == "no_grad transpose, gradient forgotten":
        with T.no_grad():
            Wt = W.t()
        return (lambda a, w: (a @ Wt.t() @ Wt).sum()), (x, W)
    if kind == "transpose with its graph, right":
        Wt = W.t()
        return (lambda a, w: (a @ w @ Wt).sum()), (x, W)
    if kind == "detached copy, gradient forgotten":
        Wd = W.detach()
        return (lambda a, w: (w * Wd).sum() + (a @ w).sum()), (x, W)
    cache: dict = {}  # "a transpose cached on the first call, gradient forgotten"

    def cached(a, w):
        if "wt" not in cache:
            with T.no_grad():
                cache["wt"] = w.t()
        return (a @ w).sum() + (cache["wt"] ** 2).sum()

    return cached, (x, W)


ALIASES = ["no_grad transpose, gradient forgotten", "transpose with its graph, right",
           "detached copy, gradient forgotten",
           "a transpose cached on the first call, gradient forgotten"]  # fmt: skip


@pytest.mark.parametrize("kind", ALIASES)
def test_an_alias_of_an_input_moves_with_it(kind):
    verdicts = []
    for T in (torch, agrad):
        f, inputs = _aliases(T, kind)
        verdicts.append(T.autograd.gradcheck(f, inputs, raise_exception=False))
    assert verdicts[0] is ("right" in kind)  # the oracle
    assert verdicts[1] is verdicts[0]
