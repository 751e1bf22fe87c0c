"""Binary cross-entropy at and near the probability edges, against PyTorch.

PyTorch clamps each log of the loss at -100 and its backward is
g·(p - y)/max((1 - p)·p, ε) with ε = float32(1e-12), *not* the derivative of the clamped
loss: at a saturated wrong prediction (p = 0, y = 1) the gradient is about -1e12. QA
round 20 found agrad's gradient 0 there (with the wrong sign at p = 1), 1000 times too
large at p = 1e-15, and the float32 loss 99.983 instead of 100 (exp(-100) is a float32
denormal). Every expected value here comes from PyTorch run on the same inputs (or, for
the saturation constants, from algebra: 100 and 1/ε)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad.errors import AgradValueError

PS = [0.0, 1e-15, 1e-12, 0.5, 1 - 1e-12, 1.0]
YS = [0.0, 0.3, 1.0]
GRID = list(itertools.product(PS, YS))
P = np.array([p for p, _ in GRID])
Y = np.array([y for _, y in GRID])
WEIGHT = np.linspace(0.25, 2.0, len(GRID))
DTYPES = ["float64", "float32"]
TOL = {"float64": dict(rtol=1e-12, atol=0.0), "float32": dict(rtol=2e-6, atol=0.0)}


def _bce(lib, dtype, reduction, weight, module=False, target_grad=False):
    """Loss, the input's gradient and the target's (for a fixed cotangent), as arrays."""
    dt = getattr(lib, dtype)
    p = lib.tensor(P, dtype=dt, requires_grad=True)
    y = lib.tensor(Y, dtype=dt, requires_grad=target_grad)
    w = None if weight is None else lib.tensor(weight, dtype=dt)
    if module:
        loss = lib.nn.BCELoss(weight=w, reduction=reduction)(p, y)
    else:
        loss = lib.nn.functional.binary_cross_entropy(p, y, w, reduction=reduction)
    cotangent = np.linspace(-1.5, 2.0, loss.numel()).reshape(tuple(loss.shape))
    loss.backward(lib.tensor(cotangent, dtype=dt))
    grads = [p.grad.numpy()] + ([y.grad.numpy()] if target_grad else [])
    return [loss.detach().numpy()] + grads, type(loss.grad_fn).__name__


def _assert_same(ours, theirs, dtype):
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        assert np.array_equal(np.isinf(a), np.isinf(b)) and np.array_equal(np.isnan(a), np.isnan(b))
        finite = np.isfinite(b)
        np.testing.assert_array_equal(np.sign(a[finite]), np.sign(b[finite]))
        np.testing.assert_allclose(a[finite], b[finite], **TOL[dtype])
        np.testing.assert_array_equal(a[~finite], b[~finite])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("module", [False, True], ids=["functional", "BCELoss"])
def test_loss_and_gradient_on_the_edge_grid_match_pytorch(dtype, reduction, weighted, module):
    torch = require_torch()
    weight = WEIGHT if weighted else None
    ours, our_name = _bce(agrad, dtype, reduction, weight, module)
    theirs, their_name = _bce(torch, dtype, reduction, weight, module)
    _assert_same(ours, theirs, dtype)
    assert our_name == their_name == "BinaryCrossEntropyBackward0"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_target_gradient_matches_pytorch(dtype, reduction):
    """-logit(p)·g: ±inf at p = 0 and 1, as PyTorch's."""
    torch = require_torch()
    ours, _ = _bce(agrad, dtype, reduction, WEIGHT, target_grad=True)
    theirs, _ = _bce(torch, dtype, reduction, WEIGHT, target_grad=True)
    _assert_same(ours, theirs, dtype)


def test_saturation_constants_from_algebra():
    """The loss of a certain wrong prediction is 100 (the clamp) in float32 as in float64,
    and its gradient -1/ε with ε = float32(1e-12), pointing back into (0, 1)."""
    for dtype in (agrad.float32, agrad.float64):
        p = agrad.tensor([0.0, 1.0], dtype=dtype, requires_grad=True)
        loss = agrad.nn.functional.binary_cross_entropy(
            p, agrad.tensor([1.0, 0.0], dtype=dtype), reduction="sum"
        )
        assert loss.item() == 200.0
        loss.backward()
        eps = np.float32(1e-12) if dtype == agrad.float32 else float(np.float32(1e-12))
        dt = p.grad.numpy().dtype
        expected = np.array([-1.0, 1.0], dtype=dt) / np.asarray(eps, dt)
        np.testing.assert_array_equal(p.grad.numpy(), expected)


