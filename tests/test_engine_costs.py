"""A regression guard for the engine's per-node cost that is not a timing: the number of
objects Python's cyclic garbage collector tracks per recorded node. Each one is work for
the collector on every pass (issue 15 measured 0.8–2 µs a node from it), so the count
must not grow; lower the bound when it falls."""

from __future__ import annotations

import gc

import agrad

# The output Tensor and its Node: a node of one or two operands keeps them in its own slots,
# not in tuples (it was 4.95 with the inputs and next tuples and the arrays list). PyTorch's
# nodes cost about 0.33 (its graph is not made of Python objects).
BOUND = 2.0


def _tracked_per_node(op, n: int = 1000, nodes_per_step: int = 1) -> float:
    x = agrad.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(10):  # warm: first-call caches are not per node
        y = op(y)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        y = x
        for _ in range(n):
            y = op(y)
        after = len(gc.get_objects())
    finally:
        gc.enable()
    assert y.grad_fn is not None  # the chain was recorded
    return (after - before) / (n * nodes_per_step)


def test_a_scalar_chain_allocates_at_most_bound_tracked_objects_per_node():
    per_node = _tracked_per_node(lambda y: agrad.sin(y * 1.0001 + 0.001), nodes_per_step=3)
    assert per_node <= BOUND, f"{per_node:.2f} GC-tracked objects per node (bound {BOUND})"


def test_a_chain_under_no_grad_records_nothing():
    x = agrad.tensor(0.5, requires_grad=True)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        with agrad.no_grad():
            y = x
            for _ in range(1000):
                y = y * 1.0001
        after = len(gc.get_objects())
    finally:
        gc.enable()
    assert y.grad_fn is None
    assert (after - before) / 1000 <= 0.01  # each step's tensor is freed by the next


# ---- what the cheaper layout and the fewer temporaries must not change ------------------

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _edges(fn):
    """(grad_fn name, [(next name or None)]) of an output, as PyTorch reports them."""
    node = fn.grad_fn
    return node.name(), [None if n is None else n.name() for n, _ in node.next_functions]


@pytest.mark.parametrize(
    "build",
    [
        lambda m, a, b: m.sin(a),  # one operand
        lambda m, a, b: a * b,  # two tracked
        lambda m, a, b: a * 2.0,  # one tracked and a constant
        lambda m, a, b: m.cat([a, b, a]),  # a variable number: three (kept in tuples)
        lambda m, a, b: m.stack([a]),  # a variable number, of one
    ],
)
def test_nodes_of_every_arity_report_their_edges_as_pytorch_does(build):
    torch = pytest.importorskip("torch")
    values = (np.array([0.5, -1.0]), np.array([2.0, 3.0]))
    ours = [agrad.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    got, want = build(agrad, *ours), build(torch, *theirs)
    assert _edges(got) == _edges(want)
    got.sum().backward()
    want.sum().backward()
    for a, b in zip(ours, theirs, strict=True):  # and the gradients travel along them
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            assert np.allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (3,), (4, 5)])
def test_tanh_backward_is_bit_for_bit_the_rule_and_leaves_its_buffers_alone(dtype, shape):
    rng = np.random.default_rng(0)
    x_np = rng.uniform(-2, 2, size=shape).astype(dtype)
    g_np = rng.uniform(-1, 1, size=shape).astype(dtype)
    x = agrad.tensor(x_np, requires_grad=True)
    y = agrad.tanh(x)
    y_before = y.detach().numpy().copy()
    seed = agrad.tensor(g_np)
    y.backward(seed, retain_graph=True)
    t = np.tanh(x_np)
    expected = g_np * (1.0 - t * t)  # the rule, by NumPy, independently of the engine
    assert x.grad.dtype == expected.dtype
    assert np.array_equal(x.grad.numpy(), expected)  # every bit
    assert np.array_equal(y.detach().numpy(), y_before)  # the saved output is untouched
    assert np.array_equal(seed.numpy(), g_np)  # and so is the caller's gradient
    first = x.grad.numpy().copy()
    y.backward(seed)  # again, through the same saved output: the same gradient added
    assert np.array_equal(x.grad.numpy(), first + expected)


def test_tanh_backward_with_rows_of_cotangents_is_the_rule_per_row():
    # A Jacobian sends a batch of cotangents (n, *shape) through one saved output (*shape).
    x_np = np.linspace(-1.5, 1.5, 4)
    jac = agrad.autograd.functional.jacobian(agrad.tanh, agrad.tensor(x_np))
    t = np.tanh(x_np)
    assert np.array_equal(jac.numpy(), np.eye(4) * (1.0 - t * t))
