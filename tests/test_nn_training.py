"""A small CNN trained 20 steps of SGD with momentum: the same loss curve as PyTorch's
(float64, the same initial weights, to 1e-9); and the checker, Jacobians and double
backward reaching the neural-network ops (gradcheck, gradgradcheck, batched Jacobians)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch
from torch_resnet import copy_state

import agrad
from agrad import nn
from agrad.nn import functional as F


def small_cnn(m):
    return m.Sequential(
        m.Conv2d(2, 6, 3, padding=1),
        m.BatchNorm2d(6),
        m.ReLU(inplace=True),
        m.MaxPool2d(2),
        m.Conv2d(6, 8, 3, stride=2, padding=1, groups=2, bias=False),
        m.BatchNorm2d(8),
        m.LeakyReLU(0.1),
        m.AvgPool2d(2, stride=1),
        m.AdaptiveAvgPool2d(1),
        m.Flatten(),
        m.Linear(8, 4),
    )


def train(lib, model, x, y, steps=20):
    criterion = lib.nn.CrossEntropyLoss(label_smoothing=0.05)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
    data, labels = lib.tensor(x), lib.tensor(y)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(data), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return np.array(losses)


def test_small_cnn_trains_as_pytorch():
    torch = require_torch()
    agrad.manual_seed(4)
    ours = small_cnn(nn)
    theirs = copy_state(torch, ours, small_cnn(torch.nn).double())
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 2, 12, 12))
    y = rng.integers(0, 4, 8)
    curve = train(agrad, ours, x, y)
    expected = train(torch, theirs, x, y)
    assert expected[-1] < 0.7 * expected[0]  # it really learns
    np.testing.assert_allclose(curve, expected, rtol=1e-9, atol=0)
    for (name, p), q in zip(ours.state_dict().items(), theirs.state_dict().values(), strict=True):
        np.testing.assert_allclose(np.asarray(p), q.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)
    ours.eval()
    theirs.eval()
    expected_eval = theirs(torch.tensor(x)).detach().numpy()
    got = np.asarray(ours(agrad.tensor(x)).detach())
    np.testing.assert_allclose(got, expected_eval, rtol=1e-8, atol=1e-10)


R = np.random.default_rng(8)


def _leaf(*shape):
    return agrad.tensor(R.standard_normal(shape), requires_grad=True)


CHECKED = {
    "conv2d": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2)),
               lambda: (_leaf(1, 2, 5, 5), _leaf(3, 2, 2, 2))),
    "conv2d-groups": (lambda x, w, b: F.conv2d(x, w, b, padding="same", groups=2),
                      lambda: (_leaf(2, 4, 4, 4), _leaf(2, 2, 3, 3), _leaf(2))),
    "conv1d": (lambda x, w: F.conv1d(x, w, stride=2), lambda: (_leaf(2, 3, 7), _leaf(2, 3, 3))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                   lambda: (_leaf(1, 2, 6, 5),)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
                   lambda: (_leaf(1, 2, 6, 5),)),
    "adaptive": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)), lambda: (_leaf(2, 5, 7),)),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   lambda: (_leaf(3, 2, 2, 2), _leaf(2), _leaf(2))),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (3,), w, b),
                   lambda: (_leaf(2, 3), _leaf(3), _leaf(3))),
    "cross_entropy": (lambda x: F.cross_entropy(x, agrad.tensor([2, 0, 1]), label_smoothing=0.1),
                      lambda: (_leaf(3, 4),)),
    "gelu": (lambda x: F.gelu(x), lambda: (_leaf(6),)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_gradcheck_and_gradgradcheck(name):
    fn, inputs = CHECKED[name]
    args = inputs()
    assert agrad.autograd.gradcheck(fn, args, eps=1e-6, atol=1e-7, rtol=1e-6)
    assert agrad.autograd.gradgradcheck(fn, args, eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradcheck_catches_a_broken_convolution_vjp():
    from agrad.engine.ops import TABLE

    op = TABLE["conv2d"]
    original = op.vjp

    def broken(ns, g, out, *xs, **params):
        return tuple(
            None if gi is None else gi * 1.01 for gi in original(ns, g, out, *xs, **params)
        )

    object.__setattr__(op, "vjp", broken)
    try:
        fn, inputs = CHECKED["conv2d"]
        assert not agrad.autograd.gradcheck(fn, inputs(), raise_exception=False)
    finally:
        object.__setattr__(op, "vjp", original)


def test_jacobian_in_one_batched_pass_matches_pytorch():
    """A whole Jacobian through conv -> pool -> norm is one backward pass of one-hot rows."""
    torch = require_torch()
    x = R.standard_normal((1, 2, 5, 5))
    w = R.standard_normal((3, 2, 3, 3))

    def f(lib, x_, w_):
        y = lib.nn.functional.conv2d(x_, w_, padding=1)
        y = lib.nn.functional.max_pool2d(y, 2)
        return lib.nn.functional.layer_norm(y, (2, 2)).tanh()

    ours = agrad.autograd.functional.jacobian(lambda a, b: f(agrad, a, b),
                                              (agrad.tensor(x), agrad.tensor(w)))  # fmt: skip
    theirs = torch.autograd.functional.jacobian(lambda a, b: f(torch, a, b),
                                                (torch.tensor(x), torch.tensor(w)))  # fmt: skip
    for a, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a), t.numpy(), rtol=1e-10, atol=1e-12)


def test_hessian_of_a_convolutional_loss_matches_pytorch():
    torch = require_torch()
    x = R.standard_normal((1, 1, 4, 4))
    w0 = R.standard_normal((2, 1, 2, 2))

    def loss(lib, w_):
        y = lib.nn.functional.conv2d(lib.tensor(x) if lib is agrad else torch.tensor(x), w_)
        return (lib.nn.functional.avg_pool2d(y, 2, 1) ** 2).sum()

    ours = agrad.autograd.functional.hessian(lambda w_: loss(agrad, w_), agrad.tensor(w0))
    theirs = torch.autograd.functional.hessian(lambda w_: loss(torch, w_), torch.tensor(w0))
    np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), rtol=1e-10, atol=1e-12)
