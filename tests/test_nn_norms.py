"""GroupNorm, InstanceNorm1d/2d and LocalResponseNorm (and their functional forms) against
PyTorch with copied, randomised parameters: outputs, the input's and every parameter's
gradient, the running statistics; odd group sizes, a batch of 1, float32, unbatched inputs,
and the bad calls PyTorch rejects. The snippets mirror the usual uses: GroupNorm(8, 32)
after a convolution, InstanceNorm2d in style-transfer networks, LRN in AlexNet."""

from __future__ import annotations

import numpy as np
import pytest
from nn_oracle import compare

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _pair(name, *args, dtype="float64", **kwargs):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    am = getattr(agrad.nn, name)(*args, **kwargs)
    with torch.no_grad():
        for p in tm.parameters():
            p.normal_()
    # (agrad's modules are created in agrad's default dtype, PyTorch's in float32)
    return (tm.double(), am.double()) if dtype == "float64" else (tm.float(), am.float())


def _x(*shape, dtype="float64"):
    return (RNG.standard_normal(shape) * 2 + 0.5).astype(dtype)


@pytest.mark.parametrize(
    "args,kwargs,shape",
    [
        ((2, 4), {}, (3, 4, 5, 5)),
        ((3, 6), {}, (2, 6, 7)),  # 1-D spatial
        ((1, 5), {}, (1, 5, 3, 2)),  # one group: layer norm over (C, H, W)
        ((5, 5), {}, (2, 5, 4)),  # one channel per group: instance norm
        ((2, 4), {"affine": False}, (2, 4, 3)),
        ((2, 4), {"bias": False}, (2, 4, 3)),
        ((2, 4), {"eps": 0.5}, (2, 4)),  # no spatial dims
    ],
)
def test_group_norm_matches_pytorch(args, kwargs, shape):
    tm, am = _pair("GroupNorm", *args, **kwargs)
    compare(tm, am, [_x(*shape)])
    assert repr(am) == repr(tm)


def test_group_norm_float32():
    tm, am = _pair("GroupNorm", 2, 6, dtype="float32")
    got = compare(tm, am, [_x(2, 6, 3, dtype="float32")], tol=2e-5)
    assert got["outs"][0].dtype == np.float32


def test_group_norm_functional_and_constant_group():
    # a group whose values are all equal: the normalized values are 0, the gradient finite
    x = _x(2, 4, 3)
    x[0, :2] = 1.5
    for_lib = {}
    for lib in (agrad, torch):
        xt = lib.tensor(x, requires_grad=True)
        w = lib.tensor(np.arange(1.0, 5.0), requires_grad=True)
        out = lib.nn.functional.group_norm(xt, 2, w, None, 1e-5)
        (out * lib.tensor(np.cos(np.arange(24.0)).reshape(2, 4, 3))).sum().backward()
        for_lib[lib] = out.detach().numpy(), xt.grad.numpy(), w.grad.numpy()
    for a, t in zip(for_lib[agrad], for_lib[torch], strict=True):
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-10)


def test_group_norm_bad_calls_raise_as_pytorch():
    with pytest.raises(ValueError) as expected:
        torch.nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        agrad.nn.GroupNorm(3, 4)
    assert "divisible" in str(expected.value)
    for lib in (torch, agrad):
        with pytest.raises(RuntimeError):
            lib.nn.functional.group_norm(lib.ones(2, 4, 3), 3)


@pytest.mark.parametrize(
    "name,shape", [("InstanceNorm1d", (3, 4, 6)), ("InstanceNorm2d", (2, 3, 4, 5))]
)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"affine": True},
        {"affine": True, "bias": False},
        {"track_running_stats": True},
        {"affine": True, "track_running_stats": True, "momentum": 0.3},
        {"track_running_stats": True, "momentum": None},
    ],
)
def test_instance_norm_matches_pytorch_in_training_and_eval(name, shape, kwargs):
    c = shape[1]
    tm, am = _pair(name, c, **kwargs)
    compare(tm, am, [_x(*shape)])  # training: batch statistics, running ones updated
    assert repr(am) == repr(tm)
    for m in (tm, am):
        m.train()
    # a second step from the updated running statistics, then evaluation with them
    x = _x(*shape)
    compare(tm, am, [x])
    tm.eval(), am.eval()
    compare(tm, am, [_x(*shape)])


@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (4, 6)), ("InstanceNorm2d", (3, 4, 5))])
def test_instance_norm_unbatched_input(name, shape):
    tm, am = _pair(name, shape[0], affine=True, track_running_stats=True)
    compare(tm, am, [_x(*shape)])


def test_instance_norm_batch_of_one_float32():
    tm, am = _pair("InstanceNorm2d", 3, affine=True, dtype="float32")
    compare(tm, am, [_x(1, 3, 2, 3, dtype="float32")], tol=2e-5)


def test_instance_norm_functional_with_running_stats():
    x = _x(2, 3, 5)
    results = []
    for lib in (agrad, torch):
        rm, rv = lib.tensor(np.array([0.1, -0.2, 0.3])), lib.tensor(np.array([1.0, 2.0, 0.5]))
        xt = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.instance_norm(xt, rm, rv, momentum=0.25)
        (out * out).sum().backward()
        evald = lib.nn.functional.instance_norm(xt, rm, rv, use_input_stats=False)
        results.append([t.detach().numpy() for t in (out, xt.grad, rm, rv, evald)])
    for a, t in zip(*results, strict=True):
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-10)


def test_instance_norm_bad_calls_raise_as_pytorch():
    for lib in (torch, agrad):
        with pytest.raises(ValueError):  # one spatial element: no variance to normalize by
            lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 1))
        with pytest.raises(ValueError):  # wrong dimensionality
            lib.nn.InstanceNorm2d(3)(lib.ones(2, 3))
        with pytest.raises(ValueError):  # affine with the wrong channel count
            lib.nn.InstanceNorm1d(4, affine=True)(lib.ones(2, 3, 5))


@pytest.mark.parametrize(
    "args,shape",
    [
        ((3,), (2, 5, 4)),
        ((2,), (1, 4, 3, 3)),
        ((5, 1e-2, 0.5, 2.0), (2, 3, 2, 2)),
        ((1,), (2, 3, 2)),
    ],
)
def test_local_response_norm_matches_pytorch(args, shape):
    tm, am = _pair("LocalResponseNorm", *args)
    compare(tm, am, [_x(*shape)])
    assert repr(am) == repr(tm)


def test_local_response_norm_rejects_2d_input():
    for lib in (torch, agrad):
        with pytest.raises(ValueError):
            lib.nn.functional.local_response_norm(lib.ones(2, 3), 2)
