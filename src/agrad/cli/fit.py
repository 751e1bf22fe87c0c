"""`agrad fit`: minimise the output with SGD (momentum) or Adam, and show the curve."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from ..errors import AgradValueError
from . import ExitCode
from .app import (
    Dtype,
    DtypeOpt,
    FileOpt,
    Format,
    FormatOpt,
    LimitOpt,
    PrecisionOpt,
    ProgramArg,
    SeedOpt,
    SetOpt,
    WrtOpt,
    _required,
    _session,
    app,
)  # fmt: skip


class Optimizer(str, Enum):
    sgd = "sgd"
    adam = "adam"


@app.command("fit")
def fit_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    steps: Annotated[int, typer.Option("--steps", min=0, help="Optimizer steps.")] = 100,
    lr: Annotated[float, typer.Option("--lr", min=0.0, help="Learning rate.")] = 0.01,
    momentum: Annotated[float, typer.Option("--momentum", min=0.0, help="SGD momentum.")] = 0.0,
    optimizer: Annotated[
        Optimizer, typer.Option("--optimizer", help="sgd or adam.")
    ] = Optimizer.sgd,
    every: Annotated[
        int, typer.Option("--every", min=0, help="Log a row every K steps (0: none).")
    ] = 0,
    format_: FormatOpt = Format.table,
    precision: PrecisionOpt = 6,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
) -> int:
    """Minimise the program's output over the --wrt variables; print the fitted values,
    the final loss and the loss curve. Exits 1 if the loss diverges (inf or nan).

    Example:

        agrad fit "mean((w*x+b-y)**2)" --wrt w,b --set x=[0,1,2,3] --set y=[1,3,5,7] \\
            --set w=0 --set b=0 --steps 500 --lr 0.05 --momentum 0.9
    """
    from ..lang.fit import fit
    from .render import fit as render

    if optimizer is Optimizer.adam and momentum:
        raise AgradValueError(
            "--momentum is for --optimizer sgd; Adam keeps its own moment "
            "estimates (betas 0.9, 0.999)"
        )
    session = _session(program, file, set_, _required(wrt), dtype, seed, max_elements)
    with render.Progress(steps, format_.value, every, precision) as progress:
        result = fit(session, steps, lr, momentum, optimizer.value, progress.update)
    render.fit_result(result, format_.value, precision)
    return int(ExitCode.CHECK_FAILED if result.diverged else ExitCode.OK)
