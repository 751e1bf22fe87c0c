"""F.conv_transpose1d/2d and nn.ConvTranspose1d/2d against PyTorch with copied weights:
outputs and the gradients of input, weight and bias, float64 to 1e-10; stride, padding,
output_padding, dilation, groups, no bias, rectangular kernels, forward's output_size,
unbatched inputs, a 1x1 input, float32; reprs, initialisation bounds and the bad calls
PyTorch rejects. The snippets mirror a DCGAN generator's upsampling stack and a U-Net's
ConvTranspose2d(kernel_size=2, stride=2) decoder step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_oracle import compare

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(19)


def _pair(name, *args, dtype="float64", **kwargs):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    am = getattr(agrad.nn, name)(*args, **kwargs)
    return (tm.double(), am.double()) if dtype == "float64" else (tm.float(), am.float())


def _x(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


CASES_2D = {
    "plain": ((3, 4, 3), {}, (2, 3, 5, 4)),
    "unet_step": ((4, 2, 2), {"stride": 2}, (1, 4, 3, 3)),
    "dcgan_step": ((6, 3, 4), {"stride": 2, "padding": 1, "bias": False}, (2, 6, 4, 4)),
    "from_1x1": ((5, 3, 4), {"stride": 1}, (2, 5, 1, 1)),
    "output_padding": ((2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (1, 2, 4, 3)),
    "rect_dilation": ((2, 2, (2, 3)), {"stride": (1, 2), "dilation": (2, 1)}, (2, 2, 3, 4)),
    "groups": ((4, 6, 3), {"groups": 2, "stride": 2, "padding": 2}, (2, 4, 5, 5)),
    "depthwise": ((3, 3, 2), {"groups": 3}, (1, 3, 3, 3)),
    "unbatched": ((3, 2, 3), {"stride": 2}, (3, 4, 4)),
}


@pytest.mark.parametrize("case", list(CASES_2D))
def test_conv_transpose2d_matches_pytorch(case):
    args, kwargs, shape = CASES_2D[case]
    tm, am = _pair("ConvTranspose2d", *args, **kwargs)
    compare(tm, am, [_x(*shape)])
    assert repr(am) == repr(tm)


CASES_1D = {
    "plain": ((3, 2, 4), {}, (2, 3, 6)),
    "strided": ((2, 4, 3), {"stride": 3, "padding": 1, "output_padding": 2}, (1, 2, 5)),
    "groups_dilation": ((4, 2, 2), {"groups": 2, "dilation": 3}, (2, 4, 4)),
    "unbatched": ((3, 2, 3), {}, (3, 5)),
}


@pytest.mark.parametrize("case", list(CASES_1D))
def test_conv_transpose1d_matches_pytorch(case):
    args, kwargs, shape = CASES_1D[case]
    tm, am = _pair("ConvTranspose1d", *args, **kwargs)
    compare(tm, am, [_x(*shape)])
    assert repr(am) == repr(tm)


def test_output_size_argument():
    tm, am = _pair("ConvTranspose2d", 2, 3, 3, stride=2, padding=1)
    for size in ((7, 9), (8, 10), [1, 3, 8, 9]):
        compare(tm, am, [_x(1, 2, 4, 5)], lambda m, x, size=size: m(x, output_size=size))


def test_float32():
    tm, am = _pair("ConvTranspose2d", 3, 2, 3, stride=2, dtype="float32")
    got = compare(tm, am, [_x(2, 3, 4, 4, dtype="float32")], tol=2e-5)
    assert got["outs"][0].dtype == np.float32


def test_functional_form_and_the_adjoint_identity():
    x, w = _x(2, 3, 4, 5), _x(3, 2, 3, 3)
    results = []
    for lib in (agrad, torch):
        out = lib.nn.functional.conv_transpose2d(lib.tensor(x), lib.tensor(w), None, 2, 1, 1, 1, 1)
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-10)
    # <conv_transpose(x), y> = <x, conv(y)> with the same weight: it is the adjoint
    y = _x(*results[0].shape)
    conv = agrad.nn.functional.conv2d(agrad.tensor(y), agrad.tensor(w), None, 2, 1)
    np.testing.assert_allclose(np.sum(results[0] * y), np.sum(x * conv.numpy()), rtol=1e-10)


def test_initialisation_bounds_are_pytorchs():
    m = agrad.nn.ConvTranspose2d(8, 6, 3)  # weight (8, 6, 3, 3): fan_in = 6·9 = 54
    bound = 1 / math.sqrt(54)  # kaiming_uniform_(a=√5) gives 1/√fan_in, as does the bias
    assert tuple(m.weight.shape) == (8, 6, 3, 3)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound


def test_bad_calls_raise_as_pytorch():
    for lib in (torch, agrad):
        with pytest.raises(ValueError):
            lib.nn.ConvTranspose2d(3, 3, 3, padding_mode="reflect")
        with pytest.raises(ValueError):  # groups must divide the channels
            lib.nn.ConvTranspose2d(3, 4, 3, groups=2)
        m = lib.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
        with pytest.raises(ValueError):  # an output size out of reach
            m(lib.tensor(_x(1, 2, 4, 4)), output_size=(20, 20))
        with pytest.raises(RuntimeError):  # the wrong channel count
            m(lib.tensor(_x(1, 3, 4, 4)))
        with pytest.raises(RuntimeError):  # output_padding not below stride or dilation
            lib.nn.functional.conv_transpose2d(
                lib.tensor(_x(1, 2, 3, 3)), lib.tensor(_x(2, 3, 3, 3)), stride=2,
                output_padding=2,
            )  # fmt: skip
