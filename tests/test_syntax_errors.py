"""Syntax errors: each says what, where (line, column, caret) and what to do instead."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agrad.errors import AgradError, AgradLimitError, AgradSyntaxError
from agrad.lang import parser
from agrad.lang.diagnostics import caret_snippet
from agrad.lang.ir import ParsedProgram, operand_slots
from agrad.lang.parser import parse

# Lark's own names must never reach a user.
LARK_NAMES = re.compile(r"RPAR|LPAR|LSQB|RSQB|COMMA|COLON|EQUAL|__ANON|\$END|_NL|_SEMI|NAME|Token")

ERRORS = [
    # (source, part of the message, line, column)
    ("x.__class__", "only '.T' is allowed after an expression; agrad has no attributes", 1, 3),
    ("sum(x).shape", "call functions instead, e.g. sum(x)", 1, 8),
    ("import os", "'import' is a Python keyword, not part of agrad; agrad cannot import", 1, 1),
    ("lambda x: x", "'lambda' is a Python keyword", 1, 1),
    ("def f(x): x", "no function definitions", 1, 1),
    ("x if c else y", "write where(condition, a, b)", 1, 3),
    ("a and b", "write a * b for 'and'", 1, 3),
    ("x = None", "'None' is only allowed in an index", 1, 5),
    (
        "loss = sum((x + 1)",
        "unexpected end of input; expected ')' to close '(' opened at column 11",
        1,
        19,
    ),
    ("f(1 + 2", "expected ')' to close '(' opened at column 2", 1, 8),
    ("[[1, 2], [3, 4]", "expected ']' to close '[' opened at column 1", 1, 16),
    ("y = f(\n  x,\n", "expected ')' to close '(' opened at line 1, column 6", 2, 5),
    (
        "x = (1 +",
        "expected a number, a name, '(' or '['; the '(' opened at column 5 is still",
        1,
        9,
    ),
    ("x = 1 +", "unexpected end of input; expected a number, a name, '(' or '['", 1, 8),
    (")", "unmatched ')': no bracket is open here; remove it", 1, 1),
    ("x = 1]", "unmatched ']'", 1, 6),
    ("[1, 2)", "')' does not match the '[' opened at column 1; expected ']'", 1, 6),
    ("f(x]", "']' does not match the '(' opened at column 2; expected ')'", 1, 4),
    ("1.2.3", "malformed number '1.2.3'", 1, 1),
    ("x = 1e5.3 + 1", "malformed number '1e5.3'", 1, 5),
    ("x = $", "unexpected character '$'", 1, 5),
    ("x = 1\ny = * 2", "unexpected '*'; expected a number, a name, '(' or '['", 2, 5),
    ("1 < 2 < 3", "comparisons cannot be chained", 1, 7),
    ("1 = 2", "unexpected '='", 1, 3),
    ("f(x) = 2", "write '==' to compare", 1, 6),
    ("x y", "unexpected name 'y'; expected an operator", 1, 3),
    ("2x", "is an operator such as '*' missing?", 1, 2),
    ("f(a=1, 2)", "positional argument follows a keyword argument", 1, 8),
    ("f(a=1, a=2)", "keyword argument 'a' repeated", 1, 8),
    ("true = 1", "cannot assign to 'true'", 1, 1),
    ("x[..., ...]", "an index can only have a single '...'", 1, 2),
    ("x[]", "unexpected ']'; expected an expression", 1, 3),
    ("x.", "expected 'T'", 1, 3),
    ("einsum('ij, x)", "a string needs its closing quote on the same line", 1, 8),
    ("x = \n1", "unexpected end of line", 1, 5),
    ("a ^ b", "write '**' for powers", 1, 3),
    ("(1, 2)", "unexpected ','", 1, 3),
    ("(1; 2)", "unexpected ';'", 1, 3),
    ("x = 1 \\\n + 2", "to continue a line, leave a '(' or '[' open", 1, 7),
    ("x = λ", "names use ASCII letters", 1, 5),
]


@pytest.mark.parametrize(("source", "fragment", "line", "column"), ERRORS)
def test_syntax_error_message_position_and_caret(
    source: str, fragment: str, line: int, column: int
) -> None:
    with pytest.raises(AgradSyntaxError) as info:
        parse(source)
    error = info.value
    message = str(error)
    assert fragment in message
    assert message.startswith(f"line {line}, column {column}: ")
    assert (error.line, error.column) == (line, column)
    source_line, caret_line = error.snippet.split("\n")
    assert source_line == source.split("\n")[line - 1]
    assert caret_line.index("^") == column - 1
    assert not LARK_NAMES.search(message)


@pytest.mark.parametrize("source", ["", "   \n\n", "# just a comment\n", ";;\n;"])
def test_empty_program(source: str) -> None:
    with pytest.raises(AgradSyntaxError, match="the program is empty; write an expression"):
        parse(source)


def test_caret_spans_the_token_and_keeps_tabs() -> None:
    with pytest.raises(AgradSyntaxError) as info:
        parse("x =\t* 2")
    assert info.value.snippet == "x =\t* 2\n   \t^"
    assert caret_snippet("y = x @ w", 1, 7) == "y = x @ w\n      ^"
    assert caret_snippet("y = x ** w", 1, 7, 9) == "y = x ** w\n      ^^"
    assert caret_snippet("y", 5, 1) == ""


def test_long_lines_show_a_window_around_the_caret() -> None:
    with pytest.raises(AgradSyntaxError) as info:
        parse("1+" * 1_000 + "*2")
    source_line, caret_line = info.value.snippet.split("\n")
    assert len(source_line) < 100 and source_line.startswith("...")
    assert source_line[caret_line.index("^")] == "*"
    assert info.value.column == 2_001


def test_nesting_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AgradLimitError, match="nest more than 100,000 levels"):
        parse("(" * (parser.MAX_NESTING + 1) + "1" + ")" * (parser.MAX_NESTING + 1))
    monkeypatch.setattr(parser, "MAX_NESTING", 50)
    with pytest.raises(AgradLimitError, match=r"line 2, column 51: brackets nest more than 50"):
        parse("x = 1\n" + "[" * 60 + "1" + "]" * 60)
    assert isinstance(parse("# " + "(" * 60 + "\n" + "(" * 50 + "1" + ")" * 50), ParsedProgram)


_PIECES = [
    "x", "1", ".5", "1e3", "2.", "(", ")", "[", "]", ",", ":", "...", "None", "+", "-", "*",
    "/", "**", "@", "<", "<=", "==", "!=", "=", ".T", ".y", "\n", ";", "sum", "f(", "axis=",
    "true", "lambda", "#c\n", " ", "y[0] =", "'", "$", "\\",
]  # fmt: skip


def _check(source: str) -> None:
    try:
        program = parse(source)
    except AgradError:
        return
    assert isinstance(program, ParsedProgram)
    for slot, instr in enumerate(program.instrs):
        assert all(0 <= operand < slot for operand in operand_slots(instr))
    assert program.output == program.statements[-1].slot


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_grammar_piece_soup_parses_or_raises_agrad_errors(source: str) -> None:
    _check(source)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_random_text_parses_or_raises_agrad_errors(source: str) -> None:
    _check(source)
