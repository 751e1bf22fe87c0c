"""agrad.nn.Module and the containers, against torch.nn.Module's behaviour: registration and
the walks over the tree (names, order, duplicates), modes, gradients, state dicts (keys,
sharing, strictness, errors), hooks, apply's order, reprs, dtype conversion."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad import nn


def build(m):
    """The same little tree in either library: a shared module, a buffer, containers."""

    class Block(m.Module):
        def __init__(self):
            super().__init__()
            self.fc = m.Linear(3, 3)
            self.act = m.ReLU()
            self.register_buffer("steps", m.Parameter(m.zeros(1), requires_grad=False).detach())
            self.register_buffer("scratch", m.Parameter(m.zeros(2)).detach(), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(m.Module):
        def __init__(self):
            super().__init__()
            shared = Block()
            self.blocks = m.ModuleList([shared, Block(), shared])
            self.head = m.Sequential(OrderedDict([("lin", m.Linear(3, 2)), ("out", m.Tanh())]))
            self.extra = m.ModuleDict({"b": m.Linear(2, 1), "a": m.Identity()})
            self.scale = m.Parameter(m.ones(1))

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.extra["b"](self.head(x)) * self.scale

    return Net()


def _torch_nn():
    torch = require_torch()

    class Lib:  # torch.nn with the two constructors build() uses
        Module, Linear, ReLU, Tanh, Identity = (torch.nn.Module, torch.nn.Linear, torch.nn.ReLU,
                                                torch.nn.Tanh, torch.nn.Identity)  # fmt: skip
        ModuleList, ModuleDict, Sequential = (torch.nn.ModuleList, torch.nn.ModuleDict,
                                              torch.nn.Sequential)  # fmt: skip
        Parameter, zeros, ones = torch.nn.Parameter, torch.zeros, torch.ones

    return Lib


class _Ours:
    Module, Linear, ReLU, Tanh, Identity = nn.Module, nn.Linear, nn.ReLU, nn.Tanh, nn.Identity
    ModuleList, ModuleDict, Sequential = nn.ModuleList, nn.ModuleDict, nn.Sequential
    Parameter, zeros, ones = nn.Parameter, agrad.zeros, agrad.ones


@pytest.fixture
def pair():
    return build(_Ours), build(_torch_nn())


def test_walks_over_the_tree_match_pytorch(pair):
    ours, theirs = pair
    for walk in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        a = [(n, type(v).__name__) for n, v in getattr(ours, walk)()]
        b = [(n, type(v).__name__) for n, v in getattr(theirs, walk)()]
        if walk != "named_modules" and walk != "named_children":
            b = [(n, "-") for n, _ in b]
            a = [(n, "-") for n, _ in a]
        assert a == b, walk
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["scale"]
    assert len(list(ours.parameters())) == len(list(theirs.parameters())) == 9
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [type(m).__name__ for m in ours.children()] == [
        type(m).__name__ for m in theirs.children()
    ]


def test_apply_visits_children_before_parents_in_pytorchs_order(pair):
    ours, theirs = pair
    seen_a, seen_b = [], []
    ours.apply(lambda m: seen_a.append(type(m).__name__))
    theirs.apply(lambda m: seen_b.append(type(m).__name__))
    assert seen_a == seen_b


def test_repr_matches_pytorch(pair):
    ours, theirs = pair
    assert repr(ours) == repr(theirs)
    assert repr(nn.Sequential()) == repr(require_torch().nn.Sequential())


def test_train_eval_and_gradients():
    net = build(_Ours)
    assert net.eval() is net and not any(m.training for m in net.modules())
    assert net.train() is net and all(m.training for m in net.modules())
    net(agrad.rand(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not np.asarray(p.grad).any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(ValueError, match="boolean"):
        net.train("yes")


def test_state_dict_shares_values_and_load_is_strict():
    torch = require_torch()
    a, b = build(_Ours), build(_Ours)
    state = a.state_dict()
    assert all(not v.requires_grad and v.grad_fn is None for v in state.values())
    state["scale"].copy_(agrad.tensor([3.0]))  # detached, but the same values (as PyTorch)
    assert a.scale.item() == 3.0
    assert repr(b.load_state_dict(state)) == "<All keys matched successfully>"
    assert b.scale.item() == 3.0 and b.scale.requires_grad  # values copied, flags kept
    x = agrad.rand(4, 3)
    np.testing.assert_array_equal(np.asarray(a(x).detach()), np.asarray(b(x).detach()))
    partial = OrderedDict((k, v) for k, v in state.items() if k != "scale")
    partial["unknown"] = agrad.zeros(1)
    ta = build(_torch_nn())
    tstate = OrderedDict((k, v) for k, v in ta.state_dict().items() if k != "scale")
    tstate["unknown"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as ours_error:
        b.load_state_dict(partial)
    with pytest.raises(RuntimeError) as torch_error:
        ta.load_state_dict(tstate)
    assert str(ours_error.value) == str(torch_error.value)
    result = b.load_state_dict(partial, strict=False)
    assert result.missing_keys == ["scale"] and result.unexpected_keys == ["unknown"]
    bad = dict(state, scale=agrad.zeros(2))
    with pytest.raises(RuntimeError, match="size mismatch for scale: copying a param with shape"):
        b.load_state_dict(bad, strict=False)


def test_registration_rules():
    torch = require_torch()
    m, t = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    for lib_m, value in ((m, agrad.zeros(2, 2)), (t, torch.zeros(2, 2))):
        with pytest.raises(TypeError, match="cannot assign"):
            lib_m.weight = value  # a plain tensor is not a parameter
    m.bias = None
    assert [n for n, _ in m.named_parameters()] == ["weight"] and "bias=False" in repr(m)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        m.nothing  # noqa: B018 - the attribute access is the test

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(agrad.zeros(1))  # before Module.__init__

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("a.b", agrad.zeros(1))
    del m.weight
    assert list(m.named_parameters()) == []
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()()


def test_hooks_replace_inputs_and_outputs_and_can_be_removed():
    lin = nn.Linear(2, 2)
    calls = []
    pre = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    post = lin.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    y = lin(agrad.ones(1, 2))
    np.testing.assert_allclose(np.asarray(y.detach()), np.asarray(lin.bias.detach())[None] + 1)
    assert calls == [(1, 2)]
    pre.remove()
    post.remove()
    z = lin(agrad.ones(1, 2))
    assert calls == [(1, 2)] and z.shape == (1, 2)


def test_dtype_conversion():
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    net(agrad.rand(4, 3)).sum().backward()
    net.float()
    assert all(p.dtype == np.float32 for p in net.parameters())
    assert all(p.grad.dtype == np.float32 for p in net.parameters())
    assert net[1].running_var.dtype == np.float32 and net[1].num_batches_tracked.dtype == np.int64
    assert net.to(agrad.float64) is net and net[0].weight.dtype == np.float64
    assert net.to("cpu") is net and net.cpu() is net


def test_containers():
    torch = require_torch()
    seq, tseq = (lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 1))
                 for lib in (nn, torch.nn))  # fmt: skip
    assert len(seq) == 3 and type(seq[-1]).__name__ == "Linear"
    assert repr(seq[1:]) == repr(tseq[1:])
    del seq[1], tseq[1]
    assert [n for n, _ in seq.named_parameters()] == [n for n, _ in tseq.named_parameters()]
    seq.append(nn.Tanh())
    assert [type(m).__name__ for m in seq] == ["Linear", "Linear", "Tanh"]
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.extend([nn.ReLU()]).append(nn.Tanh())
    ml.insert(1, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Linear", "Identity", "ReLU", "Tanh"]
    assert [type(m).__name__ for m in ml[1:3]] == ["Identity", "ReLU"]
    md = nn.ModuleDict({"x": nn.Linear(1, 2)})
    md["y"] = nn.ReLU()
    assert list(md) == ["x", "y"] and "y" in md and md.pop("y").__class__.__name__ == "ReLU"
    assert [n for n, _ in md.named_parameters()] == ["x.weight", "x.bias"]
    with pytest.raises(IndexError):
        seq[5]
