"""gather, take_along_dim, index_select, masked_select, scatter(_), scatter_add(_) against
PyTorch: values, gradients to every tensor operand (repeated indices included), and the
errors PyTorch raises where NumPy would wrap a negative index or broadcast a short one.

The calls mirror how PyTorch code uses them: picking the logit of each sample's class
(``logits.gather(1, y[:, None])``), embedding-style row lookups, one-hot and histogram
building with scatter/scatter_add, and masked selection of positive entries."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
S = RNG.standard_normal((3, 4))
IDX = np.array([[0, 3, 3], [1, 1, 0], [2, 0, 1]])  # repeats: gradients must add up
ROWS = np.array([2, 0, 2, 1])

# name -> fn(lib, x, s): s is a second differentiable operand (a source) where one is taken
CASES = {
    "gather_dim1": lambda t, x, s: x.gather(1, t.tensor(IDX)),
    "gather_dim0": lambda t, x, s: t.gather(x, 0, t.tensor(IDX[:2] % 3)),
    "gather_neg_dim": lambda t, x, s: x.gather(-1, t.tensor(IDX[:, :2])),
    "gather_class_logit": lambda t, x, s: x.gather(1, t.tensor([[3], [0], [2]])).squeeze(1),
    "gather_0d": lambda t, x, s: x[1, 2].gather(0, t.tensor(0)) * 3,
    "take_along_dim": lambda t, x, s: t.take_along_dim(x, t.tensor(IDX[:1]), 1),
    "take_along_dim_none": lambda t, x, s: t.take_along_dim(x, t.tensor([0, 11, 11])),
    "take_along_argsort": lambda t, x, s: t.take_along_dim(x, x.argsort(dim=1), dim=1),
    "index_select_rows": lambda t, x, s: x.index_select(0, t.tensor(ROWS)),
    "index_select_cols": lambda t, x, s: t.index_select(x, 1, t.tensor([3, 3, 0])),
    "index_select_0d_index": lambda t, x, s: x.index_select(1, t.tensor(2)),
    "masked_select": lambda t, x, s: x.masked_select(x > 0),
    "masked_select_broadcast": lambda t, x, s: x.masked_select(
        t.tensor([True, False, False, True])
    ),
    "scatter_src": lambda t, x, s: x.scatter(1, t.tensor([[0, 2], [3, 1], [1, 1]]), s[:, :2] * 2),
    "scatter_value": lambda t, x, s: x.scatter(0, t.tensor([[2, 0, 1, 1]]), 7.5),
    "scatter_value_kw": lambda t, x, s: t.scatter(x, 1, t.tensor([[1], [0], [3]]), value=-1.0),
    "scatter_add": lambda t, x, s: x.scatter_add(1, t.tensor(IDX), s[:, :3] * s[:, :3]),
    "scatter_add_dim0": lambda t, x, s: t.scatter_add(x, 0, t.tensor([[0, 0, 2, 0]]), s[:1]),
    "scatter_add_histogram": lambda t, x, s: t.zeros(5, dtype=t.float64).scatter_add(
        0, t.tensor([4, 1, 1, 0, 4, 4]), s.reshape(-1)[:6]
    ),
}


def _run(lib, name):
    x = lib.tensor(X, requires_grad=True)
    s = lib.tensor(S, requires_grad=True)
    y = CASES[name](lib, x, s)
    w = lib.tensor(np.cos(np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    grads = [None if g is None else g.detach().numpy() for g in (x.grad, s.grad)]
    return y.detach().numpy(), grads


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_values_and_gradients(name):
    value, grads = _run(agrad, name)
    t_value, t_grads = _run(torch, name)
    np.testing.assert_allclose(value, t_value, rtol=1e-12, atol=1e-12)
    for g, tg in zip(grads, t_grads, strict=True):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-12)


def _inplace(lib, which):
    x = lib.tensor(X, requires_grad=True)
    s = lib.tensor(S, requires_grad=True)
    y = x * 1.0
    if which == "scatter_":
        y.scatter_(1, lib.tensor([[0], [2], [2]]), s[:, :1] * 3)
    elif which == "scatter_value_":
        y.scatter_(0, lib.tensor([[1, 1, 0, 2]]), 0.5)
    else:
        y.scatter_add_(1, lib.tensor(IDX), s[:, 1:])
    (y * y).sum().backward()
    return y.detach().numpy(), x.grad.numpy(), None if s.grad is None else s.grad.numpy()


@pytest.mark.parametrize("which", ["scatter_", "scatter_value_", "scatter_add_"])
def test_in_place_variants_match_pytorch(which):
    for mine, theirs in zip(_inplace(agrad, which), _inplace(torch, which), strict=True):
        if theirs is None:
            assert mine is None
        else:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_scatter_into_a_leaf_that_requires_grad_is_refused_as_pytorch():
    for lib in (agrad, torch):
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.scatter_(1, lib.tensor([[0], [1], [2]]), 1.0)


BAD = {
    "gather_float_index": lambda t, x: x.gather(1, t.tensor([[0.0, 1.0]])),
    "gather_rank": lambda t, x: x.gather(1, t.tensor([0, 1])),
    "gather_size": lambda t, x: x.gather(1, t.zeros(4, 1, dtype=t.int64)),
    "gather_out_of_bounds": lambda t, x: x.gather(1, t.tensor([[0, 4]])),
    "gather_negative": lambda t, x: x.gather(1, t.tensor([[0, -1]])),  # NumPy would wrap
    "gather_dim": lambda t, x: x.gather(2, t.tensor([[0, 1]])),
    "index_select_negative": lambda t, x: x.index_select(1, t.tensor([-1])),
    "index_select_out_of_range": lambda t, x: x.index_select(1, t.tensor([4])),
    "index_select_matrix": lambda t, x: x.index_select(1, t.tensor([[0]])),
    "index_select_float": lambda t, x: x.index_select(1, t.tensor([0.0])),
    "scatter_out_of_bounds": lambda t, x: x.scatter(1, t.tensor([[4]]), x[:1, :1]),
    "scatter_src_too_small": lambda t, x: x.scatter(1, t.tensor([[0, 1, 2]]), t.ones(1, 2)),
    "scatter_add_negative": lambda t, x: x.scatter_add(1, t.tensor([[-1]]), t.ones(1, 1)),
    "masked_select_float_mask": lambda t, x: x.masked_select(x),
    "masked_select_shape": lambda t, x: x.masked_select(t.tensor([True, False])),
    "take_along_dim_shape": lambda t, x: t.take_along_dim(x, t.tensor([[0], [1]]), 1),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_calls_raise_as_pytorch(name):
    """Same exception class as PyTorch's (RuntimeError or IndexError), and never a number."""
    with pytest.raises(Exception) as theirs:
        BAD[name](torch, torch.tensor(X))
    with pytest.raises(type(theirs.value)) as mine:
        BAD[name](agrad, agrad.tensor(X))
    assert isinstance(mine.value, agrad.AgradError)  # the CLI reports it as exit 2


