"""Type promotion against real PyTorch: result dtypes and values over a grid of operand kinds
(bool/int32/int64/float32/float64 tensors, 0-d tensors, Python bool/int/float) and ops
(+ - * / **, float functions, comparisons, where, matmul), under both default dtypes; and
the mixed-dtype matrix products, linear layers and convolutions PyTorch refuses, with its
exception and message."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

DTYPES = ("bool", "int32", "int64", "float32", "float64")
VALUES = {"bool": [True, False, True], "int": [1, 2, 3], "float": [0.5, 1.5, 2.5]}
SCALARS = {"py_bool": True, "py_int": 2, "py_float": 1.5}
KINDS = (
    [("dim", d) for d in DTYPES]
    + [("0d", d) for d in DTYPES if d != "int32"]
    + [("py", name) for name in SCALARS]
)


def make(lib: Any, kind: tuple[str, str]) -> Any:
    """One operand of ``kind`` made with ``lib`` (torch or agrad)."""
    shape, name = kind
    if shape == "py":
        return SCALARS[name]
    values = VALUES["bool" if name == "bool" else "int" if "int" in name else "float"]
    data = values if shape == "dim" else values[1]
    return lib.tensor(data, dtype=getattr(lib, name))


def outcome(fn: Callable[[Any], Any], lib: Any) -> tuple[str, Any]:
    """("ok", (dtype name, values)) or ("raises", exception)."""
    try:
        out = fn(lib)
    except Exception as exc:  # noqa: BLE001 - compared with PyTorch's
        return "raises", exc
    return "ok", (str(out.dtype), np.asarray(out.detach() if hasattr(out, "detach") else out))


def compare(fn: Callable[[Any], Any], what: str) -> str | None:
    """None when agrad agrees with PyTorch on ``fn``; else what differs."""
    want, got = outcome(fn, torch), outcome(fn, agrad)
    if want[0] == "raises":
        if got[0] != "raises":
            return f"{what}: PyTorch raises {type(want[1]).__name__}, agrad gives {got[1][0]}"
        if not isinstance(got[1], _base_class(want[1])):
            return f"{what}: PyTorch raises {type(want[1]).__name__}, agrad {got[1]!r}"
        return None
    if got[0] == "raises":
        return f"{what}: PyTorch gives {want[1][0]}, agrad raises {got[1]!r}"
    (want_dtype, want_values), (got_dtype, got_values) = want[1], got[1]
    if want_dtype != got_dtype:
        return f"{what}: PyTorch {want_dtype}, agrad {got_dtype}"
    rtol = 1e-6 if "32" in want_dtype else 1e-12
    if want_values.dtype.kind in "fc":
        ok = np.allclose(got_values, want_values, rtol=rtol, atol=0, equal_nan=True)
    else:
        ok = np.array_equal(got_values, want_values)
    return None if ok else f"{what}: values {got_values} != PyTorch's {want_values}"


def _base_class(exc: BaseException) -> type:
    """The builtin class PyTorch's exception is (its messages' subclasses are RuntimeError)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request: pytest.FixtureRequest) -> Iterator[str]:
    """Both libraries' default dtype set, and restored after."""
    before = torch.get_default_dtype(), agrad.get_default_dtype()
    torch.set_default_dtype(getattr(torch, request.param))
    agrad.set_default_dtype(getattr(agrad, request.param))
    try:
        yield request.param
    finally:
        torch.set_default_dtype(before[0])
        agrad.set_default_dtype(before[1])


BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: a == b,
}


def _pairs() -> Iterator[tuple[tuple[str, str], tuple[str, str]]]:
    for a, b in itertools.product(KINDS, KINDS):
        if a[0] != "py" or b[0] != "py":
            yield a, b


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_operators(default_dtype: str, op: str) -> None:
    def run(a_kind: Any, b_kind: Any) -> Callable[[Any], Any]:
        return lambda lib: BINARY[op](make(lib, a_kind), make(lib, b_kind))

    pairs = list(_pairs())
    if op == "**":  # (bool ** bool: PyTorch's NotImplementedError, agrad's NumPy int8: not done)
        pairs = [(a, b) for a, b in pairs if "bool" not in a[1] or "bool" not in b[1]]
    wrong = [compare(run(a, b), f"{a} {op} {b}") for a, b in pairs]
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} differ from PyTorch:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "atan2", "remainder"])
def test_binary_functions(default_dtype: str, name: str) -> None:
    def run(a_kind: Any, b_kind: Any) -> Callable[[Any], Any]:
        return lambda lib: getattr(lib, name)(make(lib, a_kind), make(lib, b_kind))

    pairs = [(a, b) for a, b in _pairs() if a[0] != "py"]
    if name in ("maximum", "atan2"):  # (PyTorch's take tensors only: a number is its TypeError)
        pairs = [(a, b) for a, b in pairs if b[0] != "py"]
    if name == "remainder":  # (PyTorch has no bool remainder: its NotImplementedError)
        pairs = [(a, b) for a, b in pairs if "bool" not in a[1] or "bool" not in b[1]]
    wrong = [compare(run(a, b), f"{name}({a}, {b})") for a, b in pairs]
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} differ from PyTorch:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", ["sqrt", "exp", "sin", "tanh", "sigmoid", "log", "reciprocal"])
def test_float_functions(default_dtype: str, name: str) -> None:
    wrong = []
    for kind in KINDS:
        if kind[0] == "py":
            continue
        wrong.append(
            compare(lambda lib, k=kind: getattr(lib, name)(make(lib, k)), f"{name}({kind})")
        )
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} differ from PyTorch:\n" + "\n".join(wrong)


