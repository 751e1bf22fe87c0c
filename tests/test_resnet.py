"""agrad.vision.models: seed 003's model sections run as written (``import agrad as torch``,
``from agrad import vision as torchvision``), and resnet18/34 are torchvision's networks:
the parameter counts torchvision documents (11,689,512 and 21,797,672), PyTorch's names and
shapes, and the same numbers as a PyTorch ResNet (tests/torch_resnet.py) holding the same
weights, forward and backward, in training and evaluation mode."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from conftest import require_torch
from torch_resnet import copy_state, torch_resnet

import agrad
from agrad import nn, vision
from agrad.errors import AgradValueError

RESNET18_PARAMETERS = 11_689_512  # torchvision's documentation of resnet18
RESNET34_PARAMETERS = 21_797_672  # ... and of resnet34


def seed_003_sections_1_and_2(torch, torchvision):
    """Seed 003, sections 一 and 二, statement by statement. The seed asks for
    ``resnet18(pretrained=True)``: weights cannot be downloaded here (see
    test_pretrained_weights_are_refused_with_a_way_out), so the model is randomly initialised."""
    model = torchvision.models.resnet18()
    data = torch.rand(1, 3, 64, 64)
    labels = torch.rand(1, 1000)
    prediction = model(data)  # 正向传播
    loss = (prediction - labels).sum()
    loss.backward()  # 反向传播
    optim = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return model, prediction, loss, optim


def seed_003_frozen_parameters(torch, torchvision, nn):
    """The frozen-parameter note that ends seed 003, as PyTorch's tutorial writes it out:
    freeze every parameter, replace the classifier, optimise only the classifier."""
    model = torchvision.models.resnet18()
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(512, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return model, optimizer


def _values(model):
    # (np.asarray, then a copy: np.array(t) of an agrad Tensor returns its array itself.)
    return {name: np.asarray(p.detach()).copy() for name, p in model.named_parameters()}


def test_seed_003_model_section_runs_as_written():
    import agrad as torch
    from agrad import vision as torchvision

    torch.manual_seed(0)
    model, prediction, loss, optim = seed_003_sections_1_and_2(torch, torchvision)
    assert prediction.shape == (1, 1000) and prediction.grad_fn.name() == "AddBackward0"
    assert math.isfinite(loss.item())
    params = dict(model.named_parameters())
    assert len(params) == 62
    for name, p in params.items():
        assert p.grad is not None and p.grad.shape == p.shape, name
        assert np.isfinite(np.asarray(p.grad)).all(), name
    before = _values(model)
    optim.step()  # 梯度下降
    after = _values(model)
    changed = {n for n in params if not np.array_equal(before[n], after[n])}
    assert changed == {n for n, p in params.items() if p.requires_grad} == set(params)
    for name, p in params.items():  # SGD's first step with momentum: p - lr * grad
        np.testing.assert_allclose(after[name], before[name] - 1e-2 * np.asarray(p.grad),
                                   rtol=1e-12, atol=1e-15)  # fmt: skip


def test_seed_003_frozen_parameters_section():
    import agrad as torch
    from agrad import nn
    from agrad import vision as torchvision

    torch.manual_seed(1)
    model, optimizer = seed_003_frozen_parameters(torch, torchvision, nn)
    prediction = model(torch.rand(1, 3, 64, 64))
    assert prediction.shape == (1, 10)
    loss = (prediction - torch.rand(1, 10)).sum()
    assert math.isfinite(loss.item())
    loss.backward()
    params = dict(model.named_parameters())
    trainable = {n for n, p in params.items() if p.requires_grad}
    assert trainable == {"fc.weight", "fc.bias"}
    for name, p in params.items():
        if name in trainable:
            assert p.grad is not None and p.grad.shape == p.shape
        else:
            assert p.grad is None, f"{name} is frozen but got a gradient"
    before = _values(model)
    optimizer.step()
    after = _values(model)
    assert {n for n in params if not np.array_equal(before[n], after[n])} == trainable


def test_parameter_counts_are_torchvisions():
    assert sum(p.numel() for p in vision.models.resnet18().parameters()) == RESNET18_PARAMETERS
    assert sum(p.numel() for p in vision.models.resnet34().parameters()) == RESNET34_PARAMETERS
    assert vision.models.resnet18(num_classes=10).fc.weight.shape == (10, 512)


@pytest.mark.parametrize("layers,maker", [((2, 2, 2, 2), "resnet18"), ((3, 4, 6, 3), "resnet34")])
def test_names_and_shapes_are_pytorchs(layers, maker):
    torch = require_torch()
    ours = getattr(vision.models, maker)()
    theirs = torch_resnet(torch, layers)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert repr(ours.layer2[0]) == repr(theirs.layer2[0])
    assert repr(ours.conv1) == repr(theirs.conv1) and repr(ours.fc) == repr(theirs.fc)


def _compare_with_pytorch(torch, training: bool, batch: int, size: int):
    agrad.manual_seed(2)
    ours = vision.models.resnet18(num_classes=7)
    theirs = copy_state(torch, ours, torch_resnet(torch, num_classes=7).double())
    if not training:  # non-trivial running statistics, the same on both sides
        for name, buffer in ours.named_buffers():
            if name.endswith(("running_mean", "running_var")):
                shift = 1.0 if name.endswith("var") else 0.0
                buffer.copy_(0.1 * np.cos(np.arange(buffer.shape[0])) + shift)
        copy_state(torch, ours, theirs)
        ours.eval()
        theirs.eval()
    x = np.random.default_rng(batch).random((batch, 3, size, size))
    target = np.random.default_rng(9).random((batch, 7))
    xa = agrad.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    loss_a = ((ours(xa) - agrad.tensor(target)) ** 2).sum()
    loss_t = ((theirs(xt) - torch.tensor(target)) ** 2).sum()
    loss_a.backward()
    loss_t.backward()
    assert loss_a.item() == pytest.approx(loss_t.item(), rel=1e-10)
    scale = np.abs(xt.grad.numpy()).max()
    np.testing.assert_allclose(np.asarray(xa.grad), xt.grad.numpy(), rtol=1e-7, atol=1e-9 * scale)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        scale = np.abs(q.grad.numpy()).max()
        np.testing.assert_allclose(np.asarray(p.grad), q.grad.numpy(), rtol=1e-7,
                                   atol=1e-9 * scale, err_msg=name)  # fmt: skip
    for (name, b), c in zip(ours.named_buffers(), theirs.buffers(), strict=True):
        np.testing.assert_allclose(np.asarray(b), c.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("training,batch,size", [(True, 2, 32), (True, 1, 64), (False, 2, 32)])
def test_forward_backward_and_running_stats_match_pytorch(training, batch, size):
    """float64, the same weights: losses to 1e-10, every gradient to 1e-7 relative (batch
    norm over a few values per channel in the last blocks amplifies rounding), running
    statistics to 1e-10."""
    _compare_with_pytorch(require_torch(), training, batch, size)


def test_pretrained_weights_are_refused_with_a_way_out():
    for kwargs in ({"pretrained": True}, {"weights": "IMAGENET1K_V1"}, {"weights": "DEFAULT"}):
        with pytest.raises(AgradValueError, match="cannot be downloaded") as info:
            vision.models.resnet18(**kwargs)
        assert "load_state_dict" in str(info.value) and ".npz" in str(info.value)
    with pytest.raises(AgradValueError, match="resnet34"):
        vision.models.resnet34(pretrained=True)
    assert vision.models.resnet18(weights=None, pretrained=False).fc.out_features == 1000


def test_weights_from_npz_written_by_pytorch(tmp_path):
    """What a user converting torchvision's weights does: np.savez of the state dict."""
    torch = require_torch()
    torch.manual_seed(0)
    theirs = torch_resnet(torch, num_classes=5).double().eval()
    path = tmp_path / "resnet18.npz"
    np.savez(path, **{k: v.numpy() for k, v in theirs.state_dict().items()})
    ours = vision.models.resnet18(num_classes=5)
    result = ours.load_state_dict(str(path))
    assert result.missing_keys == [] and result.unexpected_keys == []
    ours.eval()
    x = np.random.default_rng(0).random((2, 3, 32, 32))
    expected = theirs(torch.tensor(x)).detach().numpy()
    got = np.asarray(ours(agrad.tensor(x)).detach())
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    assert ours.bn1.num_batches_tracked.item() == theirs.bn1.num_batches_tracked.item()


def test_npz_round_trip_and_no_pickles(tmp_path):
    a, b = vision.models.resnet18(num_classes=3), vision.models.resnet18(num_classes=3)
    path = tmp_path / "w.npz"
    nn.utils.save_npz(a, path)
    b.load_state_dict(path)
    x = agrad.rand(1, 3, 32, 32)
    a.eval(), b.eval()
    np.testing.assert_array_equal(np.asarray(a(x).detach()), np.asarray(b(x).detach()))
    # An archive holding a pickled object is refused, never unpickled.
    evil = tmp_path / "evil.npz"
    np.savez(evil, **{"fc.bias": np.array([object()], dtype=object)})
    with pytest.raises(AgradValueError, match="cannot read weights"):
        b.load_state_dict(evil)
    # So is a torch.save-style pickle file.
    pth = tmp_path / "w.pth"
    pth.write_bytes(pickle.dumps({"fc.bias": [1.0, 2.0, 3.0]}))
    with pytest.raises(AgradValueError, match="cannot read weights"):
        b.load_state_dict(pth)
