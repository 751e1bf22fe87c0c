"""The commands: options in, results from `agrad.lang.session`, output from `render`.

They are defined once, with `agrad.cli.options` (Typer's parameters, kept for later);
the Typer app is made from them when a command line needs it (`typer_app`, `command`),
and `agrad.cli.direct` runs the common command lines without it.
"""

from __future__ import annotations

import functools
import os
import sys
from enum import Enum
from typing import Annotated, Any

from .. import __version__
from ..errors import AgradValueError
from .options import COMMANDS, Argument, Option, command, typer_signature

APP_SETTINGS = dict(
    name="agrad",
    help="Autograd calculator and gradient checker: values, gradients, Jacobians, Hessians "
    "and finite-difference checks of tensor expressions, with PyTorch's semantics.",
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class Dtype(str, Enum):
    float64 = "float64"
    float32 = "float32"


class Nonfinite(str, Enum):
    string = "string"
    null = "null"


# ---- options shared by every command that takes a PROGRAM ------------------------------

ProgramArg = Annotated[
    str | None,
    Argument(help="The program text; '-' reads it from standard input.", show_default=False),
]
FileOpt = Annotated[
    str | None, Option("--file", "-f", help="Read the program from a file.", metavar="PATH")
]
SetOpt = Annotated[
    list[str] | None,
    Option(
        "--set",
        help="Bind NAME=VALUE: a constant (e.g. 'x=[1,2]', 'x=randn(3)', 'x=2.5'; quote it "
        "for the shell) or @PATH (.npy, .npz:key, .csv, .txt, .json). Repeatable.",
        metavar="NAME=VALUE",
    ),
]
WrtOpt = Annotated[
    list[str] | None,
    Option(
        "--wrt",
        help="Variables to differentiate with respect to, e.g. w,b (default: the leaves "
        "the program marks requires_grad=true).",
        metavar="NAMES",
    ),
]
FormatOpt = Annotated[Format, Option("--format", help="Output format.")]
PrecisionOpt = Annotated[
    int, Option("--precision", min=1, max=17, help="Significant digits in tables.")
]
DtypeOpt = Annotated[Dtype, Option("--dtype", help="Floating-point precision.")]
SeedOpt = Annotated[int, Option("--seed", min=0, help="Seed for randn/rand.")]
LimitOpt = Annotated[
    int,
    Option("--max-elements", min=1, help="Refuse any value, file or result larger than this."),
]
NonfiniteOpt = Annotated[
    Nonfinite,
    Option(
        "--nonfinite",
        help='How --format json writes nan and ±inf: as the strings "nan", "inf", "-inf", or '
        "as null.",
    ),
]
MaxOutputOpt = Annotated[
    int,
    Option("--max-output", min=1, help="Refuse a JSON or CSV output of more numbers than this."),
]


def output_options(nonfinite: Nonfinite, max_output: int = 10**7) -> None:
    """The command's JSON/CSV settings, for the renderer."""
    from .render.common import configure

    configure(nonfinite.value, max_output)


def read_program(program: str | None, file: str | None) -> str:
    """The program text from the argument, standard input ('-') or --file."""
    from ..files import read_stream, read_text

    if file is not None:
        if program is not None:
            raise AgradValueError("give the program either as an argument or with --file, not both")
        return read_text(file, "--file")
    if program is None:
        raise AgradValueError(
            "no program given: pass it as an argument, '-' for standard input, or --file PATH"
        )
    if program == "-":
        return read_stream(sys.stdin, "PROGRAM '-'", _command_name())
    return program


def _command_name() -> str:
    from . import direct

    if direct.RUNNING:  # run without Click: the command it runs
        return direct.RUNNING[-1]
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    return ctx.info_name if ctx is not None and ctx.info_name else "COMMAND"


def _session(program, file, sets, wrt, dtype, seed, max_elements):
    from ..lang.session import Session

    return Session.create(
        read_program(program, file),
        sets or [],
        wrt or [],
        dtype=dtype.value,
        seed=seed,
        max_elements=max_elements,
    )


def _version(value: bool) -> None:
    if value:
        import typer

        typer.echo(f"agrad {__version__}")
        raise typer.Exit()


def root(
    version: Annotated[
        bool,
        Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """agrad: autograd from the command line."""


@command("eval")
def eval_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    grad_output: Annotated[
        str | None,
        Option(
            "--grad-output",
            metavar="VALUE",
            help="The 'gradient' of backward for a "
            "non-scalar output: computes a vector-Jacobian product.",
        ),
    ] = None,
    explain: Annotated[
        bool,
        Option(
            "--explain",
            help="Show the backward pass step by "
            "step: the gradient reaching each node, its local rule, what it sends "
            "to each input.",
        ),
    ] = False,
    detect_anomaly: Annotated[
        bool,
        Option(
            "--detect-anomaly",
            help="Name the op where a nan or inf first appears, in the value or the "
            "gradient, with the program line and a caret under it.",
        ),
    ] = False,
    format_: FormatOpt = Format.table,
    precision: PrecisionOpt = 6,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
    nonfinite: NonfiniteOpt = Nonfinite.string,
    max_output: MaxOutputOpt = 10**7,
) -> None:
    """Print the program's value and the gradients of the --wrt variables.

    Example:

    \b
        agrad eval 'sum((w*x+b-y)**2)' --wrt w,b --set 'x=[1,2]' --set 'y=[5,7]' \\
            --set 'w=1' --set 'b=0'

    prints the value 41 and the gradients w: -28, b: -18.
    """
    from . import render

    output_options(nonfinite, max_output)
    session = _session(program, file, set_, wrt, dtype, seed, max_elements)
    if explain:
        render.explain(*session.explain(grad_output), format_.value, precision)
        return
    render.evaluation(session.evaluate(grad_output, detect_anomaly), format_.value, precision)


@command("jacobian")
def jacobian_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    format_: FormatOpt = Format.table,
    precision: PrecisionOpt = 6,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
    nonfinite: NonfiniteOpt = Nonfinite.string,
    max_output: MaxOutputOpt = 10**7,
) -> None:
    """Print the Jacobian of the output with respect to each --wrt variable
    (shape: output.shape + variable.shape).

    Example:

    \b
        agrad jacobian '[x[0]**2 + 3*x[1], x[1]**2 + 2*x[0]]' --set 'x=[2,3]' --wrt x

    prints the matrix [[4, 3], [2, 6]].
    """
    from . import render

    output_options(nonfinite, max_output)
    session = _session(program, file, set_, wrt, dtype, seed, max_elements)
    value, blocks = session.jacobian()
    if not blocks:
        raise nothing_to_differentiate("jacobian")
    render.jacobian(value, blocks, format_.value, precision)


@command("hessian")
def hessian_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    format_: FormatOpt = Format.table,
    precision: PrecisionOpt = 6,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
    nonfinite: NonfiniteOpt = Nonfinite.string,
    max_output: MaxOutputOpt = 10**7,
) -> None:
    """Print the Hessian of a single-number output for each --wrt variable
    (shape: variable.shape + variable.shape), and the mixed blocks between variables.

    Example:

    \b
        agrad hessian 'sum(x**3) + x[0]*x[1]' --set 'x=[1,2]' --wrt x

    prints the matrix [[6, 1], [1, 12]].
    """
    from . import render

    output_options(nonfinite, max_output)
    session = _session(program, file, set_, wrt, dtype, seed, max_elements)
    value, blocks, mixed = session.hessian()
    if not blocks:
        raise nothing_to_differentiate("hessian")
    render.hessian(value, blocks, mixed, format_.value, precision)


