"""The engine's shortcuts give the answers of the paths they skip (issue 15).

- The element limit: an op declared `within_operands` (broadcasting, matmul, kron) is let
  through when the product of its operands' sizes is within the limit, without its shape
  rule; the declaration is checked on every case of those entries, and the verdict under a
  limit is the exact one (refused iff the result has more elements than the limit, and
  operands of one shape, which give no more than they hold, are never refused), empty
  operands included (``zeros(200, 0) @ zeros(0, 200)`` has 40,000 elements).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agrad
from agrad.engine import limits
from agrad.engine.ops import TABLE
from agrad.errors import AgradError, AgradLimitError

BOUNDED = sorted(name for name, op in TABLE.items() if op.within_operands)


def test_the_bounded_ops_are_the_broadcasting_ones_and_matmul_and_kron():
    assert {"add", "mul", "matmul", "kron"} <= set(BOUNDED)


@pytest.mark.parametrize("name", BOUNDED)
def test_a_declared_bound_holds_on_every_case_of_the_entry(name):
    op = TABLE[name]
    assert op.cases, f"{name}: no cases to check its declaration on"
    rng = np.random.default_rng(0)
    for case in op.cases:
        arrays = case.values or tuple(rng.uniform(0.5, 1.5, s) for s in case.shapes)
        out = np.asarray(op.forward(*arrays, **case.params))
        assert out.size <= math.prod(np.size(a) for a in arrays), (name, case.shapes)


DIMS = st.sampled_from([0, 1, 2, 3, 7, 40])
SHAPE = st.lists(DIMS, min_size=0, max_size=3).map(tuple)


def _verdict(fn, limit):
    """'refused', 'error' (shapes that do not fit) or the result's size, under ``limit``."""
    with limits.max_elements(limit):
        try:
            return fn().numel()
        except AgradLimitError:
            return "refused"
        except AgradError:
            return "error"


def _expected(shape_of, limit):
    try:
        shape = shape_of()
    except ValueError:
        return "error"
    return "refused" if math.prod(shape) > limit else math.prod(shape)


@settings(max_examples=200, deadline=None)
@given(a=SHAPE, b=SHAPE, limit=st.sampled_from([1, 6, 40, 100, 1600]))
def test_broadcasting_under_a_limit_is_refused_exactly_when_over_it(a, b, limit):
    x, y = agrad.ones(a), agrad.ones(b)
    got = _verdict(lambda: x * y, limit)
    if a == b:  # (operands of one shape give no more than they hold: never checked)
        assert got == math.prod(a)
    else:
        assert got == _expected(lambda: np.broadcast_shapes(a, b), limit)


@settings(max_examples=200, deadline=None)
@given(
    n=DIMS, k=DIMS, m=DIMS, batch=st.sampled_from([(), (1,), (3,)]),
    limit=st.sampled_from([1, 6, 40, 100, 1600]),
)  # fmt: skip
def test_matmul_under_a_limit_is_refused_exactly_when_over_it(n, k, m, batch, limit):
    x, y = agrad.ones((*batch, n, k)), agrad.ones((k, m))
    got = _verdict(lambda: x @ y, limit)
    assert got == _expected(
        lambda: np.matmul(np.ones((*batch, n, k)), np.ones((k, m))).shape, limit
    )


@pytest.mark.parametrize(
    "make, refused",
    [
        (lambda: agrad.zeros(200, 0) @ agrad.zeros(0, 200), True),  # empty operands, 40,000
        (lambda: agrad.ones(100, 1) + agrad.ones(1, 100), False),  # exactly the limit
        (lambda: agrad.ones(100, 1) + agrad.ones(1, 101), True),  # one row over it
        (lambda: agrad.ones(1, 150) + agrad.ones(150), False),  # the bound is over, not it
        (lambda: agrad.kron(agrad.ones(10, 10), agrad.ones(10, 10)), False),
        (lambda: agrad.kron(agrad.ones(10, 10), agrad.ones(10, 11)), True),
        (lambda: agrad.ones(100, 1) + np.float64(2.0) * agrad.ones(1, 101), True),
    ],
)
def test_results_at_the_limit_pass_and_one_over_it_is_refused(make, refused):
    with limits.max_elements(10_000):
        if refused:
            with pytest.raises(AgradLimitError, match="more than the limit of 10,000"):
                make()
        else:
            assert make().numel() <= 10_000


# ---- the backward pass's order -----------------------------------------------------------


def _plain_order(roots):
    """The order `_topological` must give, by the plain depth-first search (every unseen
    producer pushed, the last operand's explored first; a node finished after them): the
    order in which gradients arriving at a node are summed, so a bit of every sum."""
    from agrad.engine.tensor import Tensor

    order, seen, stack = [], set(), [(r, False) for r in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for child in node.next:
            if child is not None and not isinstance(child, Tensor) and child not in seen:
                stack.append((child, False))
    return order[::-1]


def _made(kind, a, b, c):
    """One recorded step of a random graph: one-operand chains, shared operands, several."""
    if kind == 0:
        return agrad.sin(a)
    if kind == 1:
        return a * b
    if kind == 2:
        return a + 1.5
    if kind == 3:
        return a * a
    if kind == 4:
        return c * a
    if kind == 5:
        return agrad.stack([a, b, a]).sum(0)
    if kind == 6:
        return agrad.where(c > 2.5, a, b)
    return (a - b) * 0.5


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 99), st.integers(0, 99)),
                min_size=1, max_size=40))  # fmt: skip
