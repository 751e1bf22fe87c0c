"""Printing as PyTorch: repr/str of tensors, Size and dtypes, against PyTorch's own text.

The oracle is PyTorch 2.13's printing of the same values (float64 default dtype on both
sides). Cases are chosen where the layout has a decision to make: whole numbers, mixed
magnitudes (scientific notation), nan/inf/-0., widths that wrap at 80 columns, the
1,000-element summary in one and several dimensions, suffixes that do not fit, printoptions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require_torch

import agrad

VALUES = {
    "scalar": 3.5,
    "scalar_whole": 2.0,
    "scalar_tiny": 1e-7,
    "scalar_neg_zero": -0.0,
    "whole": [1.0, 2.0, -3.0],
    "whole_big": [1.0, 2e9],
    "fraction": [0.5, 1.25, -2.125],
    "mixed_magnitude": [1e-5, 1.0, 300.0],
    "ratio_over_1000": [0.001, 2.5],
    "nonfinite": [math.nan, math.inf, -math.inf, 1.5],
    "only_nonfinite": [math.nan, math.inf],
    "zeros": [0.0, 0.0],
    "neg_zero": [-0.0, 1.0],
    "matrix": [[1.0, -2.5], [3.25, 4.0]],
    "cube": np.arange(24.0).reshape(2, 3, 4).tolist(),
    "wide_row": np.linspace(-1, 1, 37).tolist(),
    "wide_sci": (np.arange(30.0) * 1e-6).tolist(),
    "wide_matrix": np.linspace(0, 5, 60).reshape(3, 20).tolist(),
    "summary_1d": np.arange(1001.0).tolist(),
    "summary_2d": np.arange(40 * 40.0).reshape(40, 40).tolist(),
    "summary_3d": (np.arange(12 * 10 * 10.0).reshape(12, 10, 10) / 7).tolist(),
    "summary_short_rows": np.arange(3 * 500.0).reshape(500, 3).tolist(),
}


def _pair(torch, value, dtype=None, **kwargs):
    """The same tensor made by PyTorch and by agrad (``dtype`` by name)."""
    if dtype is None:
        return torch.tensor(value, **kwargs), agrad.tensor(value, **kwargs)
    t = torch.tensor(value, dtype=getattr(torch, dtype), **kwargs)
    return t, agrad.tensor(value, dtype=getattr(agrad, dtype), **kwargs)


@pytest.fixture
def torch64():
    torch = require_torch()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(previous)
    torch.set_printoptions(profile="default")
    agrad.set_printoptions(profile="default")


@pytest.mark.parametrize("name", sorted(VALUES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_repr_matches_pytorch(torch64, name, dtype):
    t, a = _pair(torch64, VALUES[name], dtype)
    assert repr(a) == repr(t)
    assert str(a) == str(t)


@pytest.mark.parametrize(
    "value", [[1, -20, 300], [[True, False], [False, True]], [7], list(range(2000))]
)
def test_integer_and_bool_repr_matches_pytorch(torch64, value):
    t, a = _pair(torch64, value)
    assert repr(a) == repr(t)
    for dtype in ("int32", "int16"):
        if isinstance(value[0], list):
            continue
        kind = getattr(torch64, dtype)
        assert repr(agrad.tensor(value, dtype=getattr(agrad, dtype))) == repr(
            torch64.tensor(value, dtype=kind)
        )


def test_uint8_repr_matches_pytorch(torch64):
    t, a = _pair(torch64, [0, 7, 255], "uint8")
    assert repr(a) == repr(t)


@pytest.mark.parametrize("name", ["wide_row", "matrix", "scalar", "summary_2d"])
def test_suffixes_wrap_as_pytorch(torch64, name):
    # requires_grad=True and grad_fn=<...> move to their own line when they pass 80 columns.
    t, a = _pair(torch64, VALUES[name], requires_grad=True)
    assert repr(a) == repr(t)
    assert repr(a * 2) == repr(t * 2)
    t32, a32 = _pair(torch64, VALUES[name], "float32", requires_grad=True)
    assert repr(a32.sin()) == repr(t32.sin())  # dtype= and grad_fn= both


def test_empty_tensors_match_pytorch(torch64):
    for shape in [(0,), (2, 0), (0, 3, 1)]:
        assert repr(agrad.zeros(shape)) == repr(torch64.zeros(shape))
        assert repr(agrad.zeros(shape, dtype=agrad.int64)) == repr(
            torch64.zeros(shape, dtype=torch64.int64)
        )


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"precision": 8},
        {"threshold": 5},
        {"edgeitems": 1, "threshold": 5},
        {"linewidth": 40},
        {"sci_mode": True},
        {"sci_mode": False},
        {"profile": "short"},
        {"profile": "full"},
    ],
)
def test_printoptions_match_pytorch(torch64, options):
    torch64.set_printoptions(**options)
    agrad.set_printoptions(**options)
    for name in ("fraction", "mixed_magnitude", "wide_row", "cube", "summary_1d"):
        t, a = _pair(torch64, VALUES[name])
        assert repr(a) == repr(t), (options, name)
    assert agrad.get_printoptions() == {
        k: v
        for k, v in torch64._tensor_str.get_printoptions().items()
        if k in agrad.get_printoptions()
    }


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown profile"):
        agrad.set_printoptions(profile="wide")


def test_size_and_dtype_print_as_pytorch(torch64):
    x, t = agrad.zeros(2, 3), torch64.zeros(2, 3)
    assert repr(x.shape) == repr(t.shape) == "torch.Size([2, 3])"
    assert str(x.size()) == str(t.size())
    assert repr(agrad.tensor(1.0).shape) == repr(torch64.tensor(1.0).shape)
    assert x.size(1) == 3 and type(x.size(1)) is int
    assert x.shape == (2, 3) and isinstance(x.shape, tuple) and isinstance(x.shape, agrad.Size)
    assert repr(x.shape[1:]) == repr(t.shape[1:])
    assert x.shape.numel() == t.shape.numel() == 6
    for name in ("float32", "float64", "int64", "int32", "bool", "uint8", "float16"):
        assert str(getattr(agrad, name)) == str(getattr(torch64, name))
        assert repr(getattr(agrad, name)) == repr(getattr(torch64, name))
    assert str(agrad.float) == str(torch64.float) and str(agrad.long) == str(torch64.long)


def test_dtype_stands_for_its_numpy_dtype():
    # Everything NumPy-side keeps working with agrad's dtypes (they carry a NumPy dtype).
    assert agrad.float32 == np.float32 and agrad.float32 == np.dtype("float32")
    assert np.dtype("float32") == agrad.float32 and agrad.float32 != agrad.float64
    assert np.zeros(2, dtype=agrad.float32).dtype == np.float32
    assert {np.dtype("float32"): 1}[agrad.float32] == 1
    assert agrad.tensor([1.0], dtype=agrad.float32).dtype is agrad.float32
    assert agrad.float32.is_floating_point and not agrad.int64.is_floating_point
    assert agrad.float32.itemsize == 4 and agrad.float32.kind == "f"
    assert (agrad.float32 == "not a dtype") is False


def test_named_results_print_as_pytorch(torch64):
    value = [[1.0, 3.0, -2.0], [4.0, 2.0, 0.5]]
    t, a = torch64.tensor(value), agrad.tensor(value)
    for fn in (
        lambda m, x: m.max(x, 1),
        lambda m, x: m.min(x, dim=0, keepdim=True),
        lambda m, x: m.sort(x),
        lambda m, x: m.topk(x, 2),
        lambda m, x: m.histogram(x.reshape(-1), bins=3),
    ):
        assert repr(fn(agrad, a)) == repr(fn(torch64, t))
    values, indices = agrad.max(a, 1)  # still a tuple
    assert agrad.max(a, 1).values.tolist() == values.tolist()


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("name", ["scalar", "matrix", "wide_row"])
def test_parameters_print_as_pytorch(torch64, name, requires_grad):
    # print(model.weight) and print(list(model.parameters())), as tutorials do
    t, a = _pair(torch64, VALUES[name])
    theirs = torch64.nn.Parameter(t, requires_grad=requires_grad)
    ours = agrad.nn.Parameter(a, requires_grad=requires_grad)
    assert repr(ours) == repr(theirs) and str([ours, ours]) == str([theirs, theirs])
    assert repr(ours * 2) == repr(theirs * 2) and repr(ours.data) == repr(theirs.data)
