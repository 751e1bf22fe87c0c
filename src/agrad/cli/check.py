"""`agrad check`: gradients against finite differences, hand-derived formulas, CI suites."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from ..errors import AgradNameError, AgradValueError
from . import ExitCode, suites
from .app import (
    Dtype,
    DtypeOpt,
    FileOpt,
    Format,
    FormatOpt,
    LimitOpt,
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


class Method(str, Enum):
    auto = "auto"
    complex = "complex"
    ridders = "ridders"
    central = "central"
    forward = "forward"
    richardson = "richardson"
    taylor = "taylor"


@command("check")
def check_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    eps: Annotated[
        float | None,
        Option(
            "--eps",
            help="Force one finite-difference step, times max(1, |x|) (default: each "
            "element's own step, chosen adaptively).",
        ),
    ] = None,
    atol: Annotated[
        float | None,
        Option(
            "--atol",
            help=(
                "Absolute tolerance (default: relative to each output's largest derivative, "
                "4 ulps of it in float64, 1e-5 in float32; see the README's Tolerances)."
            ),
        ),
    ] = None,
    rtol: Annotated[
        float | None,
        Option("--rtol", help="Relative tolerance (default 1e-5 for float64, 1e-4 for float32)."),
    ] = None,
    order: Annotated[
        int,
        Option(
            "--order",
            min=1,
            max=2,
            help="1: gradients; 2: the Hessian against differences of the gradient.",
        ),
    ] = 1,
    method: Annotated[
        Method,
        Option(
            "--method",
            help="auto: the complex step where every op is analytic, else adaptive steps; "
            "complex, ridders: only those; central, forward, richardson: one step (--eps); "
            "taylor: the Taylor remainder's convergence rate.",
        ),
    ] = Method.auto,
    fast: Annotated[
        bool,
        Option(
            "--fast",
            help="Random-direction projections: a few "
            "evaluations instead of two per input element.",
        ),
    ] = False,
    strict: Annotated[
        bool, Option("--strict", help="Count non-differentiable points (kinks) as failures.")
    ] = False,
    allow_undecided: Annotated[
        bool,
        Option(
            "--allow-undecided",
            help="Pass although some elements are undecided (no finite difference can "
            "decide them: overflow, a kink closer than any step, noise).",
        ),
    ] = False,
    all_elements: Annotated[
        bool,
        Option("--all", help="JSON and CSV: every compared element, not only the worst."),
    ] = False,
    max_seconds: Annotated[
        float,
        Option(
            "--max-seconds",
            min=0.0,
            help="Refuse a check estimated (from a first block of evaluations) to take longer.",
        ),
    ] = 600.0,
    directions: Annotated[
        int,
        Option("--directions", min=1, help="Random directions per variable (--fast, taylor)."),
    ] = 3,
    expect: Annotated[
        list[str] | None,
        Option(
            "--expect",
            metavar="NAME=FORMULA",
            help='A hand-derived gradient to compare, e.g. w="2*sum((w*x+b-y)*x)". Repeatable.',
        ),
    ] = None,
    python: Annotated[
        str | None,
        Option(
            "--python",
            metavar="FILE.py:NAME",
            help="Check a Python function of yours instead of a program (this runs your "
            "code): written with 'import agrad as torch' (autograd), NumPy (with --grad), "
            "or PyTorch. Its parameters are bound by name with --set.",
        ),
    ] = None,
    grad: Annotated[
        str | None,
        Option(
            "--grad",
            metavar="FILE.py:NAME",
            help="With --python: a hand-written gradient, called like the function, "
            "returning one array per --wrt parameter (a Jacobian block for a non-scalar "
            "output).",
        ),
    ] = None,
    grad_output: Annotated[
        str | None,
        Option(
            "--grad-output",
            metavar="VALUE",
            help="With --python and a non-scalar output: check the vector-Jacobian product "
            "with this cotangent instead of the whole Jacobian.",
        ),
    ] = None,
    suite: suites.SuiteOpt = None,
    update_golden: suites.UpdateGoldenOpt = False,
    require_golden: suites.RequireGoldenOpt = None,
    junit_xml: suites.JunitOpt = None,
    allow_outside: suites.AllowOutsideOpt = False,
    format_: FormatOpt = Format.table,
    precision: PrecisionOpt = 6,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
    nonfinite: NonfiniteOpt = Nonfinite.string,
) -> int:
    """Check gradients against finite differences; exit 1 if any disagree.

    Example:

    \b
        agrad check 'sum((w*x+b-y)**2)' --wrt w,b --set 'x=[1,2]' --set 'y=[5,7]' \\
            --set 'w=1' --set 'b=0' --expect 'w=2*sum((w*x+b-y)*x)'

    compares autograd, numeric derivatives and the hand-derived formula: it prints
    "check passed". Each element is pass, fail, kink or undecided; a failure says why
    (rule, step, precision, kink).

    With --suite FILE.toml (repeatable) it runs a suite's cases instead: a summary
    table, golden values beside each suite, --junit-xml for CI.
    """
    from ..check.checker import CheckOptions, check
    from . import render

    output_options(nonfinite)
    if suite:
        given = [flag for flag, value in (("--set", set_), ("--wrt", wrt), ("--expect", expect))
                 if value]  # fmt: skip
        if given:
            raise AgradValueError(
                f"{given[0]} goes with a PROGRAM; a suite's cases carry their "
                "own set, wrt and expect tables"
            )
        return _run_suite(
            suite, program, file, update_golden, require_golden, junit_xml, allow_outside,
            format_, precision,
        )  # fmt: skip
    if update_golden or junit_xml or require_golden or allow_outside:
        raise AgradValueError(
            "--update-golden, --require-golden, --junit-xml and --allow-outside go with "
            "--suite FILE.toml"
        )
    options = CheckOptions(
        eps=eps,
        atol=atol,
        rtol=rtol,
        method=method.value,
        fast=fast,
        directions=directions,
        order=order,
        strict=strict,
        allow_undecided=allow_undecided,
        seed=seed,
        max_seconds=max_seconds,
        wording="cli",
    )
    if python is not None or grad is not None or grad_output is not None:
        from .check_python import check_python

        report = check_python(program, file, python, grad, grad_output, set_, wrt, expect,
                              options, dtype.value, seed, max_elements)  # fmt: skip
        render.check_report(report, format_.value, precision, all_elements)
        return int(ExitCode.OK if report.ok else ExitCode.CHECK_FAILED)
    formulas = dict(_split_expect(e) for e in expect or [])
    session = _session(program, file, set_, wrt, dtype, seed, max_elements)
    _add_expect_names(session, formulas)
    default_wrt(session, "check")
    report = check(session, options, formulas)
    render.check_report(report, format_.value, precision, all_elements)
    return int(ExitCode.OK if report.ok else ExitCode.CHECK_FAILED)


def _add_expect_names(session, formulas: dict[str, str]) -> None:
    """Check the variables that --expect names (so the error names --expect) and add them."""
    import difflib

    known = session.program.variables
    for name in formulas:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise AgradNameError(f"--expect {name}: the program has no variable {name!r}{hint}")
    session.wrt = list(dict.fromkeys([*session.wrt, *formulas]))


def _split_expect(option: str) -> tuple[str, str]:
    name, sep, formula = option.partition("=")
    if not sep or not name.strip() or not formula.strip():
        raise AgradValueError(
            f'--expect {option!r}: expected NAME=FORMULA, e.g. --expect w="2*sum((w*x+b-y)*x)"'
        )
    return name.strip(), formula.strip()


def _run_suite(
    paths, program, file, update_golden, require_golden, junit_xml, allow_outside, format_,
    precision,
) -> int:  # fmt: skip
    if program is not None or file is not None:
        raise AgradValueError(
            "--suite runs the suite's own programs; drop the PROGRAM argument and --file"
        )
    return suites.run(
        paths, update_golden, require_golden, junit_xml, allow_outside, format_.value, precision
    )
