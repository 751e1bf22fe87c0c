"""The fast token stream (`agrad.lang.fastlex`) against Lark's contextual lexer.

`parse` lexes with one regular expression first and falls back to Lark's own lexer on any
failure. Each test here parses the same text both ways, the second with the fast path
switched off, and requires the same instructions and statements, or the same error
message: on programs generated from the grammar, mutated byte by byte, and on the cases
where the two lexers' candidates differ (None beside names, '.5' beside '.', keywords,
characters no terminal matches, newlines inside brackets, CRLF, tabs, comments).
"""

from __future__ import annotations

import pytest
from fuzzing import Generator
from lark import Lark

from agrad.errors import AgradError
from agrad.lang import parser as parser_module
from agrad.lang.fastlex import FastLexer, Rejected
from agrad.lang.parser import grammar_text, parse


def _outcome(text: str):
    try:
        program = parse(text)
    except AgradError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("parsed", program.instrs, program.statements, program.output)


def _slow(text: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patch:
        patch.setattr(parser_module, "_parsed_fast", lambda *args: False)
        return _outcome(text)


EDGES = [
    "x[None]",
    "x[None, 1:2, ...]",
    "None",
    "None + 1",
    "Nonex = 2; Nonex",
    "x[Nonex]",
    "f(None)",
    "x.5",
    "[1, .5, 2.]",
    "x[.5:]",
    "1...",
    "x...",
    "x[...]",
    "x.T.T",
    "x.T5",
    "lambda = 2",
    "y = x if x else 2",
    "sum(x,\n axis=0)\n",
    "a = [1,\n 2]\nb = (a +\n 1)\nb",
    "x = 1\r\ny = x\r\n",
    "\tx = 1",
    "x = 1 # comment [ ( \ny = x",
    "x = $1",
    "x = 1\n\n\n;;; y = 2",
    "x == 1",
    "x = = 1",
    "x <= 1; x >= 1; x != 1",
    "x ** -1 ** 2",
    "f(a=1, 2)",
    "f(a=1, a=2)",
    "True = 1",
    "x[1] = 2",
    "'abc' + \"d\"",
    "'unterminated",
    "é = 1",
    "x = 1e",
    "1e5e5",
    "x\x00",
    "(((x)",
    "x)",
    "",
    "   ",
    "# only a comment",
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_cases_parse_as_with_larks_lexer(text, monkeypatch):
    assert _outcome(text) == _slow(text, monkeypatch)


def test_generated_and_mutated_programs_parse_as_with_larks_lexer(monkeypatch):
    generator = Generator(20261203)
    texts = []
    for _ in range(300):
        program = generator.program()
        texts += [program, generator.mutate(program), generator.mutate(program)]
    differ = [t for t in texts if _outcome(t) != _slow(t, monkeypatch)]
    assert not differ, differ[:3]
    parsed = sum(_outcome(t)[0] == "parsed" for t in texts)
    assert parsed > 300  # the comparison covered both valid and invalid text


def test_the_fast_path_is_the_one_taken_for_valid_programs(monkeypatch):
    """Guards the speed (a Lark upgrade that changed the internals it uses would silently
    send every program down the slow path) and that the fallback is not taken needlessly."""
    taken = []
    original = parser_module._parsed_fast

    def spy(*args):
        taken.append(original(*args))
        return taken[-1]

    monkeypatch.setattr(parser_module, "_parsed_fast", spy)
    parse("y = 2*x[None, 1:]; sum(y, axis=0)\nz = f(a,\n b=[1, 2])")
    assert taken == [True]


def test_tokens_are_larks_basic_lexer_tokens():
    """Every token's type, value and position as Lark's basic lexer (same terminals, same
    order) gives them, for text that has every terminal."""
    text = "a = [1.5e3, .5, 2.] # c\nb = x[None, ...]**-2 @ y.T <= 'q' != \"r\"; c(k=1):\n"
    lexer = FastLexer(Lark(grammar_text(), parser="lalr", lexer="basic"))
    basic = Lark(grammar_text(), parser="lalr", lexer="basic")
    expected = [
        (t.type, t.value, t.start_pos, t.end_pos, t.line, t.column, t.end_line, t.end_column)
        for t in basic.lex(text)
    ]
    got = [
        (t.type, t.value, t.start_pos, t.end_pos, t.line, t.column, t.end_line, t.end_column)
        for t in lexer.tokens(text, [])
    ]
    assert got == expected
    with pytest.raises(Rejected):
        list(lexer.tokens("x = 1 $", []))