def test_where(default_dtype: str) -> None:
    def run(a_kind: Any, b_kind: Any) -> Callable[[Any], Any]:
        def fn(lib: Any) -> Any:
            cond = lib.tensor([True, False, True])
            return lib.where(cond, make(lib, a_kind), make(lib, b_kind))

        return fn

    wrong = [compare(run(a, b), f"where(c, {a}, {b})") for a, b in itertools.product(KINDS, KINDS)]
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} differ from PyTorch:\n" + "\n".join(wrong)


def test_scalar_first_and_in_place(default_dtype: str) -> None:
    cases = {
        "2 / int": lambda lib: 2 / lib.tensor([1, 2]),
        "2.5 ** int": lambda lib: 2.5 ** lib.tensor([1, 2]),
        "2 ** int": lambda lib: 2 ** lib.tensor([1, 2]),
        "1.5 - bool": lambda lib: 1.5 - lib.tensor([True, False]),
        "int ** 0.5": lambda lib: lib.tensor([1, 4]) ** 0.5,
        "f32.add_(f64)": lambda lib: lib.ones(2).add_(lib.ones(2, dtype=lib.float64)),
        "f64.mul_(f32)": lambda lib: lib.ones(2, dtype=lib.float64).mul_(lib.ones(2)),
        "int.add_(1.5)": lambda lib: lib.tensor([1, 2]).add_(1.5),
        "int.add_(f32)": lambda lib: lib.tensor([1, 2]).add_(lib.ones(2)),
        "int.div_(2)": lambda lib: lib.tensor([1, 2]).div_(2),
        "f32 leaf * int grad": lambda lib: _grad_dtype(lib),
    }
    wrong = [compare(fn, what) for what, fn in cases.items()]
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} differ from PyTorch:\n" + "\n".join(wrong)


def _grad_dtype(lib: Any) -> Any:
    x = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
    (x * lib.tensor([3, 4]) + lib.tensor(0.5, dtype=lib.float64)).sum().backward()
    return x.grad


MATRIX_SHAPES = {
    "vec": (3,),
    "mat": (2, 3),
    "mat_t": (3, 2),
    "batch": (2, 2, 3),
    "batch_t": (2, 3, 2),
}
MATMUL_PAIRS = [
    ("vec", "vec"), ("mat", "vec"), ("vec", "mat_t"), ("mat", "mat_t"), ("batch", "mat_t"),
    ("mat", "batch_t"), ("batch", "batch_t"), ("batch", "vec"),
]  # fmt: skip


def _matrix(lib: Any, shape: str, dtype: str) -> Any:
    dims = MATRIX_SHAPES[shape]
    values = np.arange(1, int(np.prod(dims)) + 1).reshape(dims) % 4
    return lib.tensor(values.tolist(), dtype=getattr(lib, dtype))


def test_matmul_grid(default_dtype: str) -> None:
    """matmul of every shape pair and dtype pair: the same dtype computes, two dtypes raise
    PyTorch's RuntimeError with its message (which names the kernel the shapes reach)."""
    wrong = []
    dtypes = [d for d in DTYPES if d != "bool"]  # (PyTorch has no bool matmul kernel)
    for (sa, sb), da, db in itertools.product(MATMUL_PAIRS, dtypes, dtypes):
        fn = lambda lib, sa=sa, sb=sb, da=da, db=db: _matrix(lib, sa, da) @ _matrix(lib, sb, db)  # noqa: E731
        wrong.append(compare(fn, f"{sa}:{da} @ {sb}:{db}"))
        if da != db:
            wrong.append(_same_message(fn, f"{sa}:{da} @ {sb}:{db}"))
    wrong = [w for w in wrong if w]
    assert not wrong, f"{len(wrong)} differ from PyTorch:\n" + "\n".join(wrong)


def _same_message(fn: Callable[[Any], Any], what: str) -> str | None:
    want, got = outcome(fn, torch), outcome(fn, agrad)
    if want[0] != "raises" or got[0] != "raises":
        return f"{what}: PyTorch {want[0]}, agrad {got[0]}"
    if not isinstance(got[1], _base_class(want[1])):
        return f"{what}: PyTorch raises {type(want[1]).__name__}, agrad {got[1]!r}"
    if str(got[1]) != str(want[1]):
        return f"{what}: agrad says {str(got[1])!r}, PyTorch {str(want[1])!r}"
    return None


def _f32(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float32)


def _f64(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float64)


