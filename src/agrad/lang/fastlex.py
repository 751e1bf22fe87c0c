"""The token stream for a program that parses: one regular expression over the whole text.

Lark's contextual lexer matches each token with the terminals its parser state accepts;
at about 2.5 µs a token it is half of a long program's parse. This lexer is Lark's basic
lexer (every terminal, in Lark's own order, built from the parser's own terminal table)
run as one `re.finditer`, with `_Postlex`'s work done in the same loop.

Why its tokens are the contextual lexer's whenever the parse succeeds: both try the same
patterns in the same order at the same position, the contextual one only those its state
accepts. If every token the basic order picked was accepted by the parser, the contextual
lexer, whose candidates include it, picks the same one, so the parse is the same. So
`agrad.lang.parser` parses with these tokens first, and on any failure at all — a
character no terminal matches, a token the parser rejects, an error raised by a callback —
parses again with Lark's own lexer, whose tokens and errors are then the ones reported.
(`tests/test_lang_fastlex.py` compares the two on generated programs, valid and not.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lark import Lark, Token
from lark.lexer import PatternRE, PatternStr

from agrad.lang.diagnostics import KEYWORDS

_new = str.__new__  # a Token without its __new__'s keyword handling (a str subclass)


class Rejected(Exception):
    """The fast path cannot take this text: parse it again with Lark's own lexer."""


class FastLexer:
    """Lark's basic lexer for ``lark``'s terminals, as one compiled alternation."""

    def __init__(self, lark: Lark) -> None:
        ignore = set(lark.lexer_conf.ignore)
        terminals = list(lark.terminals)
        # Lark's BasicLexer order: priority, then the longest possible match, then name.
        terminals.sort(
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name)
        )
        # A string terminal that a regexp terminal of the same priority matches whole (the
        # keyword None beside NAME) is not a pattern of its own: the regexp's match becomes
        # it when equal to it, as Lark's "unless" callbacks do.
        self.unless: dict[str, dict[str, str]] = {}
        embedded = set()
        for regexp in terminals:
            if not isinstance(regexp.pattern, PatternRE):
                continue
            for string in terminals:
                if (
                    isinstance(string.pattern, PatternStr)
                    and string.priority == regexp.priority
                    and re.fullmatch(regexp.pattern.to_regexp(), string.pattern.value)
                ):
                    self.unless.setdefault(regexp.name, {})[string.pattern.value] = string.name
                    if string.pattern.flags <= regexp.pattern.flags:
                        embedded.add(string.name)
        kept = [t for t in terminals if t.name not in embedded]
        self.ignore = ignore
        # Named groups, as Lark's own scanner builds them: a match's lastgroup is its terminal.
        self.pattern = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in kept))

    def tokens(self, text: str, starts: Any) -> Iterator[Token]:
        """The tokens of ``text`` after `_Postlex` (newlines inside brackets dropped, each
        statement's start appended to ``starts``); raise `Rejected` where Lark's lexer
        must decide (an unmatched character, a Python keyword)."""
        ignore, unless = self.ignore, self.unless
        line, line_start, expected, depth, at_start = 1, 0, 0, 0, True
        for match in self.pattern.finditer(text):
            start, end = match.span()
            if start != expected:  # finditer skipped a character no terminal matches
                raise Rejected
            expected = end
            kind = match.lastgroup
            if kind in ignore:
                continue
            column = start - line_start + 1
            if kind == "_NL":  # (the only terminal that can hold a newline)
                line_start = end
                line += 1
                if depth:  # a line continued inside brackets
                    continue
                at_start = True
                token = _new(Token, "\n")
                token.type, token.value, token.start_pos, token.end_pos = kind, "\n", start, end
                token.line, token.column = line - 1, column
                token.end_line, token.end_column = line, 1
                yield token
                continue
            value = match.group()
            if kind == "_SEMI":
                at_start = at_start or not depth
            else:
                if at_start and not depth:
                    starts.append((line, column))
                    at_start = False
                if kind == "LPAR" or kind == "LSQB":
                    depth += 1
                elif kind == "RPAR" or kind == "RSQB":
                    depth = max(depth - 1, 0)
                elif kind in unless:
                    kind = unless[kind].get(value, kind)
                if kind == "NAME" and value in KEYWORDS:  # Lark's path words the error
                    raise Rejected
            token = _new(Token, value)
            token.type, token.value, token.start_pos, token.end_pos = kind, value, start, end
            token.line = token.end_line = line
            token.column, token.end_column = column, end - line_start + 1
            yield token
        if expected != len(text):
            raise Rejected
