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
