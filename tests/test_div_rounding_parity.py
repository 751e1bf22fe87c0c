"""`div(a, b, rounding_mode=...)` and integer division by zero, against PyTorch.

QA round 20: ``torch.div(x, 2, rounding_mode='floor')`` and ``x.div(2, rounding_mode=...)``
raised TypeError (only ``divide`` took the keyword), ``divide(int, int, 'trunc')`` gave a
float tensor where PyTorch keeps int64, a floor-mode result of a tensor that requires grad
did not require grad (PyTorch: DivBackward2, zero gradients), and ``int_tensor // 0`` gave
0 and a NumPy warning where PyTorch raises RuntimeError("ZeroDivisionError"). Expected
values, dtypes, grad_fn names and messages come from PyTorch on the same inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import require_torch

import agrad

INTS = (np.array([7, -7, 6, -6, 0, 1, -1]), np.array([2, 2, -4, 4, 3, -3, 3]))
FLOATS = (
    np.array([7.5, -7.5, 1.0, -0.0, np.inf, 2.0, np.nan, 1e300]),
    np.array([2.0, 2.0, 0.1, 3.0, 2.0, -np.inf, 1.0, 1e-300]),
)
MODES = ["trunc", "floor"]


def _result(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except RuntimeError as e:
            return ("raised RuntimeError", str(e))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return ("raised", type(e).__name__, str(e))
    return (
        "value",
        str(r.dtype),
        np.asarray(r.detach()).tolist(),
        r.requires_grad,
        type(r.grad_fn).__name__ if r.grad_fn is not None else None,
    )


def _same(fn):
    torch = require_torch()
    ours, theirs = _result(lambda: fn(agrad)), _result(lambda: fn(torch))
    if ours[0] == "value" and theirs[0] == "value":  # nan == nan for this comparison
        np.testing.assert_array_equal(np.array(ours[2]), np.array(theirs[2]))
        ours, theirs = ours[:2] + ours[3:], theirs[:2] + theirs[3:]
    assert ours == theirs


FACES = {
    "torch.div": lambda lib, a, b, m: lib.div(a, b, rounding_mode=m),
    "torch.divide": lambda lib, a, b, m: lib.divide(a, b, rounding_mode=m),
    "Tensor.div": lambda lib, a, b, m: a.div(b, rounding_mode=m),
    "Tensor.divide": lambda lib, a, b, m: a.divide(b, rounding_mode=m),
}


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("mode", [*MODES, None])
@pytest.mark.parametrize("kind", ["ints", "floats", "float by int scalar", "int by int scalar"])
def test_rounding_modes_match_pytorch(face, mode, kind):
    if mode is None and kind.startswith("int"):
        pytest.skip("true division of integers gives the default dtype: float64 in agrad")

    def run(lib):
        a, b = INTS if kind.startswith("int") else FLOATS
        if kind.endswith("scalar"):
            return FACES[face](lib, lib.tensor(a), -3, mode)
        return FACES[face](lib, lib.tensor(a), lib.tensor(b), mode)

    _same(run)


@pytest.mark.parametrize("mode", MODES)
def test_float_division_by_zero_with_a_mode_matches_pytorch(mode):
    a = np.array([1.0, -1.0, 0.0, np.inf])
    _same(lambda lib: lib.div(lib.tensor(a), lib.tensor(np.zeros(4)), rounding_mode=mode))
    _same(lambda lib: lib.div(lib.tensor(a), 0.0, rounding_mode=mode))


@pytest.mark.parametrize("mode", MODES)
def test_gradient_is_zero_and_recorded_as_pytorch(mode):
    torch = require_torch()
    grads = {}
    for lib in (agrad, torch):
        x = lib.tensor([1.5, -2.5, 3.0], requires_grad=True)
        y = lib.tensor([2.0, 2.0, -0.5], requires_grad=True)
        q = lib.div(x, y, rounding_mode=mode)
        assert type(q.grad_fn).__name__ == "DivBackward2"
        q.backward(lib.tensor([1.0, float("nan"), float("inf")]))  # zeros even there
        grads[lib] = (x.grad.tolist(), y.grad.tolist())
    assert grads[agrad] == grads[torch] == ([0.0] * 3, [0.0] * 3)


def test_in_place_div_with_a_mode_matches_pytorch():
    def run(lib, mode, dtype):
        x = lib.tensor([7, -7, 5], dtype=getattr(lib, dtype))
        x.div_(2, rounding_mode=mode)
        return x

    for mode in MODES:
        for dtype in ("float64", "int64"):
            _same(lambda lib, mode=mode, dtype=dtype: run(lib, mode, dtype))
    torch = require_torch()
    for lib in (agrad, torch):  # a float result into int64: refused (the texts name the
        with pytest.raises(RuntimeError, match="can't be cast"):  # default dtype)
            lib.tensor([7, -7]).div_(2)


def test_a_bad_rounding_mode_is_refused():
    torch = require_torch()
    for lib in (agrad, torch):
        with pytest.raises((ValueError, RuntimeError)):
            lib.div(lib.tensor([1.0]), 2.0, rounding_mode="round")


def _floor_divided_in_place(a):
    a //= 0
    return a


INTEGER_ZERO = {
    "a // 0": lambda lib, a, z: a // 0,
    "a // zeros": lambda lib, a, z: a // z,
    "floor_divide": lambda lib, a, z: lib.floor_divide(a, z),
    "a % 0": lambda lib, a, z: a % 0,
    "remainder": lambda lib, a, z: lib.remainder(a, z),
    "fmod": lambda lib, a, z: lib.fmod(a, z),
    "div trunc": lambda lib, a, z: lib.div(a, z, rounding_mode="trunc"),
    "div floor": lambda lib, a, z: lib.div(a, 0, rounding_mode="floor"),
    "Tensor.div_ floor": lambda lib, a, z: a.div_(z, rounding_mode="floor"),
    "a //= 0": lambda lib, a, z: _floor_divided_in_place(a),
    "one zero among others": lambda lib, a, z: a // lib.tensor([1, 0, 2]),
}


@pytest.mark.parametrize("case", INTEGER_ZERO)
def test_integer_division_by_zero_raises_as_pytorch(case):
    torch = require_torch()
    messages = []
    for lib in (agrad, torch):
        a, z = lib.tensor([5, -5, 0]), lib.tensor([0, 0, 0])
        with pytest.raises(RuntimeError) as info:
            INTEGER_ZERO[case](lib, a, z)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "ZeroDivisionError"


def test_float_division_by_zero_still_gives_inf_and_nan():
    """Only integer division refuses a zero divisor; floats follow IEEE, as PyTorch."""

    def floats(lib, values):
        return lib.tensor(values, dtype=lib.float64)

    _same(lambda lib: floats(lib, [5.0, -5.0, 0.0]) // 0)
    _same(lambda lib: floats(lib, [5.0, -5.0, 0.0]) % floats(lib, [0.0, 0.0, 0.0]))
    _same(lambda lib: lib.fmod(floats(lib, [5.0, -5.0]), 0.0))
    _same(lambda lib: floats(lib, [5.0, -5.0, 0.0]) / 0)
    _same(lambda lib: lib.tensor([7, -7]) // lib.tensor([2, -2]))
