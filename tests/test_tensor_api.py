"""The tensor API PyTorch code uses beyond the op table's faces (sort, topk, flip, roll,
repeat, tile, chunk, split, masked_fill, nonzero, where(cond), allclose, isclose, typed and
new_* constructors, keyword spellings, out=, generators), values and gradients against
PyTorch on inputs where they have a decision to make: ties, NaN, negative dims, uneven
splits, repeats that add dimensions, rolls over several axes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require_torch

import agrad

TIES = [[3.0, 1.0, 3.0, -2.0], [0.5, 0.5, 7.0, 0.5], [1.0, -1.0, 2.0, 4.0]]


@pytest.fixture
def torch():
    torch = require_torch()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(previous)


def both(torch, fn, value=TIES, weights=True):
    """``fn`` applied on each side to the same leaf; values and the gradient of a weighted
    sum of the result (distinct weights, so a gradient sent to the wrong element shows)."""
    results = []
    for lib in (torch, agrad):
        x = lib.tensor(value, requires_grad=True)
        out = fn(lib, x)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        loss = sum(
            (o * lib.arange(1.0, o.numel() + 1.0).reshape(o.shape)).sum()
            for o in outs
            if o.requires_grad
        )
        if weights and not isinstance(loss, int):
            loss.backward()
        results.append(([o.tolist() for o in outs], None if x.grad is None else x.grad.tolist()))
    assert results[1] == results[0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x: t.sort(x).values,
        lambda t, x: t.sort(x, dim=0, descending=True).values,
        lambda t, x: x.sort(-1, descending=True)[0],
        lambda t, x: x.flip(0),
        lambda t, x: t.flip(x, [0, 1]),
        lambda t, x: x.roll(1),
        lambda t, x: x.roll(-5),
        lambda t, x: t.roll(x, (1, -1), (0, 1)),
        lambda t, x: x.roll(2, 1),
        lambda t, x: x.repeat(2, 1),
        lambda t, x: x.repeat(2, 1, 3),
        lambda t, x: x.tile((2,)),
        lambda t, x: t.tile(x, (2, 1, 1)),
        lambda t, x: x.chunk(2),
        lambda t, x: x.chunk(3, dim=1),
        lambda t, x: x.chunk(5, dim=1),
        lambda t, x: t.split(x, 3, dim=1),
        lambda t, x: x.split([1, 2], 0),
        lambda t, x: x.masked_fill(x > 1, -1.0),
        lambda t, x: x.masked_fill(x == 0.5, t.tensor(9.0)),
    ],
)
def test_values_and_gradients_match_pytorch(torch, fn):
    both(torch, fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x: t.topk(x, 2).values,
        lambda t, x: x.topk(2, dim=0, largest=False).values,
        lambda t, x: x.topk(3, dim=1, sorted=True).indices,
    ],
)
def test_topk_matches_pytorch_without_ties(torch, fn):
    # Which of tied elements topk picks is PyTorch's implementation detail: no ties here.
    both(torch, fn, value=[[3.0, 1.0, 2.5, -2.0], [0.25, 0.5, 7.0, 0.75], [1.0, -1.0, 2.0, 4.0]])


def test_sort_indices_and_nan_order_match_pytorch(torch):
    value = [2.0, math.nan, -1.0, 2.0, math.inf, 0.0]
    for descending in (False, True):
        t = torch.sort(torch.tensor(value), descending=descending, stable=True)
        a = agrad.sort(agrad.tensor(value), descending=descending, stable=True)
        assert np.array_equal(np.asarray(a.values), t.values.numpy(), equal_nan=True)
        assert a.indices.tolist() == t.indices.tolist()
        assert agrad.tensor(value).argsort(descending=descending).tolist() == (
            torch.tensor(value).argsort(descending=descending, stable=True).tolist()
        )
    assert agrad.tensor(TIES).argsort(dim=0).tolist() == (
        torch.tensor(TIES).argsort(dim=0, stable=True).tolist()
    )


def test_topk_out_of_range_and_bad_dims_raise():
    x = agrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="out of range"):
        x.topk(3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sort(dim=1)
    with pytest.raises(RuntimeError, match="smaller than number of dimensions"):
        agrad.ones(2, 2).repeat(2)
    with pytest.raises(RuntimeError, match="sum exactly"):
        x.split([1, 2])
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.masked_fill(agrad.tensor([1, 0]), 0.0)


def test_nonzero_and_one_argument_where_match_pytorch(torch):
    value = [[1.0, 0.0, -2.0], [0.0, 0.0, 3.0]]
    t, a = torch.tensor(value), agrad.tensor(value)
    assert a.nonzero().tolist() == t.nonzero().tolist()
    assert [i.tolist() for i in agrad.where(a != 0)] == [i.tolist() for i in torch.where(t != 0)]
    assert [i.tolist() for i in a.nonzero(as_tuple=True)] == [
        i.tolist() for i in t.nonzero(as_tuple=True)
    ]
    assert agrad.where(a > 0, a, 0.0).tolist() == torch.where(t > 0, t, 0.0).tolist()


def test_allclose_and_isclose_match_pytorch(torch):
    a, b = [1.0, math.nan, 1e-9, 100.0], [1.0 + 1e-6, math.nan, 0.0, 100.001]
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-8}, {"rtol": 1e-4}):
        expect = torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs).tolist()
        assert agrad.isclose(agrad.tensor(a), agrad.tensor(b), **kwargs).tolist() == expect
        assert agrad.allclose(agrad.tensor(a), agrad.tensor(b), **kwargs) == torch.allclose(
            torch.tensor(a), torch.tensor(b), **kwargs
        )
    assert agrad.allclose(agrad.tensor([1.0]), agrad.tensor([1.0])) is True


def test_rounding_remainder_and_floor_division_match_pytorch(torch):
    value = [-7.5, -2.5, -0.5, 0.5, 1.5, 2.5, 7.25]
    t, a = torch.tensor(value), agrad.tensor(value)
    for fn in (
        lambda x: x.round(),
        lambda x: x % 2,
        lambda x: x % -3,
        lambda x: x // 2,
        lambda x: 7 // (x + 10),
        lambda x: 5 % (x + 10),
        lambda x: x.trunc(),
        lambda x: x.ceil(),
        lambda x: x.round(decimals=1),
    ):
        assert fn(a).tolist() == fn(t).tolist()
    ints = [-7, -2, 5, 9]
    assert (agrad.tensor(ints) // 3).tolist() == (torch.tensor(ints) // 3).tolist()
    assert (agrad.tensor(ints) % 3).tolist() == (torch.tensor(ints) % 3).tolist()


def test_keyword_spellings_and_out(torch):
    x = agrad.arange(6.0).reshape(2, 3)
    assert agrad.matmul(input=x, other=x.T).tolist() == [[5.0, 14.0], [14.0, 50.0]]
    assert agrad.sum(input=x, dim=1, keepdim=True).tolist() == [[3.0], [12.0]]
    assert agrad.randn(size=(2, 4)).shape == (2, 4) and agrad.rand(size=(3,)).shape == (3,)
    out = agrad.empty(2, 3)
    assert agrad.add(x, 1.0, out=out) is out and out.tolist() == (x + 1).tolist()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        agrad.mul(agrad.ones(2, requires_grad=True), 2.0, out=agrad.empty(2))
    with pytest.raises(RuntimeError, match="result's shape"):
        agrad.add(x, 1.0, out=agrad.empty(3))
    with pytest.raises(TypeError, match="size"):
        agrad.randn(2, size=(2,))


def test_typed_and_new_constructors_match_pytorch(torch):
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        t, a = getattr(torch, name)([1, 0, 2]), getattr(agrad, name)([1, 0, 2])
        assert str(a.dtype) == str(t.dtype) and a.tolist() == t.tolist()
        assert a.type() == t.type() and isinstance(a, getattr(agrad, name))
        assert getattr(agrad, name)(2, 3).shape == getattr(torch, name)(2, 3).shape
    assert not isinstance(agrad.zeros(2), agrad.LongTensor)
    assert agrad.zeros(2).type(agrad.int64).dtype == agrad.int64
    x, t = agrad.tensor([1.0], dtype=agrad.float32), torch.tensor([1.0], dtype=torch.float32)
    for made, expected in [
        (x.new_zeros(2, 3), t.new_zeros(2, 3)),
        (x.new_ones((2,)), t.new_ones((2,))),
        (x.new_full((2,), 7), t.new_full((2,), 7)),
        (x.new_tensor([1, 2]), t.new_tensor([1, 2])),
        (x.new_zeros(2, dtype=agrad.int64), t.new_zeros(2, dtype=torch.int64)),
    ]:
        assert str(made.dtype) == str(expected.dtype) and made.tolist() == expected.tolist()


def test_generators_repeat_and_are_independent():
    g1, g2 = agrad.Generator().manual_seed(7), agrad.Generator().manual_seed(7)
    assert agrad.randn(3, generator=g1).tolist() == agrad.randn(3, generator=g2).tolist()
    assert agrad.manual_seed(3) is agrad.default_generator
    a = agrad.rand(4)
    agrad.manual_seed(3)
    noise = agrad.rand(4, generator=agrad.Generator().manual_seed(0))  # not the default's
    assert agrad.rand(4).tolist() == a.tolist() and noise.tolist() != a.tolist()
    g = agrad.Generator().manual_seed(11)
    state = g.get_state()
    first = agrad.randint(0, 100, (5,), generator=g).tolist()
    g.set_state(state)
    assert agrad.randint(0, 100, (5,), generator=g).tolist() == first
    assert g.initial_seed() == 11
    w = agrad.zeros(3)
    w.normal_(generator=agrad.Generator().manual_seed(5))
    assert w.tolist() == agrad.zeros(3).normal_(generator=agrad.Generator().manual_seed(5)).tolist()
    with pytest.raises(TypeError, match="agrad.Generator"):
        agrad.randn(2, generator=np.random.default_rng(0))


def test_multinomial_randperm_and_normal():
    g = agrad.Generator().manual_seed(0)
    probs = agrad.tensor([0.1, 0.0, 0.6, 0.3])
    draws = agrad.multinomial(probs, 2000, replacement=True, generator=g)
    assert draws.dtype == agrad.int64 and draws.shape == (2000,)
    counts = np.bincount(draws.numpy(), minlength=4) / 2000
    assert counts[1] == 0 and abs(counts[2] - 0.6) < 0.05  # 0.6 ± 4.5 standard deviations
    rows = agrad.multinomial(agrad.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 3.0]]), 2)
    assert rows.shape == (2, 2) and sorted(rows[0].tolist()) == [0, 2]
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        agrad.multinomial(probs, 4)
    with pytest.raises(RuntimeError, match="element < 0"):
        agrad.multinomial(agrad.tensor([0.5, -0.1]), 1)
    assert sorted(agrad.randperm(10).tolist()) == list(range(10))
    n = agrad.normal(2.0, 3.0, (4000,), generator=agrad.Generator().manual_seed(1))
    assert abs(n.mean().item() - 2.0) < 0.25 and abs(n.std().item() - 3.0) < 0.25
    z = agrad.normal(agrad.zeros(3), agrad.tensor([0.0, 0.0, 0.0]))
    assert z.tolist() == [0.0, 0.0, 0.0]
    assert agrad.normal(0.0, 1.0, (2,), requires_grad=True).requires_grad


def test_histogram_and_size_keyword_constructors_match_pytorch(torch):
    value = [0.1, 0.4, 0.4, 0.9, -2.0, 3.5, 1.25]
    for kwargs in ({"bins": 4}, {"bins": 3, "density": True}, {"bins": 5, "range": (0.0, 1.0)}):
        th, te = torch.histogram(torch.tensor(value), **kwargs)
        ah, ae = agrad.histogram(agrad.tensor(value), **kwargs)
        np.testing.assert_allclose(ah.numpy(), th.numpy(), rtol=1e-12)
        np.testing.assert_allclose(ae.numpy(), te.numpy(), rtol=1e-12)
    for name in ("zeros", "ones", "empty"):
        made = getattr(agrad, name)(size=(2, 3), requires_grad=True)
        assert made.shape == (2, 3) and made.requires_grad
    with pytest.raises(TypeError, match="unexpected keyword"):
        agrad.zeros(2, sizes=(2,))
