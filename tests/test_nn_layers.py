"""agrad.nn's layers against torch.nn's with the same parameters (copied by name), float64:
outputs, the input's and every parameter's gradient for a random cotangent, the buffers
(running statistics), and the repr, to 1e-10. agrad's generator is not PyTorch's, so the
parameters travel from agrad to PyTorch; the initialisations are checked in test_nn_init."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch
from torch_resnet import copy_state

import agrad
from agrad import nn

TOL = dict(rtol=1e-10, atol=1e-12)


def _tensors(lib, arrays):
    out = []
    for a in arrays:
        if a.dtype.kind == "f":
            t = lib.tensor(a, requires_grad=True) if lib is agrad else lib.tensor(
                a, dtype=lib.float64, requires_grad=True)  # fmt: skip
        else:
            t = lib.tensor(a)
        out.append(t)
    return out


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def run_both(ours, theirs, *arrays, seed=0):
    """Forward both on the same inputs, backward a random cotangent, compare everything."""
    torch = require_torch()
    theirs = copy_state(torch, ours, theirs.double())
    xa, xt = _tensors(agrad, arrays), _tensors(torch, arrays)
    out_a, out_t = ours(*xa), theirs(*xt)
    if isinstance(out_t, tuple):  # (values, indices)
        np.testing.assert_array_equal(np.asarray(out_a[1]), out_t[1].numpy())
    ya, yt = _first(out_a), _first(out_t)
    assert ya.shape == tuple(yt.shape)
    np.testing.assert_allclose(np.asarray(ya.detach()), yt.detach().numpy(), **TOL)
    assert ya.requires_grad == yt.requires_grad
    if yt.requires_grad:
        v = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
        ya.backward(agrad.tensor(v))
        yt.backward(torch.tensor(v))
        for a, t in zip(xa, xt, strict=True):
            if t.grad is not None:
                np.testing.assert_allclose(np.asarray(a.grad), t.grad.numpy(), **TOL)
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
            if q.grad is None:
                assert p.grad is None, name
            else:
                np.testing.assert_allclose(np.asarray(p.grad), q.grad.numpy(), **TOL, err_msg=name)
    for (name, b), c in zip(ours.named_buffers(), theirs.buffers(), strict=True):
        np.testing.assert_allclose(np.asarray(b), c.numpy(), **TOL, err_msg=name)
    assert repr(ours) == repr(theirs)
    return ours, theirs


R = np.random.default_rng(7)
X2, X3, X4 = (
    R.standard_normal((3, 4)),
    R.standard_normal((2, 3, 5)),
    R.standard_normal((2, 4, 6, 7)),
)

# (id, agrad module, torch module, inputs): each is run by run_both.
CASES = [
    ("linear", lambda m: m.Linear(4, 3), [X2]),
    ("linear-3d-nobias", lambda m: m.Linear(5, 2, bias=False), [X3]),
    ("bilinear", lambda m: m.Bilinear(4, 5, 2), [X2, R.standard_normal((3, 5))]),
    ("embedding", lambda m: m.Embedding(6, 3), [np.array([[0, 2, 5], [5, 1, 1]])]),
    ("embedding-padding", lambda m: m.Embedding(6, 3, padding_idx=1), [np.array([1, 2, 1, 4])]),
    ("conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), [X3]),
    ("conv1d-groups", lambda m: m.Conv1d(3, 6, 2, dilation=2, groups=3, bias=False), [X3]),
    ("conv2d", lambda m: m.Conv2d(4, 3, 3), [X4]),
    (
        "conv2d-all",
        lambda m: m.Conv2d(
            4, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2, bias=False
        ),
        [X4],
    ),  # fmt: skip
    ("conv2d-same-even", lambda m: m.Conv2d(4, 2, 4, padding="same"), [X4]),
    ("conv2d-same-dilated", lambda m: m.Conv2d(4, 2, 3, padding="same", dilation=2), [X4]),
    ("conv2d-valid", lambda m: m.Conv2d(4, 2, 2, padding="valid"), [X4]),
    ("conv2d-unbatched", lambda m: m.Conv2d(4, 2, 3, padding=1), [X4[0]]),
    ("conv2d-depthwise", lambda m: m.Conv2d(4, 4, 3, groups=4, padding=2, dilation=2), [X4]),
    *[
        (
            f"conv2d-{mode}",
            lambda m, mode=mode: m.Conv2d(4, 2, 3, padding=(2, 1), padding_mode=mode),
            [X4],
        )
        for mode in ("reflect", "replicate", "circular")
    ],  # fmt: skip
    ("maxpool", lambda m: m.MaxPool2d(3, 2, 1), [X4]),
    ("maxpool-ceil", lambda m: m.MaxPool2d(2, ceil_mode=True), [X4]),
    ("maxpool-dilated", lambda m: m.MaxPool2d(2, stride=1, dilation=2), [X4]),
    ("maxpool-indices", lambda m: m.MaxPool2d(3, 2, 1, return_indices=True), [X4]),
    ("maxpool-unbatched", lambda m: m.MaxPool2d((2, 3)), [X4[0]]),
    ("avgpool", lambda m: m.AvgPool2d(3, 2, 1), [X4]),
    ("avgpool-ceil", lambda m: m.AvgPool2d(2, ceil_mode=True, count_include_pad=False), [X4]),
    ("avgpool-divisor", lambda m: m.AvgPool2d((2, 3), stride=1, divisor_override=4), [X4]),
    ("adaptive", lambda m: m.AdaptiveAvgPool2d((4, 3)), [X4]),
    ("adaptive-1", lambda m: m.AdaptiveAvgPool2d(1), [X4]),
    ("adaptive-none", lambda m: m.AdaptiveAvgPool2d((None, 2)), [X4]),
    ("batchnorm1d", lambda m: m.BatchNorm1d(3), [X2.T.copy()]),
    ("batchnorm1d-3d", lambda m: m.BatchNorm1d(3, momentum=0.3), [X3]),
    ("batchnorm2d", lambda m: m.BatchNorm2d(4), [X4]),
    ("batchnorm2d-plain", lambda m: m.BatchNorm2d(4, affine=False, eps=1e-3), [X4]),
    ("batchnorm2d-untracked", lambda m: m.BatchNorm2d(4, track_running_stats=False), [X4]),
    ("layernorm", lambda m: m.LayerNorm(4), [X2]),
    ("layernorm-2d", lambda m: m.LayerNorm((6, 7), eps=1e-3), [X4]),
    ("layernorm-plain", lambda m: m.LayerNorm(5, elementwise_affine=False), [X3]),
    ("layernorm-nobias", lambda m: m.LayerNorm(5, bias=False), [X3]),
    ("relu", lambda m: m.ReLU(), [X2]),
    ("leakyrelu", lambda m: m.LeakyReLU(0.2), [X2]),
    ("gelu", lambda m: m.GELU(), [X3]),
    ("gelu-tanh", lambda m: m.GELU(approximate="tanh"), [X3]),
    ("tanh", lambda m: m.Tanh(), [X2]),
    ("sigmoid", lambda m: m.Sigmoid(), [X2]),
    ("softmax", lambda m: m.Softmax(dim=1), [X3]),
    ("logsoftmax", lambda m: m.LogSoftmax(dim=-1), [X3]),
    ("silu", lambda m: m.SiLU(), [X2]),
    ("softplus", lambda m: m.Softplus(2.0, 3.0), [X2]),
    ("flatten", lambda m: m.Flatten(), [X4]),
    ("unflatten", lambda m: m.Unflatten(1, (2, 2)), [X2]),
    ("identity", lambda m: m.Identity(), [X2]),
    (
        "sequential",
        lambda m: m.Sequential(
            m.Conv2d(4, 3, 3, padding=1),
            m.BatchNorm2d(3),
            m.ReLU(),
            m.MaxPool2d(2),
            m.Flatten(),
            m.Linear(27, 5),
        ),
        [X4],
    ),  # fmt: skip
]


@pytest.mark.parametrize("make,inputs", [pytest.param(m, i, id=n) for n, m, i in CASES])
def test_layer_matches_pytorch(make, inputs):
    torch = require_torch()
    run_both(make(nn), make(torch.nn), *inputs)


@pytest.mark.parametrize("cls", ["BatchNorm1d", "BatchNorm2d"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_training_then_evaluation(cls, momentum):
    """Running statistics over several training batches (momentum, or the cumulative
    average for None), then evaluation by them; train()/eval() switch the mode."""
    torch = require_torch()
    shape = (5, 3) if cls == "BatchNorm1d" else (4, 3, 2, 3)
    ours = getattr(nn, cls)(3, momentum=momentum)
    theirs = copy_state(torch, ours, getattr(torch.nn, cls)(3, momentum=momentum).double())
    rng = np.random.default_rng(1)
    for step in range(3):
        x = rng.standard_normal(shape) * (step + 1) + step
        ours(agrad.tensor(x))
        theirs(torch.tensor(x))
    assert ours.num_batches_tracked.item() == 3
    ours.eval()
    theirs.eval()
    assert not ours.training and all(not m.training for m in ours.modules())
    run_both(ours, theirs, rng.standard_normal(shape))
    ours.train()
    assert ours.training


def test_relu_inplace_writes_its_input_and_keeps_the_gradient():
    torch = require_torch()
    x = np.array([-1.0, 0.5, 2.0, -0.3])
    results = []
    for lib in (agrad, torch):
        leaf = lib.tensor(x, requires_grad=True) if lib is agrad else lib.tensor(
            x, requires_grad=True)  # fmt: skip
        h = leaf * 2.0
        y = lib.nn.ReLU(inplace=True)(h)
        assert y is h  # the same tensor, written in place
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=y.dtype)).sum().backward()
        results.append((np.asarray(h.detach()).copy(), np.asarray(leaf.grad).copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_embedding_padding_row_gets_no_gradient():
    emb = nn.Embedding(4, 2, padding_idx=0)
    assert np.asarray(emb.weight.detach())[0].tolist() == [0.0, 0.0]
    emb(agrad.tensor([0, 1, 0, 3])).sum().backward()
    assert np.asarray(emb.weight.grad).tolist() == [[0, 0], [1, 1], [0, 0], [1, 1]]


class TestDropout:
    """agrad's generator is not PyTorch's: the mask is checked by its properties."""

    def test_training_zeroes_a_fraction_p_and_scales_the_rest(self):
        agrad.manual_seed(0)
        x = agrad.ones(200, 300, requires_grad=True)
        y = nn.Dropout(p=0.3)(x)
        out = np.asarray(y.detach())
        kept = out != 0
        assert abs(kept.mean() - 0.7) < 0.01  # 60,000 draws: 4.5 standard deviations
        np.testing.assert_allclose(out[kept], 1 / 0.7)
        y.sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), out)  # d(x·mask/(1-p))/dx

    def test_evaluation_and_p_zero_are_the_identity(self):
        x = agrad.randn(3, 4)
        d = nn.Dropout(0.5).eval()
        assert d(x) is x and nn.Dropout(0.0)(x) is x
        assert not np.asarray(nn.Dropout(1.0)(x).detach()).any()

    def test_seeded(self):
        agrad.manual_seed(5)
        a = np.asarray(nn.functional.dropout(agrad.ones(50)).detach()).copy()
        agrad.manual_seed(5)
        b = np.asarray(nn.functional.dropout(agrad.ones(50)).detach()).copy()
        np.testing.assert_array_equal(a, b)

    def test_bad_probability(self):
        with pytest.raises(ValueError, match="between 0 and 1"):
            nn.Dropout(1.5)


def test_float32_layers_give_float32():
    conv = nn.Conv2d(3, 2, 3).float()
    assert conv.weight.dtype == np.float32 and conv.bias.dtype == np.float32
    y = conv(agrad.rand(1, 3, 5, 5, dtype=agrad.float32))
    assert y.dtype == np.float32
    y.sum().backward()
    assert conv.weight.grad.dtype == np.float32
