"""tensor_split, hsplit, vsplit, dsplit, Tensor.pow_ and the grad_fn names of fill_ and
zero_, against PyTorch: values, gradients of a weighted sum of every piece, grad_fn names,
views of the input, in-place writes into the pieces, and the same refusals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch
from idioms._registry import raised

import agrad

X = np.arange(1.0, 25.0).reshape(2, 3, 4) / 7


@pytest.fixture
def torch():
    torch = require_torch()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # agrad's default
    yield torch
    torch.set_default_dtype(previous)


def _run(lib, fn, value=X):
    x = lib.tensor(value, requires_grad=True)
    y = x * 1.0
    pieces = fn(lib, y)
    loss = sum(
        (p * (lib.arange(1.0, p.numel() + 1.0).reshape(p.shape) + 0.5 * k)).sum()
        for k, p in enumerate(pieces)
    )
    loss.backward()
    return (
        [p.detach().numpy().copy() for p in pieces],
        [type(p.grad_fn).__name__ for p in pieces],
        # (an empty piece shares no memory: agrad, as NumPy, does not call it a view)
        [p._base is y for p in pieces if p.numel()],
        x.grad.numpy().copy(),
    )


def _same(torch, fn, value=X):
    ours, theirs = _run(agrad, fn, value), _run(torch, fn, value)
    assert len(ours[0]) == len(theirs[0])
    for a, b in zip(ours[0], theirs[0], strict=True):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert ours[1] == theirs[1]  # SliceBackward0 each
    assert ours[2] == theirs[2]  # views of the input
    np.testing.assert_array_equal(ours[3], theirs[3])


SPLITS = {
    "sections_uneven": lambda t, y: t.tensor_split(y, 3, dim=2),
    "sections_more_than_size": lambda t, y: t.tensor_split(y, 5, dim=1),
    "sections_one": lambda t, y: t.tensor_split(y, 1),
    "sections_negative_dim": lambda t, y: y.tensor_split(2, -1),
    "indices_list": lambda t, y: t.tensor_split(y, [1, 3], dim=2),
    "indices_tuple": lambda t, y: y.tensor_split((2,), dim=1),
    "indices_unsorted": lambda t, y: t.tensor_split(y, [3, 1], dim=2),
    "indices_negative": lambda t, y: t.tensor_split(y, [-1], dim=2),
    "indices_past_end": lambda t, y: t.tensor_split(y, [2, 9], dim=2),
    "indices_empty": lambda t, y: t.tensor_split(y, [], dim=2),
    "indices_tensor": lambda t, y: t.tensor_split(y, t.tensor([1, 2]), dim=2),
    "sections_tensor_0d": lambda t, y: y.tensor_split(t.tensor(3), dim=2),
    "keyword_sections": lambda t, y: t.tensor_split(y, sections=2, dim=2),
    "keyword_indices": lambda t, y: t.tensor_split(y, indices=[1], dim=1),
    "keyword_tensor": lambda t, y: t.tensor_split(y, tensor_indices_or_sections=t.tensor([1])),
    "hsplit": lambda t, y: t.hsplit(y, 3),
    "hsplit_indices": lambda t, y: y.hsplit([1]),
    "vsplit": lambda t, y: t.vsplit(y, 2),
    "vsplit_indices": lambda t, y: y.vsplit((1,)),
    "dsplit": lambda t, y: t.dsplit(y, 2),
    "dsplit_indices": lambda t, y: y.dsplit([1, 3]),
    "hsplit_1d": lambda t, y: t.hsplit(y.reshape(-1), 4),
    "hsplit_1d_indices": lambda t, y: y.reshape(-1).hsplit([5, 10]),
    "vsplit_2d": lambda t, y: y[0].vsplit([2]),
}


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_values_gradients_and_names_match_pytorch(torch, name):
    _same(torch, SPLITS[name])


def test_pieces_are_views_sharing_storage_and_writable_as_pytorch(torch):
    def run(lib, split):
        x = lib.tensor(X, requires_grad=True)
        y = x * 1.0
        pieces = split(lib, y)
        pieces[0].mul_(3.0)  # allowed: these are not one multi-output view function
        pieces[-1].add_(1.0)
        (y.sin() * lib.arange(24.0).reshape(2, 3, 4)).sum().backward()
        return y.detach().numpy().copy(), x.grad.numpy().copy(), type(y.grad_fn).__name__

    for split in (SPLITS["sections_uneven"], SPLITS["indices_list"], SPLITS["hsplit"]):
        ours, theirs = run(agrad, split), run(torch, split)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-13)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13)
        assert ours[2] == theirs[2] == "CopySlices"
    y = agrad.zeros(2, 6)
    for p in agrad.tensor_split(y, 4, dim=1):
        assert np.shares_memory(p.numpy(), y.numpy())


def test_a_write_into_the_input_is_seen_through_the_pieces(torch):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = x * 1.0
        a, b = lib.tensor_split(y, [1], dim=2)
        y.mul_(x)
        ((a * 2).sum() + b.exp().sum()).backward()
        return a.detach().numpy().copy(), b.detach().numpy().copy(), x.grad.numpy().copy()

    for ours, theirs in zip(run(agrad), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13)


def _error(lib, fn):
    exc = raised(lambda: fn(lib))  # (the refusal itself is compared)
    assert exc is not None, f"{lib.__name__} did not refuse"
    return exc


REFUSALS = {
    "zero_sections": lambda t: t.tensor_split(t.ones(4), 0),
    "negative_sections": lambda t: t.tensor_split(t.ones(4), -2),
    "zero_dim_input": lambda t: t.tensor_split(t.tensor(1.0), 2),
    "dim_out_of_range": lambda t: t.tensor_split(t.ones(4), 2, dim=1),
    "float_tensor_indices": lambda t: t.tensor_split(t.ones(4), t.tensor([1.0])),
    "int32_tensor_indices": lambda t: t.tensor_split(t.ones(4), t.tensor([1], dtype=t.int32)),
    "2d_tensor_indices": lambda t: t.tensor_split(t.ones(4), t.tensor([[1]])),
    "float_sections": lambda t: t.tensor_split(t.ones(4), 2.0),
    "bool_sections": lambda t: t.tensor_split(t.ones(4), True),
    "float_in_indices": lambda t: t.tensor_split(t.ones(4), [1.5]),
    "hsplit_0d": lambda t: t.hsplit(t.tensor(1.0), 1),
    "hsplit_not_divisible": lambda t: t.hsplit(t.ones(2, 3), 2),
    "hsplit_1d_not_divisible": lambda t: t.hsplit(t.ones(5), 2),
    "hsplit_zero": lambda t: t.hsplit(t.ones(2, 3), 0),
    "hsplit_negative": lambda t: t.hsplit(t.ones(2, 3), -1),
    "hsplit_tensor": lambda t: t.hsplit(t.ones(2, 4), t.tensor([1])),
    "vsplit_1d": lambda t: t.vsplit(t.ones(4), 2),
    "vsplit_not_divisible": lambda t: t.ones(3, 2).vsplit(2),
    "dsplit_2d": lambda t: t.dsplit(t.ones(2, 2), 2),
    "dsplit_not_divisible": lambda t: t.ones(2, 2, 3).dsplit(2),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_match_pytorch(torch, name):
    ours, theirs = _error(agrad, REFUSALS[name]), _error(torch, REFUSALS[name])
    assert isinstance(ours, type(theirs)), (ours, theirs)
    if isinstance(theirs, RuntimeError):  # (TypeErrors list PyTorch's overloads)
        assert str(ours) == str(theirs)


# --- pow_ -------------------------------------------------------------------------------


POWS = {
    "square": lambda t, y, w: y.pow_(2),
    "half": lambda t, y, w: y.pow_(0.5),
    "tensor_exponent": lambda t, y, w: y.pow_(w),
    "broadcast_exponent": lambda t, y, w: y.pow_(w[0]),
    "chained": lambda t, y, w: y.pow_(2).mul_(w).pow_(1.5),
    "through_view": lambda t, y, w: y[1].pow_(3),
    "through_transpose": lambda t, y, w: y.transpose(0, 2).pow_(w.transpose(0, 2)),
}


@pytest.mark.parametrize("name", sorted(POWS))
def test_pow_in_place_matches_pytorch(torch, name):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(X[::-1].copy() + 0.5, requires_grad=True)
        y = x * 1.0
        out = POWS[name](lib, y, w)
        assert out is y or out._base is y
        (y * lib.arange(24.0).reshape(2, 3, 4)).sum().backward()
        return (y.detach().numpy().copy(), type(y.grad_fn).__name__, x.grad.numpy().copy(),
                None if w.grad is None else w.grad.numpy().copy())  # fmt: skip

    ours, theirs = run(agrad), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-13)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    assert (ours[3] is None) == (theirs[3] is None)
    if ours[3] is not None:
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


def test_pow_grad_fn_names_match_pytorch(torch):
    for lib in (agrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert type(x.clone().pow_(2).grad_fn).__name__ == "PowBackward0"
        assert type(x.clone().pow_(x).grad_fn).__name__ == "PowBackward1"


def test_pow_of_integers_in_place_matches_pytorch(torch):
    for lib in (agrad, torch):
        i = lib.tensor([1, 2, 3])
        assert i.pow_(2).tolist() == [1, 4, 9]
        assert i.dtype == lib.int64
        with lib.no_grad():
            f = lib.tensor([1.0, 4.0])
            assert f.pow_(0.5).tolist() == [1.0, 2.0]


POW_REFUSALS = {
    "leaf": lambda t: t.tensor([1.0, 2.0], requires_grad=True).pow_(2),
    "float_into_long": lambda t: t.tensor([1, 2]).pow_(0.5),
    "float_tensor_into_long": lambda t: t.tensor([1, 2]).pow_(t.tensor([0.5, 1.0])),
    "long_into_bool": lambda t: t.tensor([True]).pow_(2),
    "negative_integer_power": lambda t: t.tensor([1, 2]).pow_(-1),
    "broadcast_beyond_self": lambda t: t.tensor([1.0, 2.0]).pow_(t.tensor([[1.0], [2.0]])),
    "expanded_view": lambda t: (t.ones(1, requires_grad=True) * 1).expand(3).pow_(2),
    "split_piece": lambda t: t.split(t.ones(4, requires_grad=True) * 1, 2)[0].pow_(2),
}


@pytest.mark.parametrize("name", sorted(POW_REFUSALS))
def test_pow_refusals_match_pytorch(torch, name):
    ours, theirs = _error(agrad, POW_REFUSALS[name]), _error(torch, POW_REFUSALS[name])
    assert isinstance(ours, RuntimeError) and isinstance(theirs, RuntimeError), (ours, theirs)
    if name not in {"expanded_view", "split_piece"}:  # (agrad's words differ slightly)
        assert str(ours) == str(theirs)


def test_pow_of_a_saved_tensor_fails_at_backward_as_pytorch(torch):
    for lib in (agrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1.0
        z = y * y  # saves y
        y.pow_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        x2 = lib.tensor([1.0, 2.0], requires_grad=True)
        y2 = x2 * 1.0
        z2 = y2.exp()  # saves its output, not y2: no refusal
        y2.pow_(2)
        z2.sum().backward()
        np.testing.assert_allclose(x2.grad.numpy(), np.exp([1.0, 2.0]))


# --- fill_ and zero_ grad_fn names --------------------------------------------------------


def test_fill_and_zero_grad_fn_names_match_pytorch(torch):
    def names(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = []
        for write in (
            lambda y: y.fill_(2.0),
            lambda y: y.fill_(lib.tensor(2.0)),
            lambda y: y.fill_(lib.tensor(2.0, requires_grad=True)),
            lambda y: y.zero_(),
        ):
            y = x.clone()
            write(y)
            out.append(type(y.grad_fn).__name__)
        y = x.clone()
        v = y[1:]
        v.fill_(2.0)
        out += [type(v.grad_fn).__name__, type(y.grad_fn).__name__]
        return out

    assert names(agrad) == names(torch)
    assert names(agrad)[:4] == ["FillBackward2", "FillBackward3", "FillBackward3", "ZeroBackward0"]


def test_fill_gradients_match_pytorch(torch):
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        v = lib.tensor(0.5, requires_grad=True)
        y = x * x
        y.fill_(v)
        z = x * 1.0
        z[1:].fill_(4.0)
        ((y + z) * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return x.grad.numpy().copy(), v.grad.numpy().copy()

    for ours, theirs in zip(run(agrad), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13)


def test_fill_with_a_tensor_of_one_dimension_is_refused_as_pytorch(torch):
    for lib in (agrad, torch):
        with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
            lib.zeros(3).fill_(lib.tensor([1.0]))
