"""agrad.nn.functional's composed activations (nn/activations.py) and their modules against
PyTorch: values and gradients on a grid that includes every breakpoint (0, ±1, ±3, ±lambd,
6), far tails (±800, where a naive exp overflows), nan, and float32."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

BREAKS = [0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -0.5, 6.0, 2.0, -2.0, 0.1, -0.1]
GRID = np.array(BREAKS + [-800.0, 800.0, -40.0, 40.0, 1e-12, -1e-12, 7.3, -5.1, np.nan])

# name -> fn(F, x): F is torch.nn.functional or agrad.nn.functional
CASES = {
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_range": lambda F, x: F.hardtanh(x, -2.0, 3.0),
    "relu6": lambda F, x: F.relu6(x),
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, alpha=0.3),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, alpha=2.0),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "mish": lambda F, x: F.mish(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -4.0),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "hardshrink_lambd": lambda F, x: F.hardshrink(x, 2.0),
    "softshrink": lambda F, x: F.softshrink(x),
    "softshrink_lambd": lambda F, x: F.softshrink(x, 1.0),
}


def _run(lib, name, values, dtype):
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = CASES[name](lib.nn.functional, x)
    y.backward(lib.ones_like(y))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_at_breakpoints_and_tails(name, dtype):
    value, grad = _run(agrad, name, GRID, dtype)
    t_value, t_grad = _run(torch, name, GRID, dtype)
    tol = {"float64": 1e-12, "float32": 2e-6}[dtype]
    np.testing.assert_allclose(value, t_value, rtol=tol, atol=tol)
    if name == "hardsigmoid" and dtype == "float64":
        # PyTorch's float64 kernel uses float32's 1/6 (0.16666667163...): agrad's slope is
        # 1/6 itself, and equal to PyTorch's to float32 precision.
        inside = (GRID > -3) & (GRID < 3)
        np.testing.assert_array_equal(grad[inside], 1.0 / 6.0)
        tol = 3e-8
    np.testing.assert_allclose(grad, t_grad, rtol=tol, atol=tol)
    assert value.dtype == t_value.dtype


ROWS = np.array([[0.3, -1.2, 2.0, 0.0], [1.5, 0.5, -0.5, -3.0]])


@pytest.mark.parametrize(
    "name,fn",
    [
        ("softmin", lambda F, x: F.softmin(x, dim=1)),
        ("softmin_dim0", lambda F, x: F.softmin(x, 0)),
        ("glu", lambda F, x: F.glu(x)),
        ("glu_dim0", lambda F, x: F.glu(x, 0)),
        ("prelu_one", lambda F, x: F.prelu(x, x.new_tensor([0.2]))),
        ("prelu_channels", lambda F, x: F.prelu(x.reshape(1, 2, 4), x.new_tensor([0.2, -0.7]))),
    ],
)
def test_structured_activations_match_pytorch(name, fn):
    results = []
    for lib in (agrad, torch):
        x = lib.tensor(ROWS, requires_grad=True)
        y = fn(lib.nn.functional, x)
        w = lib.tensor(np.cos(np.arange(y.numel()) + 0.5).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_prelu_module_learns_its_weight_as_pytorchs():
    grads = []
    for lib in (agrad, torch):
        m = lib.nn.PReLU(2)
        x = lib.tensor(ROWS.reshape(1, 2, 4), dtype=m.weight.dtype)
        (m(x) ** 2).sum().backward()
        grads.append(m.weight.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)  # torch's weight is float32


MODULES = [
    ("Hardtanh", (-2.0, 2.0)), ("ReLU6", ()), ("ELU", (0.5,)), ("CELU", ()), ("SELU", ()),
    ("Hardswish", ()), ("Hardsigmoid", ()), ("LogSigmoid", ()), ("Softsign", ()),
    ("Mish", ()), ("Tanhshrink", ()), ("Softmin", (1,)), ("GLU", ()), ("Threshold", (0.1, 20.0)),
    ("Hardshrink", ()), ("Softshrink", (0.25,)), ("PReLU", ()),
]  # fmt: skip


@pytest.mark.parametrize("name,args", MODULES)
def test_modules_print_and_compute_as_pytorchs(name, args):
    mine, theirs = getattr(agrad.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mine) == repr(theirs)
    x = ROWS if name != "PReLU" else ROWS.reshape(1, 2, 4)
    np.testing.assert_allclose(
        mine(agrad.tensor(x, dtype=agrad.float32)).detach().numpy(),
        theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
        rtol=1e-6,
    )


def test_inplace_activation_writes_into_its_input_as_pytorch():
    for name in ("elu", "hardtanh", "relu6", "hardswish", "selu", "celu", "mish", "threshold"):
        outs = []
        for lib in (agrad, torch):
            x = lib.tensor(GRID[:12], requires_grad=True)
            y = x * 1.0
            fn = getattr(lib.nn.functional, name)
            fn(y, 0.5, -4.0, inplace=True) if name == "threshold" else fn(y, inplace=True)
            y.sum().backward()
            outs.append((y.detach().numpy(), x.grad.numpy()))
        for mine, theirs in zip(*outs, strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_bad_calls_refuse_as_pytorch():
    for lib in (agrad, torch):
        with pytest.raises(RuntimeError, match="Halving dimension must be even"):
            lib.nn.functional.glu(lib.ones(2, 3))
        with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
            lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2))
