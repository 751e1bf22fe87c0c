"""`agrad check --suite`: run one or more TOML suites, keep their golden values, report.

Every suite file is read first (one that cannot be read at all is the command's
error, exit 2); then each case runs, a case that cannot run being reported as an
error case among the others; golden files and the JUnit report are written
before anything is printed, so that a write that fails (a full or read-only
disk) leaves stdout empty and the exit status 2.
"""

from __future__ import annotations

import os
from typing import Annotated

from ..errors import AgradInterrupted, AgradValueError
from . import ExitCode
from .options import Option

SuiteOpt = Annotated[
    list[str] | None,
    Option(
        "--suite",
        metavar="FILE.toml",
        help="Run the cases of a TOML suite instead of one program (repeatable).",
    ),
]
UpdateGoldenOpt = Annotated[
    bool,
    Option("--update-golden", help="With --suite: rewrite the golden values beside each suite."),
]
RequireGoldenOpt = Annotated[
    bool | None,
    Option(
        "--require-golden/--no-require-golden",
        help="With --suite: fail a case that has no golden values (default: on when the "
        "environment says CI=true).",
        show_default=False,
    ),
]
JunitOpt = Annotated[
    str | None,
    Option("--junit-xml", metavar="PATH", help="With --suite: also write a JUnit XML report."),
]
AllowOutsideOpt = Annotated[
    bool,
    Option(
        "--allow-outside",
        help="With --suite: let a suite read files outside its own folder (and hidden ones).",
    ),
]


def in_ci() -> bool:
    """CI=true (GitHub Actions, GitLab CI and most others set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def run(
    paths: list[str],
    update_golden: bool,
    require_golden: bool | None,
    junit_xml: str | None,
    allow_outside: bool,
    fmt: str,
    precision: int,
) -> int:
    from ..check import golden, junit
    from ..check.suite import load, run_suite, updated_golden
    from .interrupts import reporting_interrupts
    from .render.suite import suite_report

    required = in_ci() if require_golden is None else require_golden
    paths = list(dict.fromkeys(paths))  # the same suite named twice runs once
    suites = [load(path) for path in paths]
    golden_paths = [golden.golden_file(path) for path in paths]
    if len({os.path.realpath(p) for p in golden_paths}) < len(golden_paths):
        raise AgradValueError("--suite: two suites share one golden file; rename one of them")
    recorded = [_recorded(p, update_golden) for p in golden_paths]
    results = []
    stopped = ""
    with reporting_interrupts():
        try:
            for suite, values in zip(suites, recorded, strict=True):
                results.append(run_suite(suite, update_golden, required, allow_outside, values))
                stopped = results[-1].interrupted
                if stopped:
                    break
        except KeyboardInterrupt:  # between two cases
            stopped = stopped or "between cases"
    if stopped:
        for case in (c for r in results for c in r.cases):
            if case.golden == "updated":  # (nothing is written: the file keeps what it had)
                case.golden = "not written"
        suite_report(results, fmt, precision)
        done = sum(len(r.cases) for r in results)
        total = sum(len(s.cases) for s in suites)
        raise AgradInterrupted(
            f"interrupted at {stopped!r}: {done} of {total} case(s) done, shown above; no "
            "golden values or JUnit report were written"
        )
    protected = [*paths, *map(str, golden_paths)]
    if update_golden:
        for path, values, result in zip(golden_paths, recorded, results, strict=True):
            golden.write(path, updated_golden(values, result), protected=paths)
    if junit_xml:
        junit.write(results, junit_xml, protected)
    suite_report(results, fmt, precision)
    if any(case.internal for r in results for case in r.cases):
        return int(ExitCode.INTERNAL)  # reported among the cases; the others ran
    return int(ExitCode.OK if all(r.ok for r in results) else ExitCode.CHECK_FAILED)


def _recorded(path, update_golden: bool) -> dict:
    """The recorded golden values; when they are about to be rewritten, a damaged file is
    no obstacle (its cases simply have nothing to keep)."""
    from ..check import golden
    from ..errors import AgradError

    try:
        return golden.read(path)
    except AgradError:
        if update_golden:
            return {}
        raise
