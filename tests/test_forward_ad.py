"""torch.autograd.forward_ad against PyTorch: tangents of dual tensors through the ops real
forward-AD code uses (the forward_ad tutorial's sin(x)·x, a layer, softmax, views and an
in-place write, several duals at once), the errors PyTorch raises, and the one refusal that
is agrad's own (no_grad inside a dual level, where agrad could not keep the tangent)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

FUNCTIONS = {
    "sin_times_x": lambda t, a, b: t.sin(a) * a,
    "layer": lambda t, a, b: t.tanh(b.reshape(2, 2) @ a[:2] + a[2]),
    "softmax": lambda t, a, b: t.softmax(a * b[:3], dim=0),
    "two_duals": lambda t, a, b: (a[:2] * b[:2]).exp() + b[2:].sum(),
    "views_and_inplace": lambda t, a, b: _views_and_inplace(a, b),
    "reduction": lambda t, a, b: (a**3).sum() * b.mean(),
    "constant_in_dual": lambda t, a, b: a * 0 + 1,
}


def _views_and_inplace(a: Any, b: Any) -> Any:
    y = a * 1
    y[1:] = b[:2] * 2  # (a write over a value the graph saved would raise: see below)
    return (y.unsqueeze(1) * a).T.reshape(-1)


def _run(lib: Any, name: str) -> tuple:
    fw = lib.autograd.forward_ad
    a = lib.tensor([0.5, -1.25, 2.0], dtype=lib.float64)
    b = lib.tensor([0.3, 1.5, -0.7, 0.9], dtype=lib.float64)
    ta = lib.tensor([1.0, 0.0, -2.0], dtype=lib.float64)
    tb = lib.tensor([0.5, 0.25, 1.0, -1.0], dtype=lib.float64)
    with fw.dual_level():
        da = fw.make_dual(a, ta)
        db = fw.make_dual(b, tb) if name == "two_duals" or name == "views_and_inplace" else b
        out = FUNCTIONS[name](lib, da, db)
        primal, tangent = fw.unpack_dual(out)
        own = fw.unpack_dual(da).tangent
    return (
        np.asarray(primal.detach().numpy()),
        None if tangent is None else np.asarray(tangent.numpy()),
        np.asarray(own.numpy()),
        fw.unpack_dual(out).tangent,  # outside the level: None
    )


@pytest.mark.parametrize("name", FUNCTIONS)
def test_tangents_as_pytorch(name: str) -> None:
    expected, actual = _run(torch, name), _run(agrad, name)
    for e, a in zip(expected[:3], actual[:3], strict=True):
        if e is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-14)
    assert actual[3] is None and expected[3] is None


def test_errors_as_pytorch() -> None:
    texts = []
    for lib in (torch, agrad):
        fw = lib.autograd.forward_ad
        found = []
        with pytest.raises(RuntimeError) as outside:
            fw.make_dual(lib.ones(2), lib.ones(2))
        found.append(str(outside.value))
        with fw.dual_level():
            with pytest.raises(RuntimeError) as shape:
                fw.make_dual(lib.ones(2), lib.ones(3))
            found.append(str(shape.value))
            found.append(fw.unpack_dual(lib.ones(2)).tangent)  # not a dual: None
        texts.append(found)
    assert texts[0] == texts[1]


def test_no_grad_inside_a_dual_level_is_refused_not_a_lost_tangent() -> None:
    # PyTorch propagates tangents under no_grad; agrad's come from the recorded graph, so it
    # refuses rather than return None where PyTorch has a tangent.
    fw = agrad.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(agrad.ones(2), agrad.ones(2))
        with pytest.raises(NotImplementedError, match="dual_level"), agrad.no_grad():
            d.sin()
        assert fw.unpack_dual(d.sin()).tangent is not None
    with agrad.no_grad():  # outside a level, no_grad is as always
        assert not (agrad.ones(2, requires_grad=True) * 2).requires_grad


def test_a_write_over_a_saved_value_raises_as_in_reverse_mode() -> None:
    # The tangent is computed from the recorded graph, which needs the values its rules
    # saved: overwriting one raises PyTorch's reverse-mode error (PyTorch's forward mode,
    # needing none, would give a tangent). Never a wrong tangent.
    fw = agrad.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(agrad.tensor([1.0, 2.0, 3.0]), agrad.ones(3))
        y = d * 1
        y[1:] = y[1:] * y[1:]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            fw.unpack_dual(y)
