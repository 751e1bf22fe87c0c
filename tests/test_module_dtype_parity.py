"""`Module.double()` / `.float()` / `.half()` / `.to(dtype)` against PyTorch: parameters are
converted in place (the same objects, their values and their ``.grad`` replaced), so an
optimizer, a hook or a list of parameters made before the call still trains the model;
buffers are replaced by converted tensors, as PyTorch's are.

QA round 20 found the parameters replaced by new ones: an SGD built before ``.double()``
updated orphans and the loss stayed flat, in silence. Expected values come from PyTorch
run on the same code."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

W = np.array([[0.5, -0.25, 0.75], [0.125, 1.5, -1.0]])
B = np.array([0.1, -0.2])
W2 = np.array([[1.25, -0.5], [0.375, 0.625]])
B2 = np.array([0.0, 0.25])
X = np.array([[1.0, 2.0, -0.5], [0.3, -1.2, 2.2]])
TARGET = np.array([[0.2, -0.4], [1.0, 0.5]])


def _model(lib, start, norm=False):
    """Linear(3, 2) -> Tanh -> Linear(2, 2) with known weights (or, with ``norm``,
    Linear(3, 2) -> BatchNorm1d(2), for its buffers), in dtype ``start``."""
    if norm:
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    else:
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 2))
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(W))
        model[0].bias.copy_(lib.tensor(B))
        if not norm:
            model[2].weight.copy_(lib.tensor(W2))
            model[2].bias.copy_(lib.tensor(B2))
    return model.to(getattr(lib, start))


def _train(lib, start, convert, make_opt, steps=3):
    """Build the model in ``start``, the optimizer, then convert; train ``steps`` steps.
    Returns the model, the parameters as first listed, and the weights after each step."""
    model = _model(lib, start)
    first = list(model.parameters())
    opt = make_opt(lib, model.parameters())
    convert(lib, model)
    dtype = model[0].weight.dtype
    history = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(lib.tensor(X, dtype=dtype))
        loss = ((out - lib.tensor(TARGET, dtype=dtype)) ** 2).mean()
        loss.backward()
        opt.step()
        history.append([np.array(p.detach().numpy(), dtype=np.float64) for p in first])
    return model, first, history


CONVERSIONS = {
    "double": lambda lib, m: m.double(),
    "float": lambda lib, m: m.float(),
    "to_float64": lambda lib, m: m.to(lib.float64),
    "to_dtype_keyword": lambda lib, m: m.to(dtype=lib.float32),
    "to_tensor": lambda lib, m: m.to(lib.zeros(1, dtype=lib.float64)),
}
OPTIMIZERS = {
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=0.05),
}


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize(
    "start, conversion",
    [
        ("float32", "double"),
        ("float64", "float"),
        ("float32", "to_float64"),
        ("float64", "to_dtype_keyword"),
        ("float32", "to_tensor"),
    ],
)
def test_optimizer_built_before_conversion_trains_the_model(start, conversion, optimizer):
    torch = require_torch()
    runs = {
        lib: _train(lib, start, CONVERSIONS[conversion], OPTIMIZERS[optimizer])
        for lib in (agrad, torch)
    }
    (ours, ours_first, ours_hist), (theirs, _, theirs_hist) = runs[agrad], runs[torch]
    # the very objects the optimizer holds are the model's parameters
    assert all(a is b for a, b in zip(ours_first, ours.parameters(), strict=True))
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert str(p.dtype) == str(q.dtype)
    rtol = 1e-10 if str(ours[0].weight.dtype) == "torch.float64" else 2e-5
    for step, (a, b) in enumerate(zip(ours_hist, theirs_hist, strict=True)):
        for pa, pb in zip(a, b, strict=True):
            np.testing.assert_allclose(pa, pb, rtol=rtol, atol=rtol, err_msg=f"step {step}")
    # every parameter moved (W is exact in float32 too): orphaned ones never would
    initial = [W, B, W2, B2]
    assert all(not np.array_equal(a, b) for a, b in zip(ours_hist[-1], initial, strict=True))


def test_identity_gradients_and_buffers_follow_pytorch():
    torch = require_torch()
    facts = {}
    for lib in (agrad, torch):
        model = _model(lib, "float32", norm=True)
        weight, bias = model[0].weight, model[0].bias
        scale = lib.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=lib.float32)
        (model(lib.tensor(X, dtype=lib.float32)) * scale).sum().backward()
        grad = weight.grad
        before = weight.grad.numpy().copy()
        running_mean, tracked = model[1].running_mean, model[1].num_batches_tracked
        model.double()
        facts[lib] = {
            "weight is": model[0].weight is weight,
            "bias is": model[0].bias is bias,
            "grad is": weight.grad is grad,
            "grad dtype": str(weight.grad.dtype),
            "weight dtype": str(weight.dtype),
            "is leaf": weight.is_leaf,
            "requires grad": weight.requires_grad,
            "parameter": isinstance(weight, lib.nn.Parameter),
            # a float buffer is a new tensor, an integer one is left alone
            "running_mean is": model[1].running_mean is running_mean,
            "running_mean dtype": str(model[1].running_mean.dtype),
            "num_batches_tracked is": model[1].num_batches_tracked is tracked,
            "num_batches_tracked dtype": str(tracked.dtype),
            "same dtype again keeps the buffer": model.double()[1].running_mean
            is model[1].running_mean,
        }
        # the gradient's values are the float32 ones, widened exactly
        np.testing.assert_array_equal(weight.grad.numpy(), before.astype(np.float64))
    assert facts[agrad] == facts[torch]
    assert facts[agrad]["weight is"] and facts[agrad]["grad is"]


def test_state_dict_after_conversion():
    torch = require_torch()
    dicts = {}
    for lib in (agrad, torch):
        model = _model(lib, "float64", norm=True)
        model(lib.tensor(X))  # a training step of the batch norm: running stats move
        model.float()
        dicts[lib] = model.state_dict()
    assert list(dicts[agrad]) == list(dicts[torch])
    for key, value in dicts[torch].items():
        ours = dicts[agrad][key]
        assert str(ours.dtype) == str(value.dtype), key
        np.testing.assert_allclose(ours.numpy(), value.numpy(), rtol=2e-7, err_msg=key)
    # the state dict shares the converted values: it is the model's, not a stale copy
    model = _model(agrad, "float64", norm=True).float()
    with agrad.no_grad():
        model[0].weight.add_(1.0)
    assert model.state_dict()["0.weight"].numpy()[0, 0] == np.float32(W[0, 0] + 1.0)


def test_half_and_shared_parameters():
    torch = require_torch()
    for lib in (agrad, torch):
        shared = lib.nn.Linear(2, 2)
        model = lib.nn.Sequential(shared, lib.nn.Tanh(), shared)
        weight = shared.weight
        model.half()
        assert model[0].weight is weight is model[2].weight
        assert str(weight.dtype) == "torch.float16"
        assert len(list(model.parameters())) == 2


def test_a_hook_registered_before_conversion_still_fires():
    torch = require_torch()
    seen = {}
    for lib in (agrad, torch):
        model = _model(lib, "float32")
        calls = []
        model[0].weight.register_hook(lambda g, calls=calls: calls.append(str(g.dtype)))
        model.double()
        model(lib.tensor(X)).sum().backward()
        seen[lib] = calls
    assert seen[agrad] == seen[torch] == ["torch.float64"]


def test_non_floating_dtype_is_refused_as_pytorch_does():
    torch = require_torch()
    messages = []
    for lib in (agrad, torch):
        with pytest.raises(TypeError) as info:
            lib.nn.Linear(2, 1).to(lib.int64)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