@pytest.mark.parametrize(
    "name", ["gather_float_index", "gather_rank", "gather_out_of_bounds", "gather_negative",
             "index_select_matrix", "scatter_out_of_bounds", "masked_select_float_mask"],
)  # fmt: skip
def test_error_texts_are_pytorchs(name):
    with pytest.raises(Exception) as theirs:
        BAD[name](torch, torch.tensor(X))
    with pytest.raises(Exception) as mine:
        BAD[name](agrad, agrad.tensor(X))
    assert str(mine.value) == str(theirs.value).splitlines()[0]


def test_gather_gradient_matches_finite_differences():
    """Independent of PyTorch: the gather Jacobian by central differences."""
    index = agrad.tensor(IDX)

    def f(a):
        return (agrad.tensor(a).gather(1, index) ** 2 * agrad.tensor(S[:, :3])).sum().item()

    x = agrad.tensor(X, requires_grad=True)
    (x.gather(1, index) ** 2 * agrad.tensor(S[:, :3])).sum().backward()
    numeric = np.zeros_like(X)
    for k in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[k] = 1e-6
        numeric[k] = (f(X + e) - f(X - e)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_a_source_larger_than_the_index_gets_gradient_only_where_read():
    """PyTorch reads src only at index's shape; its backward then fails ("invalid gradient")
    for a larger src. agrad gives the larger src zeros elsewhere: checked by algebra."""
    x = agrad.tensor(X, requires_grad=True)
    s = agrad.tensor(S, requires_grad=True)
    index = np.array([[0, 2], [3, 1], [1, 1]])
    y = x.scatter(1, agrad.tensor(index), s * 2)
    expected = X.copy()
    for i, j in np.ndindex(index.shape):
        expected[i, index[i, j]] = 2 * S[i, j]
    np.testing.assert_allclose(y.detach().numpy(), expected)
    y.sum().backward()
    want_s = np.zeros_like(S)
    want_s[:, :2] = 2.0
    want_x = np.ones_like(X)
    for i, j in np.ndindex(index.shape):
        want_x[i, index[i, j]] = 0.0
    np.testing.assert_array_equal(s.grad.numpy(), want_s)
    np.testing.assert_array_equal(x.grad.numpy(), want_x)
