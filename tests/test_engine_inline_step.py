"""The backward loop's inline step gives exactly what the general step gives (issue 15).

`run_backward` runs the common node step inline (a plain node of one or two operands, on
arrays, nothing observing, no in-place write since it was recorded) and everything else
through `backward_step._node_vjp`. An observer (``on_node``) forces the general step, so
each graph here is differentiated both ways and the gradients must be bit-identical, and
agree with PyTorch's (the oracle): float64 and float32, broadcasting (a bias), views,
operands used twice, accumulation into an existing ``.grad``, a batched (Jacobian) pass,
``create_graph=True`` (which never inlines), and in-place writes after saving (refused on
both paths). The forward's shortcuts (``x ** 2``, ``x.sum()``, a node given its named
class last) are checked against the general calls and PyTorch's grad_fn names.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agrad
from agrad.engine import kernels
from agrad.engine.autograd import run_backward
from agrad.errors import AgradAutogradError

RNG = np.random.default_rng(7)
DATA = {
    "X": RNG.standard_normal((5, 4)),
    "W1": RNG.standard_normal((4, 3)),
    "b1": RNG.standard_normal(3),
    "W2": RNG.standard_normal((3, 2)),
    "Y": RNG.standard_normal((5, 2)),
}
WANTED = ("W1", "b1", "W2")


def _mlp(lib, t):
    return ((lib.tanh(t["X"] @ t["W1"] + t["b1"]) @ t["W2"] - t["Y"]) ** 2).sum()


def _twice(lib, t):  # an operand used twice (mul's (b, a) for one tensor), and a view
    h = t["X"] @ t["W1"]
    return ((h + t["b1"]) * h).sum() + (t["W2"].T[1:] * 3.0).sum() + (h[1:3, ::2] ** 3).mean()


def _leaves(lib, dtype):
    if lib is torch:
        tdt = torch.float32 if dtype == np.float32 else torch.float64
        return {k: torch.tensor(v, dtype=tdt, requires_grad=k in WANTED) for k, v in DATA.items()}
    return {k: agrad.tensor(v.astype(dtype), requires_grad=k in WANTED) for k, v in DATA.items()}


def _grads(fn, dtype, general: bool, repeat: int = 1):
    t = _leaves(agrad, dtype)
    for _ in range(repeat):  # a second pass accumulates into the existing .grad
        loss = fn(agrad, t)
        observer = (lambda *_: None) if general else None
        run_backward([loss], [], on_node=observer)
    return [t[k].grad.numpy() for k in WANTED]


@pytest.mark.parametrize("fn", [_mlp, _twice])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("repeat", [1, 2])
def test_the_inline_step_gives_the_general_steps_gradients_bit_for_bit(fn, dtype, repeat):
    inline = _grads(fn, dtype, general=False, repeat=repeat)
    general = _grads(fn, dtype, general=True, repeat=repeat)
    t = _leaves(torch, dtype)
    for _ in range(repeat):
        fn(torch, t).backward()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for k, a, b in zip(WANTED, inline, general, strict=True):
        assert a.dtype == b.dtype == dtype, k
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), k
        np.testing.assert_allclose(a, t[k].grad.numpy(), rtol=tol, atol=tol, err_msg=k)


def test_a_batched_pass_inline_equals_the_general_one_and_the_closed_form():
    A = agrad.tensor(RNG.standard_normal((6, 6)))
    x = agrad.tensor(RNG.standard_normal(6), requires_grad=True)
    rows = []
    for observer in (None, lambda *_: None):
        y = agrad.tanh(A @ x + 0.5)
        seed = np.eye(6)
        (g,) = run_backward([y], [seed], retain_graph=False, inputs=[x], batch=1,
                            on_node=observer)  # fmt: skip
        rows.append(np.asarray(g))
    assert rows[0].tobytes() == rows[1].tobytes()
    yv = np.tanh(A.numpy() @ x.detach().numpy() + 0.5)
    np.testing.assert_allclose(rows[0], (1 - yv**2)[:, None] * A.numpy(), rtol=1e-12)


def test_create_graph_gives_pytorchs_second_derivatives():
    def f(lib, w, b):
        return ((lib.tanh(w * b + b) ** 2).sum(0) * 2.0).sum()

    wv, bv = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    results = []
    for lib in (agrad, torch):
        w = lib.tensor(wv, requires_grad=True)
        b = lib.tensor(bv, requires_grad=True)
        gw, gb = lib.autograd.grad(f(lib, w, b), (w, b), create_graph=True)
        (gw.sum() + (gb**2).sum()).backward()
        results.append([v.detach().numpy() for v in (gw, gb, w.grad, b.grad)])
    for a, t in zip(*results, strict=True):
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("general", [False, True])
def test_a_saved_value_written_in_place_is_refused_on_both_paths(general):
    x = agrad.tensor(RNG.standard_normal(4), requires_grad=True)
    h = x * 1.0  # a non-leaf, saved by the product below
    y = (h * h).sum()
    with agrad.no_grad():
        h.add_(1.0)
    with pytest.raises(AgradAutogradError, match="modified by an inplace operation"):
        run_backward([y], [], on_node=(lambda *_: None) if general else None)


def test_a_write_into_an_unsaved_value_changes_nothing_on_the_inline_path():
    # add saves nothing: a write after it is harmless, and the step may still run inline
    # once the stamp check sends it the general way (both give PyTorch's answer).
    for lib in (agrad, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x + 1.0
        y = (h + 2.0).sum() + (x * x).sum()
        with lib.no_grad():
            h.mul_(5.0)
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), [3.0, 5.0, 7.0])


def test_a_second_backward_through_a_freed_graph_is_refused():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = agrad.tanh(x).sum()
    y.backward()
    with pytest.raises(AgradAutogradError, match="backward through the graph a second time"):
        y.backward()


def test_the_forward_shortcuts_give_the_general_calls_results_and_names():
    x = agrad.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    for b in (2, 2.0, np.float64(2.0), True):  # int and float take the shortcut; the rest not
        fast, slow = x**b, agrad.pow(x, b)
        assert fast.detach().numpy().tobytes() == slow.detach().numpy().tobytes(), b
        assert type(fast.grad_fn).__name__ == type(slow.grad_fn).__name__ == "PowBackward0"
    s1, s2 = x.sum(), agrad.sum(x, dim=None, keepdim=False)
    assert s1.detach().numpy().tobytes() == s2.detach().numpy().tobytes()
    assert type(s1.grad_fn).__name__ == type(s2.grad_fn).__name__ == "SumBackward0"
    assert type(x.sum(0).grad_fn).__name__ == "SumBackward1"
    W = agrad.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    tw = torch.tensor(W.detach().numpy(), requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    for a, t in ((x @ W, tx @ tw), (agrad.tanh(x), torch.tanh(tx)), (x + 1.0, tx + 1.0)):
        assert type(a.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize(
    "big, small",
    [((5, 3), (3,)), ((5, 3), (1, 3)), ((5, 3), (5, 1)), ((4, 5, 3), (3,)), ((5,), ()),
     ((2, 1), (1,)), ((1, 3), (3,))],
)  # fmt: skip
def test_sum_to_gives_the_reductions_sums_with_the_target_shape(big, small):
    x = RNG.standard_normal(big)
    got = kernels.sum_to(x, small)
    lead = x.ndim - len(small)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(small) if n == 1 and big[lead + i] != 1
    )
    want = np.sum(x, axis=axes, keepdims=True).reshape(small)
    assert type(got) is np.ndarray and got.shape == small
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_the_small_broadcast_copy_refuses_shapes_that_do_not_broadcast():
    out = kernels.broadcast_to(np.arange(3.0), (2, 3))
    assert out.flags.writeable and out.tolist() == [[0.0, 1.0, 2.0]] * 2
    with pytest.raises(ValueError):
        kernels.broadcast_to(np.arange(3.0), (2, 4))
