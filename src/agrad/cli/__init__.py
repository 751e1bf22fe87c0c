"""agrad's command line: `agrad eval | jacobian | hessian | check | graph | fit | functions`.

`run` is the one error boundary: agrad's own errors become ``error: ...`` on
stderr with exit 2, a failed check exits 1, a bug in agrad exits 3 with a note
on how to report it (AGRAD_DEBUG=1 shows the traceback), Ctrl-C exits 130, and
no traceback ever reaches a user. A reader that goes away (``agrad ... | head``)
is not an error: the command finishes quietly with the status it earned.
"""

from __future__ import annotations

import errno
import os
import sys
from enum import IntEnum

from .streams import guarded_streams


class ExitCode(IntEnum):
    OK = 0
    CHECK_FAILED = 1  # a gradient disagreed, a regression is outside tolerance, fit diverged
    BAD_INPUT = 2  # syntax, names, shapes, files, options, a limit hit
    INTERNAL = 3  # a bug in agrad
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


REPORT_HINT = (
    "please report it to the agrad developers with the command line; run it again with "
    "AGRAD_DEBUG=1 to see the traceback"
)
OUT_OF_MEMORY = (
    "out of memory: the computation needs more memory than this machine has; use smaller "
    "inputs, or a lower --max-elements so that agrad refuses such sizes before allocating"
)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (`python -m agrad` too); see `agrad.cli.interrupts`."""
    import signal

    from _agrad_entry import exit_interrupted

    from ..lang.gcpause import allow_pausing

    signal.signal(signal.SIGINT, exit_interrupted)
    allow_pausing()  # this process is agrad's own: a big program may pause the collector
    try:
        code = run(argv)
    except KeyboardInterrupt:  # in the instant between run's own handlers
        code = _fail("interrupted", code=ExitCode.INTERRUPTED)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader that went away; nothing left to say
            pass
    # Everything is written: skip the interpreter's teardown of numpy, Lark and the graph
    # (about a sixth of a small command's wall time).
    os._exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit status (used by main and by tests)."""
    with guarded_streams():
        try:
            return _run(sys.argv[1:] if argv is None else list(argv))
        except KeyboardInterrupt:
            return _fail("interrupted", code=ExitCode.INTERRUPTED)
        except Exception as exc:  # start-up itself failed (an import, the command table)
            return _internal(exc)
        except BaseException as exc:  # GeneratorExit and the like: never a traceback
            return _internal(exc)


def _run(argv: list[str]) -> int:
    import warnings

    # Overflow to inf or a log of 0 is reported in the output (inf/nan), not as a warning.
    warnings.simplefilter("ignore", RuntimeWarning)
    from ..errors import AgradError, agrad_wording

    invoke = _invocation(argv)
    try:
        with agrad_wording():  # the CLI's errors say what to do, not PyTorch's texts
            result = invoke()
    except AgradError as exc:
        return _fail(str(exc), exc.snippet, exc.exit_code)
    except SystemExit as exc:  # shell completion exits through sys.exit
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except MemoryError:
        return _fail(OUT_OF_MEMORY)
    except RecursionError:
        return _fail("the input is nested too deeply to handle; split it into smaller parts")
    except EOFError:  # (run directly) what Typer's app does with it: a blank line, aborted
        sys.stderr.write("\n")
        return _fail("aborted", code=ExitCode.INTERRUPTED)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            return _internal(exc)
        return 1  # (run directly) as Typer's app exits on a broken pipe it did not see
    except Exception as exc:  # the boundary: never a traceback
        if "typer" in sys.modules:  # (only Typer's app raises its exceptions)
            code = _typer_outcome(exc)
            if code is not None:
                return code
        return _internal(exc)
    return int(result) if isinstance(result, int) else int(ExitCode.OK)


def _invocation(argv: list[str]):
    """What runs ``argv``: the command's function directly when `agrad.cli.direct` can
    read the command line, else Typer's app (help, usage errors, completion, the rest)."""
    from .app import command, invoked_command
    from .argv import click_shapes, normalize

    name = invoked_command(argv)
    if name is not None:
        from . import direct

        args = normalize(argv, {name: direct.shape(name).argv_shape()})
        kwargs = direct.parse(name, args[1:])
        if kwargs is not None:
            return lambda: direct.run(name, kwargs)
    group = command(name)
    args = normalize(argv, click_shapes(group))
    return lambda: group.main(args=args, prog_name="agrad", standalone_mode=False)


def _typer_outcome(exc: Exception) -> int | None:
    """The exit status for one of Typer's (vendored Click's) exceptions, else None."""
    import typer
    from typer._click.exceptions import NoArgsIsHelpError

    if isinstance(exc, typer.Exit):
        if exc.exit_code == ExitCode.INTERRUPTED and isinstance(exc.__cause__, KeyboardInterrupt):
            return _fail("interrupted", code=ExitCode.INTERRUPTED)  # Typer's own Ctrl-C
        return exc.exit_code
    if isinstance(exc, NoArgsIsHelpError):  # `agrad` alone: the help, as the usage error it is
        sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
        return ExitCode.BAD_INPUT
    if isinstance(exc, typer.TyperException):  # Typer's (vendored Click's) usage errors
        return _fail(_usage_message(exc), code=getattr(exc, "exit_code", 2) or 2)
    if isinstance(exc, typer.Abort):  # Click's answer to end of input at a prompt
        return _fail("aborted", code=ExitCode.INTERRUPTED)
    return None


def _internal(exc: Exception) -> int:
    if os.environ.get("AGRAD_DEBUG"):
        raise exc
    return _fail(
        f"internal error (a bug in agrad): {type(exc).__name__}: {exc}; {REPORT_HINT}",
        code=ExitCode.INTERNAL,
    )


def _usage_message(exc: Exception) -> str:
    message = exc.format_message()  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    if ctx is None or ctx.parent is None:
        return message
    if message.startswith("No such option: -") and not message.startswith("No such option: --"):
        message += (
            f"; if it is the program, put it after '--': agrad {ctx.info_name} -- \"-x\" "
            "(options may follow it)"
        )
    return message + f" (see 'agrad {ctx.info_name} --help')"


def _fail(message: str, snippet: str = "", code: int = ExitCode.BAD_INPUT) -> int:
    from ..lang.diagnostics import printable

    lines = message.splitlines() or [""]
    text = f"error: {printable(lines[0])}"
    if snippet:
        text += "\n" + snippet.rstrip("\n")
    sys.stderr.write(text + "\n")
    return int(code)