def test_qa_reproducer():
    torch = require_torch()
    results = []
    for lib in (agrad, torch):
        p = lib.tensor([0.0, 1e-15, 1.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.0, 1.0, 0.0], dtype=lib.float64)
        lib.nn.functional.binary_cross_entropy(p, y, reduction="none").sum().backward()
        q = lib.tensor([0.0], dtype=lib.float32)
        value = lib.nn.functional.binary_cross_entropy(q, lib.tensor([1.0], dtype=lib.float32))
        results.append((p.grad.tolist(), value.item()))
    assert results[0][1] == results[1][1] == 100.0
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_double_backward_matches_pytorch(dtype, reduction):
    """create_graph=True: the gradient's own gradient (PyTorch's double-backward formulas,
    BinaryCrossEntropyBackwardBackward0) with respect to the input and the target."""
    torch = require_torch()
    p0 = np.array([0.0, 1e-15, 0.3, 0.7, 1.0, 0.5])
    y0 = np.array([1.0, 1.0, 0.2, 0.3, 0.0, 0.5])
    w0 = np.array([1.0, 0.5, 2.0, 1.5, 1.0, 0.25])
    out = {}
    for lib in (agrad, torch):
        dt = getattr(lib, dtype)
        p = lib.tensor(p0, dtype=dt, requires_grad=True)
        y = lib.tensor(y0, dtype=dt, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy(
            p, y, lib.tensor(w0, dtype=dt), reduction=reduction
        )
        v = np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape))
        v = lib.tensor(v, dtype=dt, requires_grad=True)
        (g,) = lib.autograd.grad(loss, p, v, create_graph=True)
        u = lib.tensor(np.linspace(-1.0, 1.0, 6), dtype=dt)
        second = lib.autograd.grad((g * u).sum(), (p, y, v))
        out[lib] = ([g.detach().numpy()] + [s.numpy() for s in second], type(g.grad_fn).__name__)
    _assert_same(out[agrad][0], out[torch][0], dtype)
    assert out[agrad][1] == out[torch][1] == "BinaryCrossEntropyBackwardBackward0"


def test_refusals_match_pytorch():
    torch = require_torch()
    for p, y in [([0.5, 1.5], [0.0, 1.0]), ([np.nan], [1.0]), ([0.5], [1.5]), ([0.5], [np.nan])]:
        messages = []
        for lib in (agrad, torch):
            with pytest.raises(RuntimeError) as info:
                lib.nn.functional.binary_cross_entropy(lib.tensor(p), lib.tensor(y))
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    with pytest.raises(AgradValueError):  # (also agrad's own class)
        agrad.nn.BCELoss()(agrad.tensor([-0.1]), agrad.tensor([0.0]))
    w = {lib: lib.tensor([1.0, 2.0], requires_grad=True) for lib in (agrad, torch)}
    messages = []
    for lib in (agrad, torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.binary_cross_entropy(
                lib.tensor([0.3, 0.6]), lib.tensor([0.0, 1.0]), w[lib]
            )
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pos_weight", [False, True], ids=["plain", "pos_weight"])
def test_with_logits_at_extreme_logits_matches_pytorch(dtype, pos_weight):
    torch = require_torch()
    x0 = np.array([1e3, -1e3, 1e3, -1e3, 0.0, 40.0, -40.0, 1e3])
    y0 = np.array([1.0, 1.0, 0.0, 0.0, 0.3, 0.7, 0.7, 0.5])
    pw0 = np.array([3.0, 0.5, 1.0, 2.0, 1.0, 1.0, 4.0, 0.25])
    out = {}
    for lib in (agrad, torch):
        dt = getattr(lib, dtype)
        x = lib.tensor(x0, dtype=dt, requires_grad=True)
        y = lib.tensor(y0, dtype=dt, requires_grad=True)
        pw = lib.tensor(pw0, dtype=dt) if pos_weight else None
        loss = lib.nn.functional.binary_cross_entropy_with_logits(
            x, y, reduction="none", pos_weight=pw
        )
        loss.backward(lib.tensor(np.linspace(0.5, 2.0, 8), dtype=dt))
        out[lib] = [loss.detach().numpy(), x.grad.numpy(), y.grad.numpy()]
    for a, b in zip(out[agrad], out[torch], strict=True):
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, b, rtol=TOL[dtype]["rtol"] * 100, atol=1e-6)
