"""nn.ParameterList and nn.ParameterDict against PyTorch: registration (parameters(),
named_parameters, state_dict names, nested in a module), tensors made Parameters, the
dict's key order rule, reprs, gradients through a model that uses them, load_state_dict,
and the bad calls PyTorch rejects. The snippets mirror a per-layer list of scales and a
dict of named biases in a hand-written model."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")


def _build(lib):
    nn, f32, f64 = lib.nn, lib.float32, lib.float64  # explicit: the default dtypes differ

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList(
                [nn.Parameter(lib.ones(3, 2, dtype=f32)), lib.zeros(2, dtype=f64)]
            )
            self.scales.append(nn.Parameter(lib.full((1,), 2.0, dtype=f32), requires_grad=False))
            self.biases = nn.ParameterDict(
                {"b": nn.Parameter(lib.ones(2, dtype=f64)), "a": lib.ones(3, 1, dtype=f32)}
            )
            self.biases["c"] = nn.Parameter(lib.zeros(4, dtype=f64))

        def forward(self, x):
            y = x @ self.scales[0].double() + self.scales[1] * self.scales[2].double()
            return y.sum() + (self.biases["a"].double() * self.biases["c"]).sum()

    return Model()


def test_registration_names_and_repr_match_pytorch():
    a, t = _build(agrad), _build(torch)
    assert list(a.state_dict()) == list(t.state_dict())
    assert [(n, tuple(p.shape), p.requires_grad) for n, p in a.named_parameters()] == [
        (n, tuple(p.shape), p.requires_grad) for n, p in t.named_parameters()
    ]
    assert repr(a) == repr(t)
    assert repr(a.scales) == repr(t.scales)
    assert repr(agrad.nn.ParameterList()) == repr(torch.nn.ParameterList())
    assert repr(agrad.nn.ParameterDict()) == repr(torch.nn.ParameterDict())
    assert isinstance(a.scales[1], agrad.nn.Parameter)  # a plain tensor became a Parameter
    assert isinstance(a.biases["a"], agrad.nn.Parameter)
    assert len(a.scales) == 3 and list(a.biases) == ["a", "b", "c"] == list(t.biases)


def test_gradients_reach_the_held_parameters():
    a, t = _build(agrad), _build(torch)
    a.load_state_dict({k: agrad.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.arange(6.0).reshape(2, 3) / 7
    for model, lib in ((a, agrad), (t, torch)):
        model(lib.tensor(x)).backward()
    for (name, pa), (_, pt) in zip(a.named_parameters(), t.named_parameters(), strict=True):
        if pt.grad is None:
            assert pa.grad is None, name
        else:
            assert str(pa.grad.dtype) == str(pt.grad.dtype), name
            np.testing.assert_allclose(pa.grad.numpy(), pt.grad.numpy(), rtol=1e-12, err_msg=name)
    assert a.scales[2].grad is None  # requires_grad=False kept


def test_list_operations_match_pytorch():
    results = []
    for lib in (agrad, torch):
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(1) * i) for i in range(4)])
        pl[1] = lib.nn.Parameter(lib.full((2,), 7.0))
        pl += [lib.zeros(3)]
        pl.extend([lib.ones(1)])
        tail = pl[-2:]
        results.append(
            (
                len(pl),
                [tuple(p.shape) for p in pl],
                [float(p.sum()) for p in pl],
                type(tail).__name__,
                len(tail),
                float(pl[-1].sum()),
                list(pl.state_dict()),
            )
        )
    assert results[0] == results[1]


def test_dict_operations_match_pytorch():
    from collections import OrderedDict

    results = []
    for lib in (agrad, torch):
        pd = lib.nn.ParameterDict(OrderedDict([("z", lib.ones(1)), ("y", lib.ones(2))]))
        pd.update([("x", lib.ones(3))])
        popped = pd.pop("y")
        got = pd.get("missing", None)
        pd.setdefault("w", lib.zeros(1))
        merged = pd | lib.nn.ParameterDict({"v": lib.ones(5)})
        results.append(
            (
                list(pd.keys()),
                tuple(popped.shape),
                got,
                "x" in pd,
                list(merged.keys()),
                list(pd.state_dict()),
                pd.popitem()[0],
                len(pd),
            )
        )
    assert results[0] == results[1]


def test_bad_calls_raise_as_pytorch():
    for lib in (agrad, torch):
        pl = lib.nn.ParameterList([lib.ones(1)])
        with pytest.raises(IndexError):
            pl[3]
        with pytest.raises(TypeError):
            pl.extend(5)
        pd = lib.nn.ParameterDict()
        with pytest.raises(AttributeError):  # (not KeyError: PyTorch's lookup is getattr)
            pd["missing"]
        with pytest.raises(TypeError):
            pd[3] = lib.ones(1)
        with pytest.raises(TypeError):
            pd.update(5)


def test_load_state_dict_into_the_containers():
    pl = agrad.nn.ParameterList([agrad.zeros(2), agrad.zeros(1)])
    pl.load_state_dict({"0": agrad.tensor([1.0, 2.0]), "1": agrad.tensor([3.0])})
    assert pl[0].detach().numpy().tolist() == [1.0, 2.0] and float(pl[1]) == 3.0
    with pytest.raises(RuntimeError):
        pl.load_state_dict({"0": agrad.tensor([1.0, 2.0])})  # "1" missing, strict
