"""as_strided and storage_offset against PyTorch: values, gradients (overlapping windows add
theirs up: AsStridedBackward0), strides, storage sharing, in-place writes through the
result and into its input, second derivatives, and the same refusals; the two inputs agrad
refuses rather than give another gradient than PyTorch's say so."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch
from idioms._registry import raised

import agrad
from agrad.errors import AgradError

torch = require_torch()

CALLS = {
    "windows": lambda t, y: y.as_strided((4, 3), (1, 1)),
    "windows_fn": lambda t, y: t.as_strided(y, (3, 4), (2, 1), 1),
    "matrix": lambda t, y: y.as_strided((3, 4), (4, 1)),
    "transposed": lambda t, y: y.as_strided((4, 3), (1, 4)),
    "every_other": lambda t, y: y.as_strided((6,), (2,)),
    "offset": lambda t, y: y.as_strided((2, 2), (3, 1), storage_offset=5),
    "broadcast_zero_stride": lambda t, y: y.as_strided((3, 2), (0, 1)),
    "all_zero_strides": lambda t, y: y.as_strided((2, 2), (0, 0), 7),
    "three_dims": lambda t, y: y.as_strided((2, 2, 2), (6, 2, 1)),
    "scalar": lambda t, y: y.as_strided((), (), 3),
    "empty": lambda t, y: y.as_strided((0, 3), (1, 1)),
    "whole": lambda t, y: y.as_strided((12,), (1,)),
    "of_a_slice": lambda t, y: y[2:].as_strided((3,), (2,)),
    "of_a_slice_offset": lambda t, y: t.as_strided(y[2:], (3,), (2,), 3),
    "of_a_transpose": lambda t, y: y.reshape(3, 4).t().as_strided((2, 2), (1, 4)),
    "of_a_view_of_a_view": lambda t, y: y.reshape(3, 4)[1:].as_strided((2, 3), (1, 1)),
    "chained": lambda t, y: y.as_strided((2, 4), (5, 1)).as_strided((3, 2), (1, 5), 1),
}


def _run(lib, call, weights=True):
    x = lib.tensor(np.arange(1.0, 13.0) / 5, dtype=lib.float64, requires_grad=True)
    y = x * 1.0
    out = CALLS[call](lib, y)
    w = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) + 1.0
    (out.sin() * w).sum().backward()
    return {
        "values": out.detach().numpy().copy(),
        "grad": x.grad.numpy().copy(),
        "stride": out.stride(),
        "offset": out.storage_offset(),
        "name": type(out.grad_fn).__name__,
        "view": out._base is y if out.numel() else None,
    }


@pytest.mark.parametrize("call", sorted(CALLS))
def test_values_gradients_and_layout_match_pytorch(call):
    ours, theirs = _run(agrad, call), _run(torch, call)
    np.testing.assert_array_equal(ours["values"], theirs["values"])
    np.testing.assert_allclose(ours["grad"], theirs["grad"], rtol=1e-13)
    assert ours["stride"] == theirs["stride"]
    assert ours["offset"] == theirs["offset"]
    assert ours["name"] == theirs["name"] == "AsStridedBackward0"
    if ours["view"] is not None:
        assert ours["view"] == theirs["view"]


def test_a_root_kept_transposed_is_read_in_its_storage_order_as_pytorch():
    def run(lib):
        x = lib.tensor(np.arange(1.0, 13.0) / 5, dtype=lib.float64, requires_grad=True)
        c = (x * 1.0).reshape(4, 3).t().clone()  # clone keeps the transpose's layout
        out = c.as_strided((3, 3), (1, 2), 1)
        (out.sin() * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return c.stride(), out.detach().numpy().copy(), x.grad.numpy().copy()

    ours, theirs = run(agrad), run(torch)
    assert ours[0] == theirs[0] == (1, 3)
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-13)


def test_overlapping_windows_add_up_their_gradients():
    x = agrad.arange(5.0, requires_grad=True)
    out = x.as_strided((3, 3), (1, 1))  # element i appears min(i, 4 - i, 2) + 1 times
    (out * agrad.arange(9.0).reshape(3, 3)).sum().backward()
    # Each x[k] gets the sum of the weights of the windows' elements that are x[k].
    expect = np.zeros(5)
    for i in range(3):
        for j in range(3):
            expect[i + j] += 3 * i + j
    np.testing.assert_array_equal(x.grad.numpy(), expect)


def test_second_derivatives_match_pytorch():
    def run(lib):
        x = lib.tensor(np.linspace(0.1, 1.2, 8), dtype=lib.float64, requires_grad=True)
        out = x.as_strided((3, 4), (2, 1))
        (g,) = lib.autograd.grad((out**3).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return g.detach().numpy(), h.numpy()

    for ours, theirs in zip(run(agrad), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_gradient_matches_finite_differences():
    base = np.linspace(-1.0, 1.0, 7)

    def f(values):
        x = agrad.tensor(values, requires_grad=True)
        out = (x.as_strided((3, 3), (2, 1)).exp() * agrad.arange(9.0).reshape(3, 3)).sum()
        return out

    loss = f(base)
    loss.backward()
    eps = 1e-6
    numeric = []
    for k in range(base.size):
        step = np.zeros_like(base)
        step[k] = eps
        numeric.append((f(base + step).item() - f(base - step).item()) / (2 * eps))
    x = agrad.tensor(base, requires_grad=True)
    (x.as_strided((3, 3), (2, 1)).exp() * agrad.arange(9.0).reshape(3, 3)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-7)


def test_the_result_shares_the_inputs_storage_and_version_counter():
    y = agrad.arange(6.0)
    out = y.as_strided((2, 2), (1, 2))
    assert np.shares_memory(out.numpy(), y.numpy())
    y.add_(10.0)
    assert out.tolist() == [[10.0, 12.0], [11.0, 13.0]]
    out.mul_(2.0)  # a write through it reaches the input
    assert y.tolist() == [20.0, 22.0, 24.0, 26.0, 14.0, 15.0]
    assert out._version == y._version


def _write(lib, through_view):
    x = lib.tensor(np.arange(1.0, 13.0) / 5, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
    y = x * 1.0
    v = y.as_strided((2, 3), (1, 4), 1)
    if through_view:
        v.mul_(w)
    else:
        y.mul_(x)
    loss = (y.log() * lib.arange(12.0, dtype=lib.float64)).sum() + (v * v).sum()
    loss.backward()
    return [t.detach().numpy().copy() for t in (y, v, x.grad, w.grad if through_view else x)]


@pytest.mark.parametrize("through_view", [True, False])
def test_in_place_writes_through_and_into_it_match_pytorch(through_view):
    for ours, theirs in zip(_write(agrad, through_view), _write(torch, through_view), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13)


def _error(lib, fn):
    exc = raised(lambda: fn(lib))  # (the refusal itself is compared)
    assert exc is not None, f"{lib.__name__} did not refuse"
    return exc


REFUSALS = {
    "out_of_bounds": lambda t: t.ones(12, dtype=t.float64).as_strided((3, 3), (1, 1), 9),
    "offset_out_of_bounds": lambda t: t.ones(12, dtype=t.float32).as_strided((2,), (1,), 12),
    "negative_stride": lambda t: t.ones(4).as_strided((2,), (-1,)),
    "negative_size": lambda t: t.ones(4).as_strided((-1,), (1,)),
    "negative_offset": lambda t: t.ones(4).as_strided((2,), (1,), -1),
    "length_mismatch": lambda t: t.ones(4).as_strided((2, 2), (1,)),
    "float_size": lambda t: t.ones(4).as_strided([2.0], (1,)),
    "leaf_write": lambda t: t.ones(4, requires_grad=True).as_strided((2,), (1,)).mul_(2),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_match_pytorch(name):
    ours, theirs = _error(agrad, REFUSALS[name]), _error(torch, REFUSALS[name])
    assert isinstance(ours, type(theirs)) or (
        isinstance(theirs, RuntimeError) and isinstance(ours, RuntimeError)
    ), (ours, theirs)
    if name != "leaf_write":
        assert str(ours) == str(theirs)


def test_an_empty_result_may_start_at_the_end_of_the_storage():
    for lib in (agrad, torch):
        assert lib.ones(4).as_strided((0,), (1,), 9).shape == (0,)


def test_a_write_into_overlapping_elements_is_refused_as_into_unfold_windows():
    # PyTorch writes them one after another (its result depends on the order); agrad
    # refuses, as for a write into overlapping unfold windows.
    for tracked in (True, False):
        y = agrad.ones(4, requires_grad=tracked) * 1
        with pytest.raises(AgradError, match="refers to a single memory location"):
            y.as_strided((2, 2), (1, 1)).mul_(2)


def test_inputs_agrad_refuses_say_what_to_do_instead():
    # PyTorch spreads the gradient over an expanded input's aliases, and reads storage
    # outside a view without sending it a gradient; agrad refuses rather than differ.
    e = agrad.ones(2, requires_grad=True).expand(3, 2)
    with pytest.raises(AgradError, match="expanded from"):
        e.as_strided((2,), (1,))
    y = agrad.arange(12.0, requires_grad=True) * 1.0
    with pytest.raises(AgradError, match="outside the input.*unfold"):
        y.reshape(3, 4).t()[1:].as_strided((2,), (1,), 0)
    windows = y.as_strided((4, 4), (2, 1))  # overlapping: so is a view of it
    with pytest.raises(AgradError, match="overlap in memory"):
        windows.as_strided((3, 3), (1, 1), 1)