RAISING = {
    "mm": lambda lib: lib.mm(_f32(lib, 2, 2), _f64(lib, 2, 2)),
    "bmm": lambda lib: lib.bmm(_f32(lib, 1, 2, 2), _f64(lib, 1, 2, 2)),
    "mv": lambda lib: lib.mv(_f32(lib, 2, 2), _f64(lib, 2)),
    "dot": lambda lib: lib.dot(_f32(lib, 2), _f64(lib, 2)),
    "int @ float": lambda lib: lib.tensor([[1, 2]]) @ lib.tensor([[1.0], [2.0]]),
    "Tensor.matmul": lambda lib: _f64(lib, 2, 2).matmul(_f32(lib, 2, 2)),
    "linear": lambda lib: lib.nn.functional.linear(_f64(lib, 1, 2), _f32(lib, 3, 2)),
    "linear bias": lambda lib: lib.nn.functional.linear(
        _f64(lib, 1, 2), _f32(lib, 3, 2), _f32(lib, 3)
    ),
    "linear f64 bias": lambda lib: lib.nn.functional.linear(
        _f32(lib, 1, 2), _f32(lib, 3, 2), _f64(lib, 3)
    ),
    "linear 3-d": lambda lib: lib.nn.functional.linear(
        _f64(lib, 2, 1, 2), _f32(lib, 3, 2), _f32(lib, 3)
    ),
    "nn.Linear f32 on f64": lambda lib: lib.nn.Linear(2, 1).float()(_f64(lib, 1, 2)),
    "nn.Linear f32 on int": lambda lib: lib.nn.Linear(2, 1).float()(lib.ones(1, 2).long()),
    "addmm": lambda lib: lib.addmm(_f32(lib, 2, 2), _f64(lib, 2, 2), _f32(lib, 2, 2)),
    "addmv": lambda lib: lib.addmv(_f32(lib, 2), _f32(lib, 2, 2), _f64(lib, 2)),
    "baddbmm": lambda lib: lib.baddbmm(_f32(lib, 1, 2, 2), _f32(lib, 1, 2, 2), _f64(lib, 1, 2, 2)),
    "conv1d": lambda lib: lib.nn.functional.conv1d(_f64(lib, 1, 1, 4), _f32(lib, 1, 1, 2)),
    "conv2d bias": lambda lib: lib.nn.functional.conv2d(
        _f32(lib, 1, 1, 4, 4), _f32(lib, 1, 1, 2, 2), _f64(lib, 1)
    ),
    "nn.Conv2d f32 on f64": lambda lib: lib.nn.Conv2d(1, 1, 2).float()(_f64(lib, 1, 1, 4, 4)),
    "nn.Conv2d no bias": lambda lib: lib.nn.Conv2d(1, 1, 2, bias=False).float()(
        _f64(lib, 1, 1, 4, 4)
    ),
    "conv_transpose2d": lambda lib: lib.nn.functional.conv_transpose2d(
        _f64(lib, 1, 1, 3, 3), _f32(lib, 1, 1, 2, 2)
    ),
    "tensordot": lambda lib: lib.tensordot(_f32(lib, 2, 2), _f64(lib, 2, 2), 1),
    "inner": lambda lib: lib.inner(_f32(lib, 2), _f64(lib, 2)),
    "int.add_(1.5)": lambda lib: lib.tensor([1, 2]).add_(1.5),
    "int.mul_(f32)": lambda lib: lib.tensor([1, 2]).mul_(_f32(lib, 2)),
}


@pytest.mark.parametrize("what", list(RAISING))
def test_mixed_dtypes_raise_as_pytorch(default_dtype: str, what: str) -> None:
    assert _same_message(RAISING[what], what) is None, _same_message(RAISING[what], what)


def test_same_dtype_products_still_compute(default_dtype: str) -> None:
    cases = {
        "linear f32": lambda lib: lib.nn.functional.linear(
            _f32(lib, 1, 2), _f32(lib, 3, 2), _f32(lib, 3)
        ),
        "nn.Linear": lambda lib: lib.nn.Linear(2, 1)(lib.ones(1, 2)) * 0,
        "conv2d f32": lambda lib: lib.nn.functional.conv2d(
            _f32(lib, 1, 1, 3, 3), _f32(lib, 1, 1, 2, 2)
        ),
        "int mm": lambda lib: lib.mm(lib.ones(2, 2).long(), lib.ones(2, 2).long()),
        "addmm f64": lambda lib: lib.addmm(_f64(lib, 2), _f64(lib, 2, 2), _f64(lib, 2, 2)),
    }
    wrong = [compare(fn, what) for what, fn in cases.items()]
    wrong = [w for w in wrong if w]
    assert not wrong, "\n".join(wrong)


def test_the_language_stays_float64() -> None:
    """The language computes in float64: integer data, masks and integer literals mixed
    with floats give float64, as before."""
    from agrad.lang.program import Program  # noqa: PLC0415

    run = Program.compile("sqrt(x) * (x > 1) / 2 + where(x > 2, 1, x)").run({"x": [1, 4]})
    assert run.output.dtype == np.float64
    np.testing.assert_allclose(run.output.numpy(), [1.0, 2.0])
