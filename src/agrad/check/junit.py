"""JUnit XML for CI systems: one <testsuite> per suite file, one <testcase> per case.

A failed case carries a <failure> whose text names the variable, the elements
and the numbers (or the golden value that moved); a case that could not run
carries an <error>, as pytest writes a collection error. Every test case has the
``file`` and ``line`` of its [[case]] table; every suite its ``timestamp`` and
``hostname``.
"""

from __future__ import annotations

import socket
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from ..files import write_output
from ..lang.diagnostics import printable
from .labels import index_label
from .suite import CaseResult, SuiteResult


def to_xml(results: list[SuiteResult]) -> ET.Element:
    cases = [c for r in results for c in r.cases]
    root = ET.Element(
        "testsuites",
        name="agrad check",
        tests=str(len(cases)),
        failures=str(sum(c.outcome == "failed" for c in cases)),
        errors=str(sum(c.outcome == "error" for c in cases)),
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    host = socket.gethostname()
    for result in results:
        name = Path(result.path).stem
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(result.started or time.time()))
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml(name),
            file=_xml(result.path),
            tests=str(len(result.cases)),
            failures=str(sum(c.outcome == "failed" for c in result.cases)),
            errors=str(sum(c.outcome == "error" for c in result.cases)),
            skipped="0",
            time=f"{result.seconds:.3f}",
            timestamp=stamp,
            hostname=host,
        )
        for case in result.cases:
            node = ET.SubElement(
                suite,
                "testcase",
                classname=_xml(name),
                name=_xml(case.name),
                file=_xml(result.path),
                line=str(case.line),
                time=f"{case.seconds:.3f}",
            )
            if case.outcome == "error":
                text = case.error + (f"\n{case.snippet}" if case.snippet else "")
                error = ET.SubElement(node, "error", message=_xml(case.error), type="CaseError")
                error.text = _xml(text)
            elif case.outcome == "failed":
                text = details(case)
                kind = "GoldenRegression" if case.golden == "regression" else "MissingGolden"
                if case.report is not None and not case.report.ok:
                    kind = "GradientMismatch"
                first = _xml(text.splitlines()[0])
                failure = ET.SubElement(node, "failure", message=first, type=kind)
                failure.text = _xml(text)
    return root


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: control characters (which it cannot) written as escapes."""
    return "\n".join(printable(line) for line in text.split("\n"))


def details(case: CaseResult) -> str:
    """What failed, in words and numbers: each failing variable's worst elements (with
    their verdicts), the checker's diagnosis, a formula that disagrees, a golden value
    that moved."""
    lines: list[str] = []
    report = case.report
    if report is not None:
        for name, var in report.variables.items():
            if var.ok:
                continue
            if var.failures or var.undecided:
                counts = [f"{var.failures} of {var.compared} elements differ from finite "
                          "differences"] if var.failures else []  # fmt: skip
                if var.undecided:
                    counts.append(f"{var.undecided} undecided")
                lines.append(f"{name}: {', '.join(counts)}; the worst:")
                for e in var.worst:
                    if e.verdict == "pass":
                        continue
                    where = f"{name} at {index_label(e.input_index)}"
                    if e.output_index:
                        where += f", output {index_label(e.output_index)}"
                    why = f"{e.verdict}: {e.reason}" if e.reason else e.verdict
                    lines.append(
                        f"  {where}: autograd {e.analytic:.10g}, finite differences "
                        f"{e.numeric:.10g}, abs error {e.abs_error:.3g} beyond tolerance "
                        f"{e.tolerance:.3g} ({why})"
                    )
                if var.diagnosis is not None:
                    lines.append(f"  {var.diagnosis.message}")
            if var.expect is not None and not var.expect.ok:
                lines.append(f"{name}: expect {var.expect.formula!r}: {var.expect.verdict()}")
    if case.message:
        lines.append(f"golden: {case.message}" if case.golden == "regression" else case.message)
    return "\n".join(lines) or "failed"


def write(results: list[SuiteResult], path: str, protected: list[str]) -> None:
    """Write the report (see agrad.files: atomic over a regular file, refusing the suite)."""
    tree = ET.ElementTree(to_xml(results))
    ET.indent(tree)
    text = '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(tree.getroot(), "unicode")
    write_output(path, text + "\n", "--junit-xml", protected=protected, make_parents=True)