def nothing_to_differentiate(command: str) -> AgradValueError:
    """No --wrt and no leaf marked requires_grad=true: say both ways of naming variables."""
    return AgradValueError(
        f"{command}: no variables to differentiate with respect to: name them with --wrt "
        "(e.g. --wrt w,b), or mark leaves in the program with tensor(..., requires_grad=true)"
    )


def default_wrt(session, command: str) -> None:
    """Without --wrt, the leaves the program marks requires_grad=true, as eval uses them."""
    if not session.wrt:
        session.wrt = list(session.targets(session.run()))
        if not session.wrt:
            raise nothing_to_differentiate(command)


def typer_app(only: str | None = None) -> Any:
    """The Typer app of every command, or (``only``) of that one command."""
    import typer

    _register_commands()
    app = typer.Typer(**APP_SETTINGS)
    app.callback()(_typed(root))
    for name, fn in COMMANDS.items():
        if only is None or name == only:
            app.command(name)(_typed(fn))
    return app


def _typed(fn: Any, call: Any = None) -> Any:
    """``fn`` as Typer reads it: its `Option`/`Argument` made into Typer's own (``call``,
    if given, is called instead of ``fn``: tests see what Typer passes)."""

    @functools.wraps(fn)
    def typed(**kwargs: Any) -> Any:
        return (call or fn)(**kwargs)

    typed.__signature__ = typer_signature(fn)  # type: ignore[attr-defined]
    return typed


@functools.cache
def command(only: str | None = None) -> Any:  # the Click command Typer builds
    """The Click command behind the app (run by `agrad.cli.run` with its own error boundary);
    with ``only``, the app with that one command (see `invoked_command`).

    Built once per process (about 10 ms for the whole app): Click keeps what it parses in a
    fresh context per invocation, so in-process callers (tests, the fuzzer) reuse it.
    Building a command's options is most of the cost, and a run uses one command."""
    import typer

    return typer.main.get_command(typer_app(only))


def invoked_command(argv: list[str]) -> str | None:
    """The command ``argv`` runs when it names one first, else None (the whole app: the
    root's --help and --version, unknown commands, and shell completion need all of them)."""
    if not argv or os.environ.get("_AGRAD_COMPLETE"):
        return None
    _register_commands()
    return argv[0] if argv[0] in COMMANDS else None


def _register_commands() -> None:
    # Each registers its command; the order here is the order --help lists them in.
    from . import check, fit, functions, graph  # noqa: F401


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole Typer app (typer.testing.CliRunner takes one)
        return typer_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
