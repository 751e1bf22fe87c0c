"""Run a plain command line without Typer and Click (they cost about a quarter of a
small command's start-up), from the same definitions Typer's app is made from.

Only command lines that are plainly right are taken: the command's own long options
(``--name VALUE``, ``--name=VALUE``, flags), one program argument, ``--``. The values
are converted as Click converts them (``int()``, ``float()``, a range check, an exact
choice, a list for a repeatable option) and the command's function is called as Typer
calls it. Anything else — ``--help``, a short option, an unknown or repeated option, a
missing or unconvertible value, a second argument — returns None: Typer's app then runs
the command line, and says what is wrong in its own words. So an error, a help text or
a usage line is always Typer's; tests/test_cli_direct.py checks that what is taken here
is what Typer would have passed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import Enum
from typing import Any, get_args

from .options import COMMANDS, Spec, specs

# The command being run here (read by the one place that needs Click's context name).
RUNNING: list[str] = []

_SETTINGS = frozenset({"help", "metavar", "min", "max", "show_default"})
_MISSING = object()


class _Shape:
    """How one command's options are written and converted."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.defaults: dict[str, Any] = {}
        self.options: dict[str, tuple[Spec, Any]] = {}  # --name -> (spec, value if a flag)
        self.argument: Spec | None = None
        self.eligible = True
        for spec in specs(fn):
            self.defaults[spec.name] = spec.default
            if not set(spec.param.settings) <= _SETTINGS:
                self.eligible = False  # a callback, an eager option...: Typer's
            if spec.param.kind == "argument":
                self.argument = spec
                continue
            for decl in spec.param.decls:
                on, _, off = decl.partition("/")
                if _is_flag(spec):
                    self.options[on] = (spec, True)
                    if off:
                        self.options[off] = (spec, False)
                else:
                    self.options[on] = (spec, _MISSING)

    def argv_shape(self) -> tuple[dict[str, bool], bool]:
        """Each option name: whether it takes a value; and whether the command takes the
        program (for `agrad.cli.argv.normalize`, as `click_shapes` gives them)."""
        takes = {name: flag is _MISSING for name, (_, flag) in self.options.items()}
        return takes, self.argument is not None


@functools.cache
def shape(name: str) -> _Shape:
    return _Shape(COMMANDS[name])


def _is_flag(spec: Spec) -> bool:
    return spec.annotation is bool or set(get_args(spec.annotation)) == {bool, type(None)}


def parse(name: str, args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of command ``name`` for ``args`` (normalized: see
    `agrad.cli.argv`), or None where Typer must read them."""
    command = shape(name)
    if not command.eligible:
        return None
    given: dict[str, Any] = {}
    program: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            program += args[i:]
            break
        if not arg.startswith("--"):
            if arg.startswith("-") and arg != "-":
                return None  # a short option (-f, -h): Typer's
            program.append(arg)
            continue
        key, eq, attached = arg.partition("=")
        if key not in command.options:
            return None  # --help, an unknown option
        spec, flag = command.options[key]
        if flag is not _MISSING:
            if eq:
                return None  # a flag given a value
            value: Any = flag
        elif eq:
            value = attached
        elif i < len(args) and not args[i].startswith("-"):
            value = args[i]
            i += 1
        else:
            return None  # no value (or one that looks like an option)
        converted = _convert(spec, value)
        if converted is _MISSING:
            return None
        if _repeatable(spec):
            given.setdefault(spec.name, []).append(converted)
        elif spec.name in given:
            return None  # given twice: Click's rule (the last wins) is Typer's to apply
        else:
            given[spec.name] = converted
    if len(program) > 1 or (program and command.argument is None):
        return None
    kwargs = {**command.defaults, **given}
    if program:
        kwargs[command.argument.name] = program[0]  # type: ignore[union-attr]
    return kwargs


def _repeatable(spec: Spec) -> bool:
    return any(getattr(t, "__origin__", None) is list for t in (spec.annotation, *get_args(
        spec.annotation)))  # fmt: skip


def _convert(spec: Spec, value: Any) -> Any:
    """``value`` as Click converts it for ``spec``'s type, or _MISSING if it would refuse."""
    kind = spec.annotation
    if isinstance(value, bool):
        return value
    types = [t for t in (kind, *get_args(kind)) if t is not type(None)]
    if any(t is str or getattr(t, "__origin__", None) is list for t in types):
        return value
    if any(isinstance(t, type) and issubclass(t, Enum) for t in types):
        (enum,) = [t for t in types if isinstance(t, type) and issubclass(t, Enum)]
        for member in enum:
            if member.value == value:
                return member
        return _MISSING
    number = int if int in types else float if float in types else None
    if number is None:
        return _MISSING
    try:
        converted = number(value)
    except ValueError:
        return _MISSING
    low, high = spec.param.settings.get("min"), spec.param.settings.get("max")
    if (low is not None and converted < low) or (high is not None and converted > high):
        return _MISSING
    return converted


def run(name: str, kwargs: dict[str, Any]) -> Any:
    """Call command ``name``'s function with ``kwargs`` (from `parse`)."""
    RUNNING.append(name)
    try:
        return COMMANDS[name](**kwargs)
    finally:
        RUNNING.pop()
