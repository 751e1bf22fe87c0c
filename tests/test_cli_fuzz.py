"""Hypothesis against the CLI's error boundary: any text, and random programs built from the
grammar's pieces, end in exit 0 (with valid JSON) or exit 2 (with one `error: ...`), never in
an exception escaping `agrad.cli.run`, a traceback or an "internal error"."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrad.cli import run

EXAMPLES = int(os.environ.get("AGRAD_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def invoke(argv: list[str]) -> tuple[int, str, str]:
    """run(argv) with stdin empty and stdout/stderr captured; warnings (overflow) ignored."""
    out, err = io.StringIO(), io.StringIO()
    stdin, sys.stdin = sys.stdin, io.StringIO("")
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            code = run(argv)
    finally:
        sys.stdin = stdin
    return code, out.getvalue(), err.getvalue()


def check_outcome(code: int, out: str, err: str) -> dict | None:
    assert code in (0, 2), (code, out, err)
    assert "Traceback" not in out + err
    assert "internal error" not in err, err
    if code == 2:
        assert out == "" and err.startswith("error: "), (out, err)
        return None
    return json.loads(out)


@SETTINGS
@given(st.text(max_size=60))
def test_any_text(text):
    check_outcome(*invoke(["eval", "--format", "json", "--max-elements", "10000", "--", text]))


@SETTINGS
@given(st.text(alphabet="xy0123456789.e+-*/@()[],:=; \n#Tabcdefgsumnp<>!", max_size=40))
def test_text_from_the_languages_alphabet(text):
    check_outcome(
        *invoke(
            [
                "eval",
                "--set",
                "x=[1,2,3]",
                "--set",
                "y=2",
                "--format",
                "json",
                "--max-elements",
                "10000",
                "--",
                f"u = x + y\n{text}",
            ]
        )
    )


NUMBERS = st.sampled_from(["0", "1", "2", "2.5", ".5", "1e-3", "3", "0.1", "pi", "e", "true"])
NAMES = st.sampled_from(["x", "y"])
BINARY = st.sampled_from(["+", "-", "*", "/", "**", "@", "<", ">=", "=="])
UNARY_FNS = st.sampled_from(
    [
        "exp",
        "log",
        "sqrt",
        "abs",
        "sin",
        "tanh",
        "sigmoid",
        "relu",
        "square",
        "softplus",
        "sum",
        "mean",
        "max",
        "softmax",
        "norm",
    ]
)
BINARY_FNS = st.sampled_from(["maximum", "minimum", "dot", "outer", "matmul"])
INDEX = st.sampled_from(["0", "1", "-1", "2", ":", "1:", ":2", "::2", "::-1", "0:3:1"])


def _extend(inner):
    return st.one_of(
        st.tuples(inner, BINARY, inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        inner.map(lambda e: f"-{e}"),
        inner.map(lambda e: f"({e})"),
        st.tuples(UNARY_FNS, inner).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(BINARY_FNS, inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        inner.map(lambda e: f"sum({e}, axis=0)"),
        inner.map(lambda e: f"where({e} > 1, {e}, 0)"),
        st.tuples(inner, INDEX).map(lambda t: f"({t[0]})[{t[1]}]"),
        inner.map(lambda e: f"({e}).T"),
        st.lists(inner, min_size=1, max_size=3).map(lambda es: "[" + ", ".join(es) + "]"),
        inner.map(lambda e: f"reshape({e}, [3, 1])"),
        st.tuples(inner, inner).map(lambda t: f"concat([{t[0]}, {t[1]}])"),
    )


EXPRESSIONS = st.recursive(st.one_of(NUMBERS, NAMES), _extend, max_leaves=10)
PROGRAMS = st.one_of(
    EXPRESSIONS,
    st.tuples(EXPRESSIONS, EXPRESSIONS).map(lambda t: f"z = {t[0]}\n{t[1]} + z"),
    st.tuples(EXPRESSIONS, EXPRESSIONS).map(lambda t: f"z = {t[0]}; w = z * {t[1]}; w"),
)


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@SETTINGS
@given(PROGRAMS, st.sampled_from([None, "x", "x,y"]), st.sampled_from(["float64", "float32"]))
def test_random_programs(program, wrt, dtype):
    source = f"u = x + y\n{program}" if wrt is None else f"u = x + y\nsum({program})"
    argv = [
        "eval",
        "--set",
        "x=[1,2,3]",
        "--set",
        "y=2",
        "--format",
        "json",
        "--dtype",
        dtype,
        "--max-elements",
        "10000",
    ]
    if wrt:
        argv += ["--wrt", wrt]
    payload = check_outcome(*invoke([*argv, "--", source]))
    if payload is None:
        return
    assert set(payload) >= {"value", "shape", "grads"}
    if wrt:
        assert payload["shape"] == []
        assert len(payload["grads"]["x"]) == 3  # a gradient has its variable's shape
        if "y" in wrt:
            assert not isinstance(payload["grads"]["y"], list)
