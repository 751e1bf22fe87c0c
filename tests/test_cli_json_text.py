"""The vectorised JSON writer (agrad.cli.render.json_text) against json.dumps(to_json(...)):
the same text, byte for byte, for every kind of float.

The oracle is Python's own `repr` (through json.dumps), independent of the NumPy arithmetic
that json_text uses to find the shortest digits.
"""

import contextlib
import io
import json

import numpy as np
import pytest

from agrad.check.serial import to_json
from agrad.cli import run
from agrad.cli.render import json_text
from agrad.cli.render.json_text import RawArray, array_text, dumps

RNG = np.random.default_rng(20261201)
N = 100_000


def _same(array: np.ndarray) -> None:
    want = json.dumps(to_json(array))
    got = array_text(array)
    if got != want:  # name the first element that differs, not two megabytes of text
        flat = array.reshape(-1)
        for v in flat:
            one = np.array([v, 0.5])
            if array_text(one) != json.dumps(to_json(one)):
                pytest.fail(f"{v!r}: {array_text(one)} != {json.dumps(to_json(one))}")
        pytest.fail(f"shape {array.shape}: the texts differ (separators?)")


def _specials() -> np.ndarray:
    p10 = 10.0 ** np.arange(-307, 309)
    p2 = np.ldexp(1.0, np.arange(-1074, 1024))
    values = [
        0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e16, -1e16, 1e-5, 1e-4, 9.999e-5, 1e15,
        1e17, 2.0**53, 2.0**53 + 2, -(2.0**53), 2.0**53 - 1, 1e22, 1e23, 5e-324, 1e-323,
        2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, 0.1, 0.2,
        0.3, 0.1 + 0.2, 0.5, 1.5, 2.5, -2.5, 123.456, 1 / 3, 2 / 3, 1e-7, 1.5e-7,
        123456789012345.6, 1234567890123456.7, 0.125, 9.999999999999999e15, 1e21, 1e-21,
        3.0, -7.0, 4.35, 0.07, 5e-5, 1e100, 1e-100, 1e270, 1e-270, 9.5, 0.95, 99.5,
    ]  # fmt: skip
    return np.concatenate(
        [values, p10, np.nextafter(p10, 0), np.nextafter(p10, np.inf), p2, -p2, p2[:-2] * 3]
    )


@pytest.mark.parametrize(
    "name",
    [
        "bits",
        "randn",
        "scaled",
        "large",
        "dyadic",
        "float32",
        "float32 scaled",
        "short",
        "specials",
        "ints",
    ],  # fmt: skip
)
def test_array_text_is_json_dumps_of_to_json(name):
    if name == "bits":  # every sign, exponent and mantissa: subnormals, nan payloads, ...
        a = RNG.integers(0, 2**64, N, dtype=np.uint64).view(np.float64)
    elif name == "randn":
        a = RNG.standard_normal(N)
    elif name == "scaled":
        a = RNG.standard_normal(N) * 10.0 ** RNG.integers(-40, 40, N)
    elif name == "large":  # exact X: ties between candidates, endpoints of the interval
        a = RNG.standard_normal(N) * 10.0 ** RNG.integers(8, 22, N)
    elif name == "dyadic":  # short binary fractions: exact decimal expansions
        a = RNG.integers(1, 2**53, N) * 2.0 ** RNG.integers(-60, 12, N)
    elif name == "float32":
        a = RNG.standard_normal(N).astype(np.float32).astype(np.float64)
    elif name == "float32 scaled":
        scale = np.float32(10) ** RNG.integers(-30, 30, N).astype(np.float32)
        a = (RNG.standard_normal(N).astype(np.float32) * scale).astype(np.float64)
    elif name == "short":  # few significant digits: 0.5, 12.25, 3e-9 (the search's long end)
        digits = RNG.integers(0, 8, N)
        a = np.rint(RNG.standard_normal(N) * 1e3 * 10.0**digits) / 10.0**digits
        a *= 10.0 ** RNG.integers(-12, 12, N)
    elif name == "specials":
        a = _specials()
    else:  # whole numbers: ints below 2**53, floats above
        a = np.concatenate(
            [RNG.integers(-(2**53), 2**53, 2000), RNG.integers(-9, 9, 2000), [2**53, 2**60]]
        ).astype(np.float64)
    _same(a)


def test_nested_shapes_and_separators():
    for shape in [(1,), (64,), (3, 40), (200, 200), (5, 1, 7), (2, 3, 4, 5), (70, 1)]:
        _same(RNG.standard_normal(shape) * 10.0 ** RNG.integers(-8, 8, shape))
    _same(np.zeros((0, 3)))  # empty and 0-d go through to_json
    _same(np.array(2.5))


def test_nonfinite_null():
    a = np.array([1.5, np.nan, -np.inf, np.inf, -0.0] * 20)
    want = json.dumps([None if isinstance(v, str) else v for v in to_json(a)])
    assert array_text(a, "null") == want


def test_dumps_of_a_payload_is_json_dumps():
    grads = RNG.standard_normal((10, 10))
    payload = {
        "value": 41,
        "shape": [10, 10],
        "grad_fn": None,
        "grads": {"w": RawArray(grads), "ü": [1.5, "nan"]},
        "unused": ["b"],
        "nested": [RawArray(grads[0]), {"k": True}],
    }
    plain = {**payload, "grads": {"w": to_json(grads), "ü": [1.5, "nan"]}}
    plain["nested"] = [to_json(grads[0]), {"k": True}]
    assert dumps(payload) == json.dumps(plain)


def test_the_fast_path_decides_ordinary_values():
    # Not a timing: below 1e16 (where 10**s is exact or a double-double suffices) the
    # arithmetic decides every value, exact ties and interval endpoints included; only
    # the rare undecidable one would be handed to repr.
    rng = np.random.default_rng(7)
    v = np.abs(rng.standard_normal(20_000)) * 10.0 ** rng.integers(-30, 15, 20_000)
    rows = np.zeros((v.size, json_text._FIELD), dtype=np.uint8)
    left = json_text._shortest_numbers(v, rows, np.arange(v.size))
    assert left.size == 0, v[left][:5]


def _cli(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run(args)
    return code, out.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ["jacobian", "tanh(A@x)", "--set", "A=randn(30,40)*1e5", "--set", "x=randn(40)",
         "--wrt", "x,A"],
        ["eval", "sum(log(x)*w)", "--set", "x=randn(100)", "--set", "w=rand(100)", "--wrt",
         "x,w"],
        ["eval", "x/0", "--set", "x=randn(100)", "--nonfinite", "null"],
        ["hessian", "sum(x**3*y)", "--set", "x=randn(9)", "--set", "y=randn(9)", "--wrt",
         "x,y"],
        ["eval", "sum(x*3)", "--set", "x=randn(80)", "--wrt", "x", "--dtype", "float32"],
    ],
)  # fmt: skip
def test_cli_json_output_unchanged(args, monkeypatch):
    code, fast = _cli([*args, "--format", "json"])
    monkeypatch.setattr(json_text, "MIN_SIZE", 10**12)  # every array through to_json
    code_plain, plain = _cli([*args, "--format", "json"])
    assert code == code_plain == 0
    assert fast == plain
