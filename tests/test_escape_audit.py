"""An audit generated from the public namespaces: whatever agrad function or Tensor method
turns a tracked tensor's values into something the graph does not record (an untracked
tensor that changes with the values, or a Python value) must move the escape counter, or
gradcheck would replay a graph that holds it fixed (tests/test_gradcheck_derived_values.py
shows the false passes that makes).

Each callable is tried on tracked inputs of a few shapes with a few argument patterns (most
refuse most patterns; those are skipped), at two points: an untracked output that differs
between them was computed from the values. So was a constant of the recorded graph (a
mask, a sign: logdet's nan where det < 0, elu's branch) that differs between them: it
must be said (`escapes.decided_by`), or a replay at other values (`agrad fit`'s) would
hold it fixed (QA round 14: fit's logdet never diverged where the program does)."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest

import agrad
import agrad.nn.functional as F
from agrad.engine.escapes import ESCAPES
from agrad.engine.tensor import Tensor

# (not reads: the leaf itself handed back untracked; a tensor's storage shared as given)
EXEMPT = {"Tensor.requires_grad_", "agrad.from_numpy"}

POINTS = [
    (
        np.array([[0.3, -1.2, 2.0], [0.7, 0.7, -0.4]]),
        np.array([[1.3, 0.2, -2.0], [-0.7, 0.1, 0.9]]),
    ),
    (  # zeros, ties and a determinant that changes sign: masks made inside a graph
        np.array([[0.0, 1.5, -1.0], [2.0, 0.0, 0.5], [0.5, 0.5, 3.0]]),
        np.array([[0.0, 2.0, 1.0], [2.0, -1.0, 0.0], [1.0, 0.0, -3.0]]),
    ),
    tuple(np.random.default_rng(s).standard_normal((1, 2, 4, 4)) for s in (0, 1)),
]
PATTERNS = {
    "(x)": lambda f, x, y: f(x),
    "(x, y)": lambda f, x, y: f(x, y),
    "(x, 2)": lambda f, x, y: f(x, 2),
    "(x, 0)": lambda f, x, y: f(x, 0),
    "(x, 2, return_indices)": lambda f, x, y: f(x, 2, return_indices=True),
}


def _tensors(result) -> list:
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _tensors(r)]
    return []


def _settings() -> tuple:
    """agrad's process-wide settings, which the callables audited include the setters of."""
    shown = {k: v if isinstance(v, (int, float, str, type(None))) else type(v).__name__
             for k, v in agrad.get_printoptions().items()}  # fmt: skip
    state = agrad.default_generator.get_state()
    return (shown, agrad.get_default_dtype(), agrad.is_grad_enabled(), agrad.is_anomaly_enabled(),
            repr(state), agrad.initial_seed())  # fmt: skip


@contextlib.contextmanager
def _settings_kept():
    """Run the block, then put agrad's settings back as they were: the audit calls every
    public function, setters too (``set_printoptions(x)`` keeps a tensor as the precision,
    and every repr after it recursed, in whatever test ran next)."""
    printing, dtype = agrad.get_printoptions(), agrad.get_default_dtype()
    grad, anomaly = agrad.is_grad_enabled(), agrad.is_anomaly_enabled()
    state, seed = agrad.default_generator.get_state(), agrad.initial_seed()
    try:
        yield
    finally:
        agrad.set_printoptions(**printing)
        agrad.set_default_dtype(dtype)
        agrad.set_grad_enabled(grad)
        agrad.set_anomaly_enabled(anomaly)
        agrad.default_generator.manual_seed(seed)  # (its initial seed), then its stream
        agrad.default_generator.set_state(state)


def _unrecorded_read(call, points) -> bool:
    """Whether ``call`` made an untracked value from the inputs' values without moving the
    counter (False when it refuses the inputs). agrad's settings are kept (`_settings_kept`)."""
    results, decided = [], False
    for a in points:
        x = agrad.tensor(a, requires_grad=True)
        y = agrad.tensor(a[::-1].copy() * 0.5, requires_grad=True)
        before, marked = ESCAPES[0], ESCAPES[1]
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with _settings_kept():
                    result = call(x, y)
        except Exception:
            return False
        if ESCAPES[0] != before:
            return False
        decided |= ESCAPES[1] != marked  # (constants made from the values, and said so)
        results.append(result)
    first, second = results
    if isinstance(first, (bool, int, float)):
        return first != second
    a, b = _tensors(first), _tensors(second)
    if len(a) != len(b):
        return False
    if not decided and _constants(a) != _constants(b):  # a mask made inside the graph
        return True
    return any(
        not s.requires_grad
        and (s.shape != t.shape or not np.array_equal(s._array, t._array, equal_nan=True))
        for s, t in zip(a, b, strict=True)
    )


def _constants(outputs: list) -> list:
    """The constant operands of the graph behind ``outputs`` (a replay holds them fixed,
    so they must not come from the inputs' values), as comparable bytes, in graph order."""
    from agrad.engine.graph_order import _topological

    roots = [t.grad_fn for t in outputs if t.grad_fn is not None]
    found = []
    for node in _topological(roots) if roots else []:
        for x, producer in zip(node.inputs, node.next, strict=True):
            if producer is None:
                value = np.asarray(getattr(x, "_array", x))
                found.append((value.shape, value.dtype.str, value.tobytes()))
    return found


def _callables():
    spaces = [("agrad", agrad), ("F", F), ("linalg", agrad.linalg)]
    for prefix, space in spaces:
        for name in sorted(dir(space)):
            f = getattr(space, name)
            if not name.startswith("_") and callable(f) and not isinstance(f, type):
                yield f"{prefix}.{name}", f
    for name in sorted(dir(Tensor)):
        if not name.startswith("_") and callable(getattr(Tensor, name, None)):
            yield f"Tensor.{name}", (lambda *a, n=name, **k: getattr(a[0], n)(*a[1:], **k))


def test_every_public_read_of_values_moves_the_escape_counter():
    unrecorded = []
    for label, f in _callables():
        if label in EXEMPT:
            continue
        for pattern, call in PATTERNS.items():
            for points in POINTS:
                if _unrecorded_read(lambda x, y, f=f, call=call: call(f, x, y), points):
                    unrecorded.append(label + pattern)
    assert not unrecorded


def test_the_audit_finds_a_read_that_does_not_move_the_counter():
    def unrecorded_argmax(x):  # the read an audit must catch
        return agrad.tensor(np.argmax(x._array))

    assert _unrecorded_read(lambda x, y: unrecorded_argmax(x), POINTS[0])
    assert not _unrecorded_read(lambda x, y: x.argmax(), POINTS[0])


SETTERS = ["set_printoptions", "set_default_dtype", "set_grad_enabled", "set_anomaly_enabled",
           "manual_seed", "seed"]  # fmt: skip


@pytest.mark.parametrize("name", SETTERS)
def test_the_audit_leaves_agrads_settings_as_it_found_them(name):
    # Each setter, called as the audit calls every public function: the tests after the audit
    # see the settings they would see without it (a tensor kept as the print precision made
    # test_engine_semantics' repr tests recurse when they ran after this file).
    before = _settings()
    for call in PATTERNS.values():
        for points in POINTS:
            _unrecorded_read(lambda x, y, call=call: call(getattr(agrad, name), x, y), points)
    assert _settings() == before
    assert repr(agrad.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