def test_the_order_of_a_backward_pass_is_the_plain_searchs(steps):
    from agrad.engine.graph_order import _topological

    x = agrad.tensor([0.5, -1.0], requires_grad=True)
    c = agrad.tensor([2.0, 3.0])
    values = [x]
    for kind, i, j in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        values.append(_made(kind, a, b, c))
    roots = list({id(v.grad_fn): v.grad_fn for v in values[-3:] if v.grad_fn is not None}.values())
    assert _topological(roots) == _plain_order(roots)


def _is_chain(root):
    """Every node below ``root`` has at most one producer that is a node (and one or two
    operands): the graphs whose order `_chain` finds by walking the path."""
    from agrad.engine.node import Node

    node = root
    while node is not None:
        if len(node.next) not in (1, 2):
            return False
        producers = [c for c in node.next if isinstance(c, Node)]
        if len(producers) > 1:
            return False
        node = producers[0] if producers else None
    return True


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 99), st.integers(0, 99)),
                min_size=1, max_size=30),
       st.lists(st.integers(0, 99), max_size=3), st.integers(0, 3))  # fmt: skip
def test_a_chains_order_and_pruning_are_the_searchs(steps, picks, leaves):
    """`_chain` gives the plain search's order exactly when the graph is a chain (None
    otherwise), and `_prune_chain` keeps what `_prune` keeps, for any wanted tensors."""
    from agrad.engine.graph_order import _chain, _prune, _prune_chain

    x = agrad.tensor([0.5, -1.0], requires_grad=True)
    w = agrad.tensor([1.5, 2.0], requires_grad=True)
    c = agrad.tensor([2.0, 3.0])
    values = [x]
    for kind, i, j in steps:  # mostly one-operand steps and constants: many chains
        a = values[i % len(values)]
        b = values[j % len(values)] if kind in (1, 3) else w if kind == 4 else c
        values.append(_made(kind, a, b, c))
    root = values[-1].grad_fn
    if root is None:
        return
    order = _chain(root)
    assert (order is not None) == _is_chain(root)
    if order is None:
        return
    assert order == _plain_order([root])
    nodes = [values[p % len(values)].grad_fn for p in picks]
    wanted_nodes = {id(n) for n in nodes if n is not None}
    wanted_leaves = {id(t) for k, t in enumerate((x, w)) if leaves >> k & 1}  # any subset
    assert _prune_chain(order, wanted_nodes, wanted_leaves) == _prune(
        order, wanted_nodes, wanted_leaves
    )


# ---- per-op shortcuts in the rules and kernels ---------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    big=st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=4).map(tuple),
    keep=st.lists(st.booleans(), min_size=4, max_size=4),
    drop=st.integers(0, 4),
)
def test_sum_to_gives_the_plain_reductions_sums_as_an_array(big, keep, drop):
    from agrad.engine.kernels import sum_to

    drop = min(drop, len(big))
    shape = tuple(n if k else 1 for n, k in zip(big[drop:], keep, strict=False))
    x = np.random.default_rng(len(big)).standard_normal(big)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1
    )
    expected = np.add.reduce(x, axis=axes, keepdims=True).reshape(shape)
    got = sum_to(x, shape)
    assert type(got) is np.ndarray and got.shape == shape  # (never a NumPy scalar)
    np.testing.assert_array_equal(got, expected)


def _grads(lib, fn, *values, wanted):
    ts = [
        lib.tensor(v, dtype=lib.float64, requires_grad=w)
        for v, w in zip(values, wanted, strict=True)
    ]
    fn(lib, *ts).sum().backward()
    return [t.grad.numpy() if w else None for t, w in zip(ts, wanted, strict=True)]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a, b: a * b,
        lambda m, a, b: a - b,
        lambda m, a, b: (a - b) ** 2,
        lambda m, a, b: m.tanh(a @ b.T) * 3.0,
        lambda m, a, b: ((a * b) ** 2).sum() * a,
    ],
)
@pytest.mark.parametrize("wanted", [(True, False), (False, True), (True, True)])
def test_an_operand_that_wants_no_gradient_changes_no_other_gradient(fn, wanted):
    # mul and sub compute no gradient for an operand that wants none; pow 2 and sum take
    # shorter paths: every gradient still as PyTorch's (tanh's own rounding differs).
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])
    b = np.array([[1.5, 0.5, -2.0], [0.125, -1.0, 3.0]])
    ours, theirs = _grads(agrad, fn, a, b, wanted=wanted), _grads(torch, fn, a, b, wanted=wanted)
    for got, ref in zip(ours, theirs, strict=True):
        if ref is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)
