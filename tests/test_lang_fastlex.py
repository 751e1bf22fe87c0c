"""The fast path (`agrad.lang.fastlex`'s tokens, `agrad.lang.fastparse`'s loop over
Lark's table) against Lark's contextual lexer and Lark's own parser.

`parse` lexes with one regular expression and parses with its own loop first, and falls
back to Lark's own lexer and parser on any failure. Each test here parses the same text
both ways, the second with the fast path switched off, and requires the same instructions
and statements, or the same error message: on programs generated from the grammar,
mutated byte by byte, and on the cases where the two lexers' candidates differ (None
beside names, '.5' beside '.', keywords, characters no terminal matches, newlines inside
brackets, CRLF, tabs, comments). The fast loop is compared with Lark's own loop on the
same tokens, too.
"""

from __future__ import annotations

import pytest
from fuzzing import Generator
from lark import Lark

from agrad.errors import AgradError
from agrad.lang import fastparse
from agrad.lang import parser as parser_module
from agrad.lang.fastlex import FastLexer, Rejected
from agrad.lang.fastparse import FastParser, Refused
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


def _taken(texts, monkeypatch) -> list[bool]:
    """For each text, whether the fast path parsed it (rather than falling back)."""
    taken: list[bool] = []
    original = parser_module._parsed_fast

    def spy(*args):
        taken.append(original(*args))
        return taken[-1]

    with monkeypatch.context() as patch:
        patch.setattr(parser_module, "_parsed_fast", spy)
        for text in texts:
            _outcome(text)
    return taken


def test_every_valid_generated_program_takes_the_fast_path(monkeypatch):
    """Else the comparisons above would pass through the fallback and test nothing of the
    fast loop: every text Lark's own path parses, the fast one parses too (the fallback is
    for errors only), and none that Lark refuses."""
    generator = Generator(20261204)
    texts = []
    for _ in range(200):
        program = generator.program()
        texts += [program, generator.mutate(program)]
    taken = _taken(texts, monkeypatch)
    # (an empty program parses; it is refused after the parse)
    valid = [_slow(t, monkeypatch)[0] == "parsed" or not t.strip() for t in texts]
    assert taken == valid
    assert 150 < sum(valid) < len(texts)


def _larks_loop_over_fast_tokens(text: str):
    """The lowering as Lark's own LALR loop gives it for the fast lexer's tokens."""
    lark, lowerer, (lexer, _) = parser_module._parser()
    lowerer.reset(text)
    with parser_module._LOCK:

        class Thread:  # what Lark's parser reads tokens from (its LexerThread's one method)
            def lex(self, state):
                return lexer.tokens(text, lowerer.starts)

        lark.parser.parser.parse(Thread(), "start")
        got = (tuple(lowerer.instrs), tuple(lowerer.statements))
        lowerer.reset("")
    return got


@pytest.mark.parametrize(
    "text",
    [
        "x*1.5 + " * 500 + "x",
        "(" * 3000 + "x" + ")" * 3000,
        "-" * 2000 + "x",
        "x ** " * 300 + "2",
        "y = [1, [2, [3, x[0:2, ..., None]]]]; z = y.sum(axis=0, keepdims=true)\nz.T @ z",
        "a = 1;;\n\n b = f(a,\n c=2,)\n",
    ],
    ids=["long sum", "deep brackets", "unary chain", "power chain", "mixed", "separators"],
)
def test_the_fast_loop_lowers_as_larks_loop(text):
    """The loop against Lark's own loop on the same tokens: the same instructions, the
    same statements, on the shapes whose reductions differ most (long left-recursive
    sums, deep right recursion, unit-rule chains at every level)."""
    program = parse(text)
    assert (program.instrs, program.statements) == _larks_loop_over_fast_tokens(text)


def test_the_fast_loop_refuses_what_the_table_refuses():
    lark, _, (lexer, parser) = parser_module._parser()
    for text in ("x = = 1", "x +", "(x", "x)", "f(a b)"):
        with pytest.raises(Refused):
            parser.parse(lexer.tokens(text, []))


def test_a_parser_with_terminal_callbacks_gets_no_fast_loop():
    """Lark calls a transformer's terminal callbacks on shifts; the loop does not, so such
    a parser is Lark's alone (and one built as agrad's is, is not)."""

    class WithTerminal:
        def NAME(self, token):  # noqa: N802 - Lark's name for the terminal's callback
            return token.upper()

    options = dict(parser="lalr", lexer="contextual", maybe_placeholders=True)
    assert fastparse.build(Lark(grammar_text(), transformer=WithTerminal(), **options)) is None
    assert isinstance(fastparse.build(Lark(grammar_text(), **options)), FastParser)
