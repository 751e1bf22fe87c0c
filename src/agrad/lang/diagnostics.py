"""Syntax error messages: what went wrong, where, and what to write instead.

Turns Lark's ``UnexpectedInput`` into `AgradSyntaxError` with friendly token
names (never Lark's terminal names such as ``RPAR``) and a caret snippet, and
offers `caret_snippet` so the runtime can point at an operator the same way.
"""

from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING

from agrad.errors import AgradSyntaxError

if TYPE_CHECKING:
    from lark import Token
    from lark.exceptions import UnexpectedInput

SNIPPET_WIDTH = 80  # long lines (a 100,000-term sum) are cut to a window around the caret

_CLOSER = {"(": ")", "[": "]"}
# C0 and C1 controls but tab, DEL, and the bidirectional overrides ("Trojan source").
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BRACKETS = re.compile(r"[()\[\]]|#[^\n]*")

_NAMES = {
    "NUMBER": "a number",
    "NAME": "a name",
    "STRING": "a string",
    "COMPARE": "a comparison",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "AT": "'@'",
    "POW": "'**'",
    "DOT": "'.T'",
    "ELLIPSIS": "'...'",
    "NONE": "'None'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "COLON": "':'",
    "EQUAL": "'='",
    "_SEMI": "';'",
    "_NL": "a new line",
    "$END": "the end of the input",
}
_ORDER = {name: i for i, name in enumerate(_NAMES)}
_OPERAND = frozenset({"NUMBER", "NAME", "LPAR", "LSQB"})
_OPERATORS = frozenset({"PLUS", "MINUS", "STAR", "SLASH", "AT", "POW"})
_STATEMENT_END = frozenset({"_NL", "_SEMI", "$END"})

KEYWORD_HINTS = {
    "import": "agrad cannot import anything; its functions are built in: call exp(x), sum(x)",
    "from": "agrad cannot import anything; its functions are built in: call exp(x), sum(x)",
    "def": "agrad has no function definitions; assign a variable instead: f = x**2",
    "lambda": "agrad has no function definitions; assign a variable instead: f = x**2",
    "if": "agrad has no conditionals; write where(condition, a, b)",
    "else": "agrad has no conditionals; write where(condition, a, b)",
    "for": "agrad has no loops; operations apply to whole tensors, e.g. sum(x**2)",
    "while": "agrad has no loops; operations apply to whole tensors, e.g. sum(x**2)",
    "and": "for 0/1 masks write a * b for 'and'",
    "or": "for 0/1 masks write maximum(a, b) for 'or'",
    "not": "for a 0/1 mask write 1 - m for 'not'",
}
# Inside an index the contextual lexer reads None as the NONE terminal, not a NAME.
KEYWORDS = frozenset(keyword.kwlist) - {"True", "False"}

