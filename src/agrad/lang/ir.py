"""The flat IR that `agrad.lang.parser.parse` produces and the runtime executes.

A program is a tuple of `Instr`; instruction *i* writes slot *i*, and its
operands are slot numbers of earlier instructions, so executing ``instrs`` in
order in one loop computes every value, with no recursion at any depth.

Kinds (plain strings, compared with ``==`` or used as dict keys):

==============  =========================================================
kind            fields used
==============  =========================================================
CONST           value: float | bool | str (every numeric literal is a float)
NAME            name: a variable, constant (pi, e, inf) or unknown name
UNARY           op '-' | '+'; args = (operand,)
BINARY          op in BINARY_OPS; args = (lhs, rhs)
CALL            name; args = positional slots; kwargs = ((keyword, slot), ...);
                op = METHOD for ``x.name(...)`` (x is the first argument)
LIST            args = element slots of a bracket literal ``[a, b]``: a
                tensor literal or a list argument, the runtime decides
INDEX           args = (base,); items = index items (see `IndexItem`)
TRANSPOSE       args = (base,)  (``x.T``)
STORE           name; args = (value,)  (``name = value``; slot = value)
STORE_INDEX     name; args = (value,); items  (``name[items] = value``)
==============  =========================================================

Positions are 1-based. ``line``/``column``/``end_column`` point at the token
that best explains an error: the operator of UNARY/BINARY, the name of NAME,
CALL and STORE*, the ``[`` of LIST/INDEX, the ``.`` of TRANSPOSE, the literal
of CONST. ``end_column`` is one past that token, on the same line.
"""

from __future__ import annotations

from types import EllipsisType
from typing import Literal, NamedTuple

from agrad.records import record

CONST = "CONST"
NAME = "NAME"
UNARY = "UNARY"
BINARY = "BINARY"
CALL = "CALL"
LIST = "LIST"
INDEX = "INDEX"
TRANSPOSE = "TRANSPOSE"
STORE = "STORE"
STORE_INDEX = "STORE_INDEX"

Kind = Literal[
    "CONST", "NAME", "UNARY", "BINARY", "CALL", "LIST", "INDEX", "TRANSPOSE", "STORE", "STORE_INDEX"
]
KINDS: frozenset[str] = frozenset(
    {CONST, NAME, UNARY, BINARY, CALL, LIST, INDEX, TRANSPOSE, STORE, STORE_INDEX}
)
METHOD = "method"  # a CALL's op when written as a method call
UNARY_OPS: frozenset[str] = frozenset({"-", "+"})
BINARY_OPS: frozenset[str] = frozenset(
    {"+", "-", "*", "/", "**", "@", "<", "<=", ">", ">=", "==", "!="}
)


class Slice(NamedTuple):
    """``start:stop:step`` inside an index; each part is a slot or None (omitted)."""

    start: int | None
    stop: int | None
    step: int | None


# One item of an index: a slot (an integer, or a tensor for the runtime to
# judge), a Slice, Ellipsis for ``...``, or None for ``None`` (a new axis).
# Ellipsis and None are exactly what NumPy expects in an index tuple.
IndexItem = int | Slice | EllipsisType | None


class Instr(NamedTuple):
    """One instruction; it writes the slot equal to its position in the program."""

    kind: Kind
    line: int
    column: int
    end_column: int
    op: str | None = None
    name: str | None = None
    value: float | bool | str | None = None
    args: tuple[int, ...] = ()
    kwargs: tuple[tuple[str, int], ...] = ()
    items: tuple[IndexItem, ...] = ()


class Statement(NamedTuple):
    """One top-level statement: the name it assigns (None for an expression),
    where it starts, and the slot holding its value."""

    target: str | None
    line: int
    column: int
    slot: int


@record(frozen=True)
class ParsedProgram:
    """A parsed and lowered program: parse once, run many times.

    ``output`` is the slot of the last statement's value: the program's result.
    """

    instrs: tuple[Instr, ...]
    output: int
    source: str
    statements: tuple[Statement, ...]


def operand_slots(instr: Instr) -> tuple[int, ...]:
    """Every slot that ``instr`` reads, in order: args, kwargs, then index items.

    >>> operand_slots(Instr(BINARY, 1, 3, 4, op="+", args=(0, 1)))
    (0, 1)
    """
    slots = list(instr.args)
    slots.extend(slot for _, slot in instr.kwargs)
    for item in instr.items:
        if isinstance(item, Slice):
            slots.extend(part for part in item if part is not None)
        elif isinstance(item, int):
            slots.append(item)
    return tuple(slots)
