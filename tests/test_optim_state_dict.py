"""Optimizer state and checkpoints against PyTorch: ``opt.state[p]``, ``state_dict()`` and
``load_state_dict()`` for SGD (momentum, Nesterov), Adam (AMSGrad), AdamW, RMSprop and
Adagrad.

QA round 20: ``opt.state_dict()`` / ``load_state_dict()`` did not exist and ``opt.state[p]``
raised KeyError (the state was keyed by ``id(p)`` and held NumPy arrays), so training
could not be checkpointed and resumed. Expected structures and numbers come from PyTorch
running the same steps; the resumed run must equal the uninterrupted one exactly."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import require_torch

import agrad

W1 = np.array([[0.5, -0.25, 0.75], [0.125, 1.5, -1.0]])
W2 = np.array([[1.25, -0.5]])
X = np.array([[1.0, 2.0, -0.5], [0.3, -1.2, 2.2], [-0.7, 0.4, 0.1]])
Y = np.array([[0.2], [-0.4], [1.0]])

OPTIMIZERS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    "sgd_nesterov": ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
    "adam": ("Adam", dict(lr=0.05, weight_decay=0.01)),
    "adam_amsgrad": ("Adam", dict(lr=0.05, amsgrad=True)),
    "adamw": ("AdamW", dict(lr=0.05)),
    "rmsprop": ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    "adagrad": ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
}


def _model(lib):
    model = lib.nn.Sequential(
        lib.nn.Linear(3, 2, dtype=lib.float64),
        lib.nn.Tanh(),
        lib.nn.Linear(2, 1, bias=False, dtype=lib.float64),
    )
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(W1, dtype=lib.float64))
        model[0].bias.fill_(0.1)
        model[2].weight.copy_(lib.tensor(W2, dtype=lib.float64))
    return model


def _optimizer(lib, model, which):
    name, options = OPTIMIZERS[which]
    groups = [
        {"params": list(model[0].parameters())},
        {"params": list(model[2].parameters()), "lr": options["lr"] / 2},
    ]
    return getattr(lib.optim, name)(groups, **options)


def _train(lib, model, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        out = model(lib.tensor(X, dtype=lib.float64))
        ((out - lib.tensor(Y, dtype=lib.float64)) ** 2).mean().backward()
        opt.step()


def _weights(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _with_float64_default(torch, fn):
    """Run ``fn`` with PyTorch's default dtype agrad's (float64): its ``step`` tensors
    take the default dtype."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return fn()
    finally:
        torch.set_default_dtype(before)


@pytest.mark.parametrize("which", OPTIMIZERS)
def test_state_and_state_dict_match_pytorch(which):
    torch = require_torch()
    runs = {}
    for lib in (agrad, torch):

        def run(lib=lib):
            model = _model(lib)
            opt = _optimizer(lib, model, which)
            _train(lib, model, opt, 3)
            return model, opt

        runs[lib] = _with_float64_default(torch, run) if lib is torch else run()
    (ours_model, ours), (theirs_model, theirs) = runs[agrad], runs[torch]
    mine, yours = ours.state_dict(), theirs.state_dict()
    assert list(mine) == ["state", "param_groups"]
    assert list(mine["state"]) == list(yours["state"])
    for index, state in yours["state"].items():
        assert list(mine["state"][index]) == list(state)
        for key, value in state.items():
            got = mine["state"][index][key]
            assert isinstance(got, agrad.Tensor), key
            assert str(got.dtype) == str(value.dtype), key
            np.testing.assert_allclose(got.numpy(), value.numpy(), rtol=1e-12, err_msg=key)
    for got, expected in zip(mine["param_groups"], yours["param_groups"], strict=True):
        assert got["params"] == expected["params"]
        for key, value in got.items():
            assert expected[key] == value, key
    # opt.state is keyed by the parameters; the state dict shares the live state, as PyTorch's
    first = next(ours_model.parameters())
    if mine["state"]:
        assert ours.state[first] is mine["state"][0]
        assert (theirs.state[next(theirs_model.parameters())] is yours["state"][0]) is True
    else:
        assert ours.state[first] == {} == theirs.state[next(theirs_model.parameters())]


