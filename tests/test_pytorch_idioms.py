"""Real third-party PyTorch autograd idioms (tests/idioms/), run on PyTorch and on agrad.

Each snippet runs on real PyTorch, the oracle, and on agrad, in float64, and the results must
agree: numbers to 1e-10 relative, everything else (strings of printed output, bools, ints,
None, shapes) exactly. A snippet that agrad cannot run today is listed in KNOWN_FAILING with the
first missing API or differing semantics; it is marked xfail(strict=True), so implementing the
feature turns it into an XPASS failure and its entry must then be removed. /work/notes/idioms.md
(from the measuring session) ranks these reasons; issue 11 is the work that removes them, issue 12
(agrad.nn) the ones marked "torch.nn".
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from idioms import SNIPPETS, Snippet

import agrad

# Idioms known to differ from PyTorch, each with the first missing API or differing semantics
# it hits (run as strict xfails, so one that starts to match fails until it is removed here).
# None today: every idiom runs and matches PyTorch.
KNOWN_FAILING: dict[str, str] = {}


def run_on(module: Any, snippet: Snippet) -> dict[str, Any]:
    """Run a snippet on torch or agrad in float64, restoring the global state it may change."""
    previous = module.get_default_dtype()
    module.set_default_dtype(module.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return snippet.run(module)
    finally:
        module.set_default_dtype(previous)
        module.set_grad_enabled(True)


def assert_same(expected: Any, actual: Any, where: str = "result") -> None:
    """PyTorch's result against agrad's: floats to 1e-10 relative, all else exactly (types too)."""
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert type(actual) is type(expected) and actual == expected, (
            f"{where}: PyTorch {expected!r}, agrad {actual!r}"
        )
    elif isinstance(expected, int):
        assert type(actual) is int and actual == expected, (
            f"{where}: PyTorch {expected!r}, agrad {actual!r}"
        )
    elif isinstance(expected, float):
        assert type(actual) is float, f"{where}: PyTorch float {expected!r}, agrad {actual!r}"
        if math.isnan(expected):
            assert math.isnan(actual), f"{where}: PyTorch nan, agrad {actual!r}"
        else:
            assert math.isclose(expected, actual, rel_tol=1e-10, abs_tol=1e-300), (
                f"{where}: PyTorch {expected!r}, agrad {actual!r}"
            )
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), f"{where}: PyTorch a sequence, agrad {actual!r}"
        assert len(actual) == len(expected), (
            f"{where}: PyTorch {len(expected)} items, agrad {len(actual)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), (
            f"{where}: PyTorch keys {list(expected)}, agrad {actual!r}"
        )
        for key in expected:
            assert_same(expected[key], actual[key], f"{where}[{key!r}]")
    else:
        raise TypeError(
            f"{where}: a snippet returned {type(expected).__name__}; return plain values"
        )


def params():
    for name, snippet in SNIPPETS.items():
        marks = []
        if name in KNOWN_FAILING:
            marks.append(pytest.mark.xfail(reason=KNOWN_FAILING[name], strict=True))
        yield pytest.param(snippet, id=name, marks=marks)


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("snippet", [pytest.param(s, id=n) for n, s in SNIPPETS.items()])
def test_snippet_runs_on_pytorch(real_torch, snippet):
    """The oracle itself: every snippet is valid PyTorch code that returns plain values."""
    result = run_on(real_torch, snippet)
    assert isinstance(result, dict) and result
    assert_same(result, result)


@pytest.mark.parametrize("snippet", list(params()))
def test_snippet_matches_pytorch(real_torch, snippet):
    expected = run_on(real_torch, snippet)
    actual = run_on(agrad, snippet)
    assert_same(expected, actual)


def test_known_failing_names_snippets():
    assert sorted(set(KNOWN_FAILING) - set(SNIPPETS)) == []
    assert all(reason.strip() for reason in KNOWN_FAILING.values())


def test_every_snippet_names_what_it_mirrors():
    assert len(SNIPPETS) >= 130
    assert all(len(s.mirrors) > 20 for s in SNIPPETS.values())


def test_comparison_catches_differences():
    """assert_same is the whole test: it must reject what differs and accept what agrees."""
    assert_same({"a": [1.0, 2.0], "b": "x"}, {"a": [1.0 + 1e-12, 2.0], "b": "x"})
    for expected, actual in [
        (1.0, 1.0 + 1e-8),
        (1, 1.0),
        (True, 1),
        ("tensor(1.)", "tensor(1.0)"),
        ([1.0, 2.0], [1.0]),
        ({"a": 1}, {"b": 1}),
        (None, 0.0),
        (float("nan"), 1.0),
    ]:
        with pytest.raises(AssertionError):
            assert_same(expected, actual)
