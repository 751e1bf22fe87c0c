"""The element limit (``--max-elements``) bounds every allocation an op or a constructor
makes, checked from the shape rules before anything is allocated; running out of memory
anyway is the same clean error. The classes: broadcasting, matmul, fancy indexing,
concat/stack and tensor literals, expand, every constructor."""

from __future__ import annotations

import contextlib
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agrad
from agrad.engine import limits
from agrad.engine.ops import TABLE
from agrad.errors import AgradError, AgradLimitError, AgradValueError
from agrad.lang.program import Program

LIMIT = 10_000


def run(source: str | Program, limit: int = LIMIT, **values):
    program = source if isinstance(source, Program) else Program.compile(source)
    used = {k: v for k, v in values.items() if k in program.free}
    return program.run(used, max_elements=limit)


@contextlib.contextmanager
def exhausted(op_name: str):
    """The op's forward runs out of memory (an Op is frozen: set and restore it by hand)."""

    def forward(*args, **kwargs):
        raise MemoryError

    op = TABLE[op_name]
    original = op.forward
    object.__setattr__(op, "forward", forward)
    try:
        yield
    finally:
        object.__setattr__(op, "forward", original)


@pytest.mark.parametrize(
    "source",
    [
        "ones(1, 2000)[zeros(2000)]",  # fancy indexing: 4e6 elements from 4e3
        "ones(200, 1) + ones(1, 200)",  # broadcasting
        "ones(200, 1) @ ones(1, 200)",  # matmul
        "outer(ones(200), ones(200))",
        "concat([x, x, x])",
        "stack([x, x, x])",
        "[x, x, x]",  # a tensor literal of constants
        "[x * 1, x, x]",  # one that records a graph
        "where(ones(200, 1) > 0, ones(1, 200), 0)",
        "zeros(101, 100)",
        "ones(10001)",
        "randn(20000)",
        "rand(2, 5001)",
        "eye(101)",
        "full([2, 5001], 1)",
        "arange(10001)",
        "linspace(0, 1, 10001)",
    ],
)
def test_results_above_the_limit_are_refused_before_they_are_allocated(source):
    x, program = np.zeros(4000), Program.compile(source)
    run("sum(ones(2) + ones(3)[zeros(2)])")  # (caches filled before measuring)
    tracemalloc.start()
    try:
        with pytest.raises(AgradLimitError, match="more than the limit of 10,000"):
            run(program, x=x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * LIMIT * 4, f"{source}: {peak:,} bytes allocated before refusing"


def test_the_message_says_how_to_raise_the_limit():
    with pytest.raises(AgradLimitError, match="index: .*--max-elements"):
        run("ones(1, 2000)[zeros(2000)]")


def test_the_python_api_has_no_limit_unless_asked():
    assert agrad.ones(200, 1).shape == (200, 1)
    assert (agrad.ones(200, 1) + agrad.ones(1, 200)).shape == (200, 200)
    with limits.max_elements(100), pytest.raises(AgradLimitError, match="add"):
        agrad.ones(20, 1) + agrad.ones(1, 20)
    assert (agrad.ones(20, 1) + agrad.ones(1, 20)).shape == (20, 20)  # restored after


def test_out_of_memory_in_an_op_is_a_clean_limit_error():
    with exhausted("exp"), pytest.raises(AgradLimitError, match="exp: out of memory"):
        run("exp(x)", x=np.ones(3))
    with exhausted("exp"), pytest.raises(AgradLimitError, match="exp: out of memory"):
        agrad.exp(agrad.ones(3))


def test_out_of_memory_through_the_cli_exits_2(cli):
    with exhausted("exp"):
        result = cli(["eval", "sum(exp(x))", "--set", "x=[1, 2]"])
    assert result.code == 2 and "out of memory" in result.err and "internal" not in result.err


@pytest.mark.parametrize("source", ["arange(inf)", "arange(nan)", "arange(0, inf, 1)",
                                    "arange(0, 1, nan)", "arange(0, 1, 0)"])  # fmt: skip
def test_arange_refuses_what_has_no_finite_length(source):
    with pytest.raises(AgradValueError, match="arange"):
        run(source)


# ---- the class, with hypothesis: random programs under a random limit -------------------

SHAPES = [(), (3,), (1, 3), (3, 1), (2, 3), (40, 1), (1, 40)]
EXPRESSIONS = [
    "a + b", "a * b", "a @ b", "where(a > 0, a, b)", "concat([a, a])", "stack([a, a, a])",
    "[a, b]", "outer(reshape(a, [-1]), reshape(b, [-1]))", "maximum(a, b)", "a[zeros(30)]",
    "sum(a * b, axis=0)", "exp(a) / (1 + b)",
]  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    expression=st.sampled_from(EXPRESSIONS),
    shape_a=st.sampled_from(SHAPES),
    shape_b=st.sampled_from(SHAPES),
    limit=st.sampled_from([1, 10, 100, 1000]),
)
def test_every_result_is_within_the_limit_or_refused(expression, shape_a, shape_b, limit):
    values = {"a": np.full(shape_a, 0.5), "b": np.full(shape_b, 0.25)}
    program = Program.compile(expression)
    tracemalloc.start()
    try:
        try:
            out = run(program, limit, **values).output
        except AgradLimitError:
            out = None
        except AgradError:  # shapes that do not fit: a clean error, not the subject here
            out = None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if out is not None:
        assert out._array.size <= max(limit, max(v.size for v in values.values()))
    # refused or not, nothing near a result of the unchecked size was ever allocated
    biggest = max(limit, *(v.size for v in values.values()))
    assert peak < 200_000 + 64 * biggest, f"{expression}: {peak:,} bytes"
