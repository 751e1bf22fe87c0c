"""agrad's command line: `agrad eval | jacobian | hessian | check | graph | fit | functions`.

`main` is the one error boundary: agrad's own errors become ``error: ...`` on
stderr with exit 2, a failed check exits 1, and no traceback ever reaches a user
(set AGRAD_DEBUG=1 to see one for a bug report).
"""

from __future__ import annotations

import os
import re
import sys
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    CHECK_FAILED = 1  # a gradient disagreed, or a regression is outside tolerance
    BAD_INPUT = 2  # syntax, names, shapes, files, options


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    code = run(argv)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away; nothing left to say
        code = code or 0
    # Everything is written and closed: skip the interpreter's teardown of numpy, Lark
    # and the graph (about a sixth of a small command's wall time).
    os._exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit status (used by main and by tests)."""
    import warnings

    import typer

    from ..errors import AgradError

    # Overflow to inf or a log of 0 is reported in the output (inf/nan), not as a warning.
    warnings.simplefilter("ignore", RuntimeWarning)
    from .app import command

    try:
        result = command().main(args=argv, prog_name="agrad", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # Typer's (vendored Click's) usage errors
        ctx = getattr(exc, "ctx", None)
        hint = f" (see 'agrad {ctx.info_name} --help')" if ctx and ctx.parent else ""
        if re.search(r"No such option: -[^-]", exc.format_message()):
            hint += "; a program that starts with '-' goes after '--': agrad eval -- \"-x\""
        return _fail(f"{exc.format_message()}{hint}", code=getattr(exc, "exit_code", 2) or 2)
    except typer.Abort:
        return _fail("aborted", code=130)
    except AgradError as exc:
        return _fail(str(exc), getattr(exc, "snippet", ""))
    except KeyboardInterrupt:
        return _fail("interrupted", code=130)
    except RecursionError:
        return _fail("the program is nested too deeply to handle; split it into assignments")
    except Exception as exc:  # the boundary: never a traceback
        if os.environ.get("AGRAD_DEBUG"):
            raise
        return _fail(
            f"internal error (a bug in agrad, please report it): {type(exc).__name__}: {exc}"
        )
    return int(result) if isinstance(result, int) else int(ExitCode.OK)


def _fail(message: str, snippet: str = "", code: int = ExitCode.BAD_INPUT) -> int:
    lines = message.splitlines() or [""]
    text = f"error: {lines[0]}"
    if snippet:
        text += "\n" + snippet.rstrip("\n")
    sys.stderr.write(text + "\n")
    return code