@pytest.mark.parametrize("which", OPTIMIZERS)
def test_checkpoint_round_trip_resumes_with_identical_numbers(which):
    torch = require_torch()
    results = {}
    for lib in (agrad, torch):
        model = _model(lib)
        opt = _optimizer(lib, model, which)
        _train(lib, model, opt, 3)
        saved_model = copy.deepcopy(model.state_dict())
        saved_opt = copy.deepcopy(opt.state_dict())
        _train(lib, model, opt, 4)
        straight = _weights(model)
        # a fresh model and optimizer, restored from the checkpoint
        model2 = _model(lib)
        opt2 = _optimizer(lib, model2, which)
        model2.load_state_dict(saved_model)
        opt2.load_state_dict(saved_opt)
        _train(lib, model2, opt2, 4)
        resumed = _weights(model2)
        for a, b in zip(straight, resumed, strict=True):
            np.testing.assert_array_equal(a, b)
        results[lib] = straight
    for a, b in zip(results[agrad], results[torch], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


def test_loading_takes_the_saved_hyper_parameters_and_casts_to_the_parameters_dtype():
    torch = require_torch()

    def run(lib):
        model = _model(lib)
        opt = _optimizer(lib, model, "adam")
        _train(lib, model, opt, 2)
        opt.param_groups[0]["lr"] = 0.001  # as a scheduler would
        saved = copy.deepcopy(opt.state_dict())
        target = _model(lib).float()
        opt2 = _optimizer(lib, target, "adam")
        opt2.load_state_dict(saved)
        state = opt2.state[target[0].weight]
        return (
            opt2.param_groups[0]["lr"],
            opt2.param_groups[1]["lr"],
            str(state["exp_avg"].dtype),
            str(state["step"].dtype),  # the step keeps its dtype
            float(state["step"]),
            opt2.param_groups[0]["params"][0] is target[0].weight,
        )

    facts = {agrad: run(agrad), torch: _with_float64_default(torch, lambda: run(torch))}
    assert facts[agrad] == facts[torch]
    assert facts[agrad][2] == "torch.float32" and facts[agrad][-1]


def test_mismatched_checkpoints_raise_pytorchs_errors():
    torch = require_torch()
    messages = []
    for lib in (agrad, torch):
        model = _model(lib)
        saved = _optimizer(lib, model, "sgd_momentum").state_dict()
        one_group = lib.optim.SGD(model.parameters(), lr=0.1)
        sizes = lib.optim.SGD(
            [{"params": [model[0].weight]}, {"params": [model[0].bias, model[2].weight]}],
            lr=0.1,
        )
        texts = []
        for opt in (one_group, sizes):
            with pytest.raises(ValueError) as info:
                opt.load_state_dict(saved)
            texts.append(str(info.value))
        messages.append(texts)
    assert messages[0] == messages[1]


def test_state_tensors_are_updated_in_place():
    """A reference to a state tensor follows training (PyTorch updates them in place), so
    a snapshot must be deep-copied; the step is a 0-d tensor counting the steps."""
    torch = require_torch()
    seen = {}
    for lib in (agrad, torch):
        model = _model(lib)
        opt = _optimizer(lib, model, "adam")
        _train(lib, model, opt, 1)
        weight = model[0].weight
        exp_avg, step = opt.state[weight]["exp_avg"], opt.state[weight]["step"]
        before = exp_avg.numpy().copy()
        _train(lib, model, opt, 1)
        seen[lib] = (
            opt.state[weight]["exp_avg"] is exp_avg,
            not np.array_equal(exp_avg.numpy(), before),
            float(step),
            step.dim(),
        )
    assert seen[agrad] == seen[torch] == (True, True, 2.0, 0)
