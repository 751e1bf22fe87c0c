"""Parse agrad source text into a flat `ParsedProgram` (see `agrad.lang.ir`).

Lark's LALR parser calls `_Lowerer`'s methods at each reduction, bottom-up,
from its own explicit stack: each call appends one instruction and returns
its slot number. No tree is built and nothing recurses, so a 100,000-term
sum or parentheses nested 10,000 deep lower without RecursionError.

>>> program = parse("y = 2*x; sum(y)")
>>> [instr.kind for instr in program.instrs]
['CONST', 'NAME', 'BINARY', 'STORE', 'NAME', 'CALL']
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedInput, VisitError

from agrad.errors import AgradError, AgradLimitError, AgradSyntaxError
from agrad.lang import fastparse, ir
from agrad.lang.diagnostics import KEYWORDS, keyword_error, position, syntax_error, translate
from agrad.lang.fastlex import FastLexer
from agrad.lang.fastparse import FastParser
from agrad.lang.gcpause import paused_gc
from agrad.lang.ir import Instr, ParsedProgram, Slice, Statement
from agrad.lang.tables import cached_parser

MAX_NESTING = 100_000
_new_instr = tuple.__new__  # an Instr from its fields, positionally (see _emit_fast)

_BOOLEANS = {"true": True, "false": False, "True": True, "False": False}
_BRACKET_OR_COMMENT = re.compile(r"[()\[\]]|#[^\n]*")  # brackets in comments do not count


def parse(text: str) -> ParsedProgram:
    """Parse and lower a program; raise `AgradSyntaxError` or `AgradLimitError`.

    The result's ``output`` is the slot of the last statement's value.
    """
    _check_nesting(text)
    lark, lowerer, fast = _parser()
    with _LOCK:  # the callbacks keep per-parse state in the one shared _Lowerer
        lowerer.reset(text)
        try:
            with paused_gc():  # one instruction per token: see gcpause
                if fast is None or not _parsed_fast(lark, lowerer, fast, text):
                    lark.parse(text)
        except UnexpectedInput as exc:
            raise translate(exc, text) from None
        except VisitError as exc:  # Lark may wrap callback errors; ours never need wrapping
            if isinstance(exc.orig_exc, AgradError):
                raise exc.orig_exc from None
            raise AgradSyntaxError(f"cannot parse the program: {exc.orig_exc}") from exc
        instrs, statements = tuple(lowerer.instrs), tuple(lowerer.statements)
        lowerer.reset("")
    if not statements:
        raise AgradSyntaxError(
            "the program is empty; write an expression such as 'sum(x**2)'", 1, 1, ""
        )
    return ParsedProgram(instrs, statements[-1].slot, text, statements)


def grammar_text() -> str:
    """The grammar: packaged in the wheel as agrad/lang/agrad.lark, else the repo's copy.
    (Read as a plain file when it is one: importlib.resources costs a few ms of imports.)"""
    here = Path(__file__).resolve()
    for path in (here.with_name("agrad.lark"), here.parents[3] / "grammar" / "agrad.lark"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    from importlib import resources  # an installation that is not plain files (a zip)

    return (resources.files("agrad.lang") / "agrad.lark").read_text(encoding="utf-8")


def _check_nesting(text: str) -> None:
    """Refuse bracket nesting deeper than MAX_NESTING, before Lark allocates for it."""
    if text.count("(") + text.count("[") <= MAX_NESTING:  # cheap: cannot nest that deep
        return
    depth = 0
    for match in _BRACKET_OR_COMMENT.finditer(text):
        char = match.group()[0]
        if char in "([":
            depth += 1
            if depth > MAX_NESTING:
                line, column = position(text, match.start())
                raise AgradLimitError(
                    f"line {line}, column {column}: brackets nest more than {MAX_NESTING:,} "
                    "levels deep; assign inner parts to variables instead"
                )
        elif char in ")]":
            depth = max(depth - 1, 0)


def _parsed_fast(lark: Lark, lowerer: _Lowerer, fast: _Fast, text: str) -> bool:
    """Parse with `agrad.lang.fastlex`'s tokens and `agrad.lang.fastparse`'s loop; False
    (the lowerer reset) if Lark's own lexer and parser must parse it instead, for their
    tokens or their error."""
    lexer, parser = fast
    try:
        parser.parse(lexer.tokens(text, lowerer.starts))
        return True
    except Exception:  # noqa: BLE001 - any failure: the contextual lexer decides
        lowerer.reset(text)
        return False


_LOCK = threading.Lock()
_Fast = tuple[FastLexer, FastParser]
_PARSER: tuple[Lark, _Lowerer, _Fast | None] | None = None


def _parser() -> tuple[Lark, _Lowerer, _Fast | None]:
    """Build the Lark parser once per process (it is bound to one `_Lowerer`), and the
    fast path from its terminals and table (None if this Lark's internals are not the
    ones known)."""
    global _PARSER
    with _LOCK:
        if _PARSER is None:
            lowerer = _Lowerer()
            text = grammar_text()
            live = {"transformer": lowerer, "postlex": _Postlex(lowerer)}

            def build() -> Lark:
                # Lark's own cache= is a pickle, and agrad loads no pickles (see tables.py).
                return Lark(
                    text, parser="lalr", lexer="contextual", maybe_placeholders=True, **live
                )

            lark = cached_parser(text, build, **live)
            _PARSER = (lark, lowerer, _fast_path(lark))
        return _PARSER


def _fast_path(lark: Lark) -> _Fast | None:
    parser = fastparse.build(lark)
    try:
        return None if parser is None else (FastLexer(lark), parser)
    except (AttributeError, TypeError, ValueError, re.error):
        return None


class _Postlex:
    """Between lexer and parser: drop newlines inside brackets (line continuation),
    reject Python keywords, and note where each statement starts."""

    always_accept = ("_NL",)  # so the contextual lexer yields newlines inside brackets

    def __init__(self, lowerer: _Lowerer) -> None:
        self.lowerer = lowerer

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        starts = self.lowerer.starts
        depth = 0
        at_start = True
        for token in stream:
            kind = token.type
            if kind == "_NL" or kind == "_SEMI":
                if depth and kind == "_NL":
                    continue
                at_start = at_start or not depth
            else:
                if at_start and not depth:
                    starts.append((token.line, token.column))
                    at_start = False
                if kind == "LPAR" or kind == "LSQB":
                    depth += 1
                elif kind == "RPAR" or kind == "RSQB":
                    depth = max(depth - 1, 0)
                elif kind == "NAME" and token.value in KEYWORDS:
                    raise keyword_error(self.lowerer.text, token)
            yield token


class _Kwarg:
    """A keyword argument on its way to `_Lowerer.call` (never a slot)."""

    __slots__ = ("token", "slot")

    def __init__(self, token: Token, slot: int) -> None:
        self.token, self.slot = token, slot


class _Lowerer:
    """Lark callbacks, one per grammar alias; each appends instructions.

    Method names are grammar rule aliases: Lark finds callbacks by name.
    """

    def __init__(self) -> None:
        self.reset("")

    def reset(self, text: str) -> None:
        self.text = text
        self.instrs: list[Instr] = []
        self.statements: list[Statement] = []
        self.starts: deque[tuple[int, int]] = deque()

    def _emit(self, kind: ir.Kind, token: Token, **fields: object) -> int:
        self.instrs.append(Instr(kind, token.line, token.column, token.end_column, **fields))
        return len(self.instrs) - 1

    # The commonest instructions (a binary operator, a name, a number: nearly every token
    # of a long program) are built as plain tuples of Instr's fields, in its field order,
    # without the keyword arguments of _emit.
    def _emit_fast(self, fields: tuple) -> int:
        instrs = self.instrs
        instrs.append(_new_instr(Instr, fields))
        return len(instrs) - 1

    def _error(self, message: str, token: Token) -> AgradSyntaxError:
        return syntax_error(self.text, message, token.line, token.column, token.end_column)

    def _statement(self, target: str | None, slot: int) -> int:
        line, column = self.starts.popleft()
        self.statements.append(Statement(target, line, column, slot))
        return slot

    # ---- statements
    def expr_stmt(self, children: list) -> int:
        return self._statement(None, children[0])

    def assign(self, children: list) -> int:
        target, value = children
        self._check_target(target)
        slot = self._emit(ir.STORE, target, name=target.value, args=(value,))
        return self._statement(target.value, slot)

    def assign_index(self, children: list) -> int:
        target, bracket, *items, value = children
        self._check_target(target)
        items = self._index(items, bracket)
        slot = self._emit(ir.STORE_INDEX, target, name=target.value, args=(value,), items=items)
        return self._statement(target.value, slot)

    def _check_target(self, target: Token) -> None:
        if target.value in _BOOLEANS:
            raise self._error(f"cannot assign to '{target.value}', a boolean constant", target)

    # ---- operators
    def binary(self, children: list) -> int:
        lhs, op, rhs = children
        return self._emit_fast(
            (ir.BINARY, op.line, op.column, op.end_column, op.value, None, None, (lhs, rhs), (), ())
        )

    def unary(self, children: list) -> int:
        op, operand = children
        return self._emit(ir.UNARY, op, op=op.value, args=(operand,))

    # ---- atoms and postfix forms
    def number(self, children: list) -> int:
        t = children[0]
        return self._emit_fast(
            (ir.CONST, t.line, t.column, t.end_column, None, None, float(t.value), (), (), ())
        )

    def string(self, children: list) -> int:
        return self._emit(ir.CONST, children[0], value=children[0].value[1:-1])

    def name(self, children: list) -> int:
        token = children[0]
        if token.value in _BOOLEANS:
            return self._emit(ir.CONST, token, value=_BOOLEANS[token.value])
        return self._emit_fast(
            (
                ir.NAME,
                token.line,
                token.column,
                token.end_column,
                None,
                token.value,
                None,
                (),
                (),
                (),
            )
        )

    def list_literal(self, children: list) -> int:
        bracket, *items = children
        return self._emit(ir.LIST, bracket, args=tuple(items))

    def call(self, children: list, receiver: int | None = None) -> int:
        function, *arguments = children
        args: list[int] = [] if receiver is None else [receiver]
        kwargs: dict[str, int] = {}
        for argument in arguments:
            if isinstance(argument, _Kwarg):
                keyword_name = argument.token.value
                if keyword_name in kwargs:
                    raise self._error(f"keyword argument '{keyword_name}' repeated", argument.token)
                kwargs[keyword_name] = argument.slot
            elif kwargs:
                instr = self.instrs[argument]
                raise syntax_error(
                    self.text,
                    "positional argument follows a keyword argument; put positional ones first",
                    instr.line,
                    instr.column,
                    instr.end_column,
                )
            else:
                args.append(argument)
        return self._emit(
            ir.CALL,
            function,
            name=function.value,
            args=tuple(args),
            kwargs=tuple(kwargs.items()),
            op=None if receiver is None else ir.METHOD,
        )

    def method_call(self, children: list) -> int:
        base, _dot, method, *arguments = children
        return self.call([method, *arguments], receiver=base)

    def kwarg(self, children: list) -> _Kwarg:
        return _Kwarg(children[0], children[1])

    def index_name(self, children: list) -> int:
        base = self.name(children[:1])
        return self.index([base, *children[1:]])

    def index(self, children: list) -> int:
        base, bracket, *items = children
        return self._emit(ir.INDEX, bracket, args=(base,), items=self._index(items, bracket))

    def _index(self, items: list, bracket: Token) -> tuple[ir.IndexItem, ...]:
        if sum(item is Ellipsis for item in items) > 1:
            raise self._error("an index can only have a single '...'", bracket)
        return tuple(items)

    def attribute(self, children: list) -> int:
        base, dot, attr = children
        if attr.value != "T":
            raise self._error(
                f"'.{attr.value}': only '.T' is allowed after an expression; agrad has no "
                "attributes — call functions instead, e.g. sum(x) or x.sum()",
                attr,
            )
        return self._emit(ir.TRANSPOSE, dot, args=(base,))

    def slice_item(self, children: list) -> Slice:
        return Slice(*children, *[None] * (3 - len(children)))

    def ellipsis(self, children: list) -> object:
        return Ellipsis

    def newaxis(self, children: list) -> None:
        return None
