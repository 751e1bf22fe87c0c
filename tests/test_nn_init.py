"""agrad.nn.init and the layers' default initialisations. agrad draws from its own generator,
so the numbers are not PyTorch's: the checks are PyTorch's gains and fan rules (compared
with torch.nn.init's), the bounds of uniform draws, and means and variances of large draws
within statistical tolerance (a few standard errors of the estimate)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad import nn, vision
from agrad.errors import AgradValueError


def vals(t):
    return np.asarray(t.detach()).copy()


def check_uniform(values, bound):
    """U(-bound, bound): inside the bounds, near both, mean 0 and variance bound²/3."""
    n = values.size
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.98 * bound and values.max() > 0.98 * bound
    assert abs(values.mean()) < 5 * bound / math.sqrt(3 * n)
    assert abs(values.var() / (bound**2 / 3) - 1) < 5 * math.sqrt(0.8 / n)  # var of U's x²


def check_normal(values, std, mean=0.0):
    n = values.size
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(values.std() / std - 1) < 5 / math.sqrt(2 * n)


def test_gains_and_fans_are_pytorchs():
    torch = require_torch()
    for name, param in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                        ("selu", None), ("conv_transpose2d", None)]:  # fmt: skip
        assert nn.init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param), rel=1e-15
        )
    for shape in [(5, 3), (4, 3, 2), (8, 4, 3, 3), (2, 6, 1, 5, 2)]:
        ours = nn.init._calculate_fan_in_and_fan_out(agrad.zeros(*shape))
        theirs = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
        assert ours == theirs
    with pytest.raises(AgradValueError, match="fewer than 2 dimensions"):
        nn.init.kaiming_uniform_(agrad.zeros(3))
    with pytest.raises(AgradValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("swish")
    with pytest.raises(AgradValueError, match="fan_in, fan_out"):
        nn.init.kaiming_normal_(agrad.zeros(3, 3), mode="fan_both")


def test_linear_and_conv_defaults():
    """kaiming_uniform_(a=√5) gives U(±1/√fan_in) for weights; biases U(±1/√fan_in)."""
    agrad.manual_seed(0)
    lin = nn.Linear(300, 400)
    check_uniform(vals(lin.weight), 1 / math.sqrt(300))
    check_uniform(vals(lin.bias), 1 / math.sqrt(300))
    conv = nn.Conv2d(16, 64, (3, 5), groups=2)
    fan_in = 8 * 15
    check_uniform(vals(conv.weight), 1 / math.sqrt(fan_in))
    assert np.abs(vals(conv.bias)).max() <= 1 / math.sqrt(fan_in)
    bil = nn.Bilinear(50, 20, 30)
    check_uniform(vals(bil.weight), 1 / math.sqrt(50))
    check_normal(vals(nn.Embedding(300, 200).weight), 1.0)


def test_init_functions():
    agrad.manual_seed(1)
    w = agrad.zeros(400, 300, requires_grad=True)
    assert nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu") is w
    check_normal(vals(w), math.sqrt(2 / 400))
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    check_uniform(vals(nn.init.kaiming_uniform_(w, a=0.3)), math.sqrt(6 / (1.09 * 300)))
    check_uniform(vals(nn.init.xavier_uniform_(w, gain=2.0)), 2 * math.sqrt(6 / 700))
    check_normal(vals(nn.init.xavier_normal_(w)), math.sqrt(2 / 700))
    check_uniform(vals(nn.init.uniform_(w, -3.0, 3.0)), 3.0)
    check_normal(vals(nn.init.normal_(w, 2.0, 0.5)), 0.5, mean=2.0)
    t = vals(nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=1.5))
    assert t.min() >= -0.5 and t.max() <= 1.5 and t.mean() > 0.2  # mass skewed right
    assert (vals(nn.init.constant_(w, 0.25)) == 0.25).all()
    assert (vals(nn.init.zeros_(w)) == 0).all() and (vals(nn.init.ones_(w)) == 1).all()
    np.testing.assert_array_equal(vals(nn.init.eye_(agrad.zeros(3, 4))), np.eye(3, 4))


def test_seeded_initialisation_repeats():
    agrad.manual_seed(7)
    a = vals(nn.Conv2d(3, 4, 3).weight)
    agrad.manual_seed(7)
    np.testing.assert_array_equal(a, vals(nn.Conv2d(3, 4, 3).weight))


def test_filling_a_leaf_that_requires_grad_outside_no_grad_is_refused():
    w = agrad.zeros(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.uniform_()
    with pytest.raises(AgradValueError, match="floating-point"):
        agrad.zeros(2, dtype=agrad.int64).normal_()


def test_resnet18_initialisation_is_torchvisions():
    """Convolutions: kaiming_normal_(fan_out, relu); batch norm: ones and zeros; fc: Linear's."""
    agrad.manual_seed(3)
    model = vision.models.resnet18()
    w = vals(model.layer3[0].conv2.weight)  # (256, 256, 3, 3): fan_out 256·9
    check_normal(w, math.sqrt(2 / (256 * 9)))
    check_normal(vals(model.conv1.weight), math.sqrt(2 / (64 * 49)))
    bn = model.layer1[1].bn2
    assert (vals(bn.weight) == 1).all() and (vals(bn.bias) == 0).all()
    assert (vals(bn.running_mean) == 0).all() and (vals(bn.running_var) == 1).all()
    check_uniform(vals(model.fc.weight), 1 / math.sqrt(512))
