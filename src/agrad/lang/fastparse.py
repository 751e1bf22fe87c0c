"""Lark's LALR parse of a program, driven by a loop of agrad's own over Lark's own table.

Lark's `ParserState.feed_token` is a method call per token that looks each action up as a
pair and calls a callback for every reduction, the unit ones of `?rule`s too (six of the
nine reductions of a term `x*1.5`, each returning its one child). Here the same table and
the same callbacks — both Lark's, built from agrad's grammar — are read from plain dicts
in one loop, and a unit reduction whose callback is Lark's `ExpandSingleChild` only moves
the state (its value is its one child, already on the stack). A 100,000-term program
parses in about 0.65x the time of Lark's own loop.

What may differ from `Lark.parse` is only the speed: the actions are Lark's table's, taken
in its order, and every value is the one Lark's callback returns. Anything unusual is
Lark's to handle: a parser whose internals are not the ones known here gives no
`FastParser` (`build` returns None), and `agrad.lang.parser` parses any text on which this
loop raises anything at all again with Lark's own lexer and parser, whose errors are the
ones reported (`tests/test_lang_fastlex.py` compares the paths on generated programs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lark import Lark, Token
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

# An action: a shift as the next state's number; a reduction as (number of children,
# Lark's callback, the rule's nonterminal, whether it only passes its one child on).
Action = int | tuple[int, Callable[[list], Any], str, bool]


class Refused(Exception):
    """A token the table has no action for: Lark's own parser must say what is wrong."""


class FastParser:
    """Lark's LALR table for rule ``start`` and Lark's callbacks, as dicts."""

    def __init__(self, lark: Lark, start: str = "start") -> None:
        parser = lark.parser.parser.parser  # LALR_Parser -> _Parser (table and callbacks)
        table, callbacks = parser.parse_table, parser.callbacks
        if any(isinstance(key, str) for key in callbacks):
            raise TypeError("terminal callbacks are Lark's to call")
        self.start_state = table.start_states[start]
        self.end_state = table.end_states[start]
        self.actions: dict[Any, dict[str, Action]] = {}
        for state, row in table.states.items():
            actions: dict[str, Action] = {}
            for symbol, (kind, arg) in row.items():
                if kind is Shift:
                    actions[symbol] = arg
                else:
                    size, callback = len(arg.expansion), callbacks[arg]
                    unit = size == 1 and _passes_child_on(callback)
                    actions[symbol] = (size, callback, arg.origin.name, unit)
            self.actions[state] = actions
        if not all(isinstance(state, int) for state in self.actions):
            raise TypeError("a parse table whose states are not numbers")

    def parse(self, tokens: Iterable[Token]) -> Any:
        """The value Lark's parse of ``tokens`` returns; raise `Refused` (or whatever a
        callback raises) where Lark's parser must decide."""
        actions = self.actions
        states: list[int] = [self.start_state]
        values: list[Any] = []
        for token in tokens:
            kind = token.type
            while True:
                action = actions[states[-1]].get(kind)
                if action.__class__ is int:  # shift
                    states.append(action)
                    values.append(token)
                    break
                if action is None:
                    raise Refused
                size, callback, origin, unit = action  # type: ignore[misc]
                if unit:  # `?rule: child`: the value is the child's, only the state moves
                    states[-1] = actions[states[-2]][origin]  # type: ignore[assignment]
                    continue
                self._reduce(states, values, size, callback, origin)
        end_state = self.end_state
        while True:
            action = actions[states[-1]].get("$END")
            if action is None or action.__class__ is int:
                raise Refused
            size, callback, origin, unit = action  # type: ignore[misc]
            if unit:
                states[-1] = actions[states[-2]][origin]  # type: ignore[assignment]
            else:
                self._reduce(states, values, size, callback, origin)
            if states[-1] == end_state:
                return values[-1]

    def _reduce(
        self, states: list[int], values: list, size: int, callback: Callable, origin: str
    ) -> None:
        if size:
            children = values[-size:]
            del values[-size:]
            del states[-size:]
        else:
            children = []
        values.append(callback(children))
        states.append(self.actions[states[-1]][origin])  # type: ignore[arg-type]


def _passes_child_on(callback: Callable[[list], Any]) -> bool:
    """Whether ``callback`` is Lark's `?rule` wrapper, returning a lone child as it is
    (asked of the wrapper itself, which then calls nothing else)."""
    if type(callback) is not ExpandSingleChild:
        return False
    probe = object()
    return callback([probe]) is probe


def build(lark: Lark) -> FastParser | None:
    """The fast parser for ``lark``, or None if its internals are not the ones known."""
    try:
        return FastParser(lark)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
