"""`agrad fit`: minimise the output with SGD (momentum) or Adam, and show the curve."""

from __future__ import annotations

import math
import time
from enum import Enum
from typing import Annotated

from ..errors import AgradInterrupted, AgradLimitError, AgradValueError
from . import ExitCode
from .app import (
    Dtype,
    DtypeOpt,
    FileOpt,
    Format,
    FormatOpt,
    LimitOpt,
    MaxOutputOpt,
    Nonfinite,
    NonfiniteOpt,
    PrecisionOpt,
    ProgramArg,
    SeedOpt,
    SetOpt,
    WrtOpt,
    _session,
    default_wrt,
    output_options,
)  # fmt: skip
from .options import Option, command

TIME_BUDGET = 600.0  # seconds a fit may be estimated to take before it is refused


class Optimizer(str, Enum):
    sgd = "sgd"
    adam = "adam"


@command("fit")
def fit_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    steps: Annotated[int, Option("--steps", min=0, help="Optimizer steps.")] = 100,
    lr: Annotated[float, Option("--lr", min=0.0, help="Learning rate.")] = 0.01,
    momentum: Annotated[float, Option("--momentum", min=0.0, help="SGD momentum.")] = 0.0,
    optimizer: Annotated[Optimizer, Option("--optimizer", help="sgd or adam.")] = Optimizer.sgd,
    every: Annotated[int, Option("--every", min=0, help="Log a row every K steps (0: none).")] = 0,
    max_seconds: Annotated[
        float,
        Option(
            "--max-seconds",
            min=0.0,
            help="Refuse a run estimated (from its first steps) to take longer than this.",
        ),
    ] = TIME_BUDGET,
    format_: FormatOpt = Format.table,
    precision: PrecisionOpt = 6,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
    nonfinite: NonfiniteOpt = Nonfinite.string,
    max_output: MaxOutputOpt = 10**7,
) -> int:
    """Minimise the program's output over the --wrt variables; print the fitted values,
    the final loss and the loss curve. Exits 1 if the loss diverges (inf or nan).

    Example:

    \b
        agrad fit 'mean((w*x+b-y)**2)' --wrt w,b --set 'x=[0,1,2,3]' --set 'y=[1,3,5,7]' \\
            --set 'w=0' --set 'b=0' --steps 500 --lr 0.05 --momentum 0.9

    fits the line y = 2x + 1: it prints w 2 and b 1.
    """
    from ..lang.fit import FitResult, fit
    from .interrupts import reporting_interrupts
    from .render import fit as render

    output_options(nonfinite, max_output)
    for name, value in (("--lr", lr), ("--momentum", momentum)):
        if not math.isfinite(value):  # (nan passes a range check: nan < 0 is false)
            raise AgradValueError(f"{name} must be a finite number >= 0, got {value}")
    if math.isnan(max_seconds):
        raise AgradValueError("--max-seconds must be a number of seconds, got nan")
    if optimizer is Optimizer.adam and momentum:
        raise AgradValueError(
            "--momentum is for --optimizer sgd; Adam keeps its own moment "
            "estimates (betas 0.9, 0.999)"
        )
    session = _session(program, file, set_, wrt, dtype, seed, max_elements)
    default_wrt(session, "fit")
    with render.Progress(steps, format_.value, every, precision) as progress:
        on_step = _Budget(progress.update, steps, max_seconds)
        try:
            with reporting_interrupts():
                result = fit(session, steps, lr, momentum, optimizer.value, on_step)
        except KeyboardInterrupt:
            result = None
    if result is not None:
        render.fit_result(result, format_.value, precision)
        return int(ExitCode.CHECK_FAILED if result.diverged else ExitCode.OK)
    if not progress.history:
        raise AgradInterrupted("interrupted before the first step")
    done = len(progress.history) - 1
    partial = FitResult(progress.values, progress.history[-1], progress.history, done)
    render.fit_result(partial, format_.value, precision, interrupted=True)
    raise AgradInterrupted(
        f"interrupted at step {done} of {steps}; the values shown are the state reached so far"
    )


class _Budget:
    """The step callback, which also refuses a run whose first steps say it would take
    longer than the budget: a step costs about what the first ones cost."""

    def __init__(self, on_step, steps: int, budget: float) -> None:
        self.on_step, self.steps, self.budget = on_step, steps, budget
        self.started = time.perf_counter()

    def __call__(self, step: int, loss: float, values) -> None:
        self.on_step(step, loss, values)
        if step in (2, 20):  # after the first steps (step 0 includes one-time set-up)
            per_step = (time.perf_counter() - self.started) / step
            estimate = per_step * self.steps
            if estimate > self.budget:
                raise AgradLimitError(
                    f"fit: {self.steps:,} steps would take about {_duration(estimate)} "
                    f"({per_step * 1e3:.3g} ms a step), more than the budget of "
                    f"{_duration(self.budget)}; use fewer --steps, or raise the budget with "
                    "--max-seconds"
                )


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"
