"""Find the PROGRAM among the arguments, even when it starts with '-'.

The most common loss there is, ``-sum(log_softmax(z, axis=1)*y)``, starts with a
minus, and an option parser takes it for an option. Before Click sees the
arguments, the program is found by what it is:

- an argument that cannot be an option is the program: it has characters no
  option has (``(``, ``*``, a space, ...), or it is made of option characters
  but parses as a program (``-x``, ``-1``) and is not one of the command's options;
- ``--`` marks the next argument as the program, and options may follow it
  (``agrad eval -- "-x" --set x=2``);
- values of options that take one (``--grad-output -1``) are never the program.

The program then goes last, after ``--``, where Click takes it as the argument:
``eval -x**2 --set x=2`` becomes ``eval --set x=2 -- -x**2``.
"""

from __future__ import annotations

import re
from typing import Any

_OPTION_LIKE_LONG = re.compile(r"--[A-Za-z][\w-]*(=.*)?", re.DOTALL)
_OPTION_CHARS = re.compile(r"-[A-Za-z0-9_-]*")


# A command's options as normalize needs them: each option name -> whether it takes a
# value, and whether the command takes the program as its argument.
Shape = tuple[dict[str, bool], bool]


def click_shapes(group: Any) -> dict[str, Shape]:
    """The shape of each command of a Click group (Typer's app)."""
    return {
        name: (
            {
                opt: not (p.is_flag or p.count)
                for p in command.params
                if p.param_type_name == "option"
                for opt in (*p.opts, *p.secondary_opts)
            },
            any(p.param_type_name == "argument" for p in command.params),
        )
        for name, command in group.commands.items()
    }


def normalize(argv: list[str], shapes: dict[str, Shape]) -> list[str]:
    """``argv`` with a program that starts with '-' moved after ``--``."""
    at = 0
    while at < len(argv) and argv[at].startswith("-") and argv[at] != "-":
        at += 1  # the root's own flags (--version, --help): none takes a value
    if at >= len(argv) or argv[at] not in shapes:
        return argv
    options, has_argument = shapes[argv[at]]
    if not has_argument:
        return argv
    takes_value = {**options, "--help": False, "-h": False}
    out: list[str] = []
    program: str | None = None
    positional_seen = False
    rest = argv[at + 1 :]
    i = 0
    while i < len(rest):
        arg = rest[i]
        free = program is None and not positional_seen
        if arg == "--":
            if free and i + 1 < len(rest):
                program = rest[i + 1]
                i += 2
                continue
            out.extend(rest[i:])
            break
        if free and _is_program(arg, takes_value):
            program = arg
        elif arg in takes_value:
            out.append(arg)
            if takes_value[arg] and i + 1 < len(rest):
                out.append(rest[i + 1])
                i += 1
        else:
            positional_seen = positional_seen or not arg.startswith("-") or arg == "-"
            out.append(arg)
        i += 1
    if program is not None:
        out += ["--", program]
    return [*argv[: at + 1], *out]


def _is_program(arg: str, takes_value: dict[str, bool]) -> bool:
    if not arg.startswith("-") or arg in ("-", "--") or arg in takes_value:
        return False
    if arg.startswith("--"):
        return not _OPTION_LIKE_LONG.fullmatch(arg)  # --bogus stays an (unknown) option
    if takes_value.get(arg[:2]):  # -fPATH: a short option with its value attached
        return _parses(arg)
    if _OPTION_CHARS.fullmatch(arg):  # -x, -1: a program if it is one
        return _parses(arg)
    return True  # '(', '*', ' ', '.': no option looks like that


def _parses(text: str) -> bool:
    from ..errors import AgradError
    from ..lang.parser import parse

    try:
        parse(text)
    except AgradError:
        return False
    return True