_CHAR_HINTS = {
    "'": "a string needs its closing quote on the same line (strings are einsum's equations)",
    '"': "a string needs its closing quote on the same line (strings are einsum's equations)",
    "^": "write '**' for powers",
    "%": "agrad has no '%' operator",
    "&": "for 0/1 masks write a * b for 'and'",
    "|": "for 0/1 masks write maximum(a, b) for 'or'",
    "~": "for a 0/1 mask write 1 - m for 'not'",
    "!": "write '!=' for 'not equal'",
    "{": "tensor literals use square brackets: [[1, 2], [3, 4]]",
    "}": "tensor literals use square brackets: [[1, 2], [3, 4]]",
    "\\": "to continue a line, leave a '(' or '[' open",
}


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def printable(text: str) -> str:
    r"""``text`` with control characters written as escapes (``\x1b``), so that a program
    or a file name cannot drive the terminal or forge log lines through an error message.

    >>> printable("x\x1b[2J + \u202ey")
    'x\\x1b[2J + \\u202ey'
    """
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def caret_snippet(text: str, line: int, column: int, end_column: int | None = None) -> str:
    """The source line ``line`` and a caret line under ``column`` (to ``end_column``).

    >>> print(caret_snippet("y = x @ w", 1, 7))
    y = x @ w
          ^
    """
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    source = lines[line - 1].rstrip("\r")
    start = max(column - 1, 0)
    width = max((end_column or column + 1) - column, 1)
    if len(source) > SNIPPET_WIDTH:  # show a window, marking what was cut with '...'
        left = max(0, start - SNIPPET_WIDTH // 2)
        right = left + SNIPPET_WIDTH
        head = "..." if left else ""
        source = head + source[left:right] + ("..." if right < len(source) else "")
        start += len(head) - left
        width = min(width, SNIPPET_WIDTH)
    marked = source[start : start + width]
    before, shown = printable(source[:start]), printable(marked)
    width = max(len(shown) + width - len(marked), 1)
    # Keep tabs from the source so the caret lines up in a terminal.
    pad = "".join(ch if ch == "\t" else " " for ch in before)
    after = printable(source[start + len(marked) :])
    return f"{before}{shown}{after}\n{pad}{'^' * width}"


def syntax_error(
    text: str, message: str, line: int, column: int, end_column: int | None = None
) -> AgradSyntaxError:
    """An `AgradSyntaxError` whose message starts with ``line L, column C:``."""
    snippet = caret_snippet(text, line, column, end_column)
    return AgradSyntaxError(f"line {line}, column {column}: {message}", line, column, snippet)


def open_brackets(text: str, stop: int) -> tuple[list[tuple[str, int]], tuple[str, int] | None]:
    """Brackets still open at offset ``stop`` as (char, offset), and the first stray closer."""
    stack: list[tuple[str, int]] = []
    for match in _BRACKETS.finditer(text, 0, stop):
        char = match.group()
        if char in _CLOSER:
            stack.append((char, match.start()))
        elif char in ")]":
            if not stack or _CLOSER[stack[-1][0]] != char:
                return stack, (char, match.start())
            stack.pop()
    return stack, None


def describe_expected(expected: set[str]) -> str:
    """Lark terminal names as words: 'an operator, ')' or the end of the statement'."""
    pending = set(expected)
    phrases = []
    operand = pending >= _OPERAND and not {"STAR", "SLASH"} & pending
    if operand:
        pending -= _OPERAND | {"PLUS", "MINUS", "STRING"}
        phrases.append("an expression" if pending else "a number, a name, '(' or '['")
    if pending >= _OPERATORS:
        phrases.append("an operator")
        pending -= _OPERATORS | {"COMPARE", "DOT", "LSQB", "LPAR"}
    has_end = pending >= _STATEMENT_END
    pending -= _STATEMENT_END if has_end else set()
    phrases += [_NAMES.get(name, name) for name in sorted(pending, key=lambda n: _ORDER.get(n, 99))]
    if has_end:
        phrases.append("the end of the statement")
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + " or " + phrases[-1]


def _describe_token(kind: str, value: str) -> str:
    if kind == "NAME":
        return f"name '{value}'"
    if kind == "NUMBER":
        return f"number '{value}'"
    if kind == "$END":
        return "end of input"
    if kind == "_NL":
        return "end of line"
    return f"'{value}'"


def keyword_error(text: str, token: Token) -> AgradSyntaxError:
    """A Python keyword where agrad expects a name: say what agrad offers instead."""
    if token.value == "None":
        message = "'None' is only allowed in an index, where it adds an axis: x[:, None]"
    else:
        hint = KEYWORD_HINTS.get(token.value, "agrad is not Python")
        message = f"'{token.value}' is a Python keyword, not part of agrad; {hint}"
    return syntax_error(text, message, token.line, token.column, token.end_column)


def _where_opened(text: str, offset: int, line: int) -> str:
    open_line, open_column = position(text, offset)
    if open_line == line:
        return f"column {open_column}"
    return f"line {open_line}, column {open_column}"


def translate(exc: UnexpectedInput, text: str) -> AgradSyntaxError:
    """Turn one of Lark's parse errors into a friendly `AgradSyntaxError`."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken  # lark loads with parser

    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream]
        hint = _CHAR_HINTS.get(char)
        if hint is None and not char.isascii():
            hint = "names use ASCII letters, digits and '_'"
        message = f"unexpected character {char!r}" + (f"; {hint}" if hint else "")
        return syntax_error(text, message, exc.line, exc.column)
    if not isinstance(exc, UnexpectedToken):  # UnexpectedEOF: only Earley raises it
        return syntax_error(text, "unexpected end of input", exc.line, exc.column)
    token = exc.token
    expected = set(exc.accepts or exc.expected)
    wanted = describe_expected(expected)
    if expected == {"NAME"}:  # only after '.', where the one name allowed is T
        wanted = "'T' (only '.T' may follow an expression)"
    if token.type == "$END":
        line, column = token.end_line or 1, token.end_column or 1
        stack, _ = open_brackets(text, len(text))
        message = f"unexpected end of input; expected {wanted}"
        if stack:
            opener, offset = stack[-1]
            where = _where_opened(text, offset, line)
            closer = _CLOSER[opener]
            if f"'{closer}'" in wanted:
                message = f"unexpected end of input; expected '{closer}' to close '{opener}'"
                message += f" opened at {where}"
            else:
                message += f"; the '{opener}' opened at {where} is still open"
        return syntax_error(text, message, line, column)
    if token.type == "NAME" and token.value in KEYWORDS:  # the lexer saw it before postlex
        return keyword_error(text, token)
    line, column, end = token.line, token.column, token.end_column
    found = _describe_token(token.type, str(token))
    message = f"unexpected {found}; expected {wanted}"
    if token.type in ("RPAR", "RSQB"):
        stack, stray = open_brackets(text, token.start_pos + 1)
        if stray is not None and stray[1] == token.start_pos:
            if not stack:
                message = f"unmatched '{token}': no bracket is open here; remove it"
            else:
                opener, offset = stack[-1]
                where = _where_opened(text, offset, line)
                message = (
                    f"'{token}' does not match the '{opener}' opened at {where}; "
                    f"expected '{_CLOSER[opener]}'"
                )
    elif token.type == "COMPARE" and "NUMBER" not in expected:
        message = (
            f"unexpected '{token}': comparisons cannot be chained; "
            "for 'a < b < c' write (a < b) * (b < c)"
        )
    elif token.type == "EQUAL":
        message = (
            "unexpected '='; only a name (x = ...), an indexed name (x[0] = ...) or a keyword "
            "argument (sum(x, axis=0)) can be assigned; write '==' to compare"
        )
    elif token.type == "NUMBER" and token.start_pos and text[token.start_pos - 1] in "0123456789.":
        start = token.start_pos - 1
        while start and text[start - 1] in "0123456789.eE":
            start -= 1
        if not (start and (text[start - 1].isalnum() or text[start - 1] == "_")):  # not x2.3
            message = f"malformed number '{text[start : token.end_pos]}'"
            column -= token.start_pos - start
    if token.type in _OPERAND and "STAR" in expected and not message.startswith("malformed"):
        message += "; is an operator such as '*' missing?"
    return syntax_error(text, message, line, column, end)
