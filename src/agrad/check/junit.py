"""JUnit XML for CI systems: one <testcase> per suite case, failures with details."""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from .suite import SuiteResult


def to_xml(result: SuiteResult) -> ET.Element:
    failures = sum(not c.ok for c in result.cases)
    root = ET.Element(
        "testsuites",
        tests=str(len(result.cases)),
        failures=str(failures),
        time=f"{result.seconds:.3f}",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=Path(result.path).stem,
        tests=str(len(result.cases)),
        failures=str(failures),
        errors="0",
        time=f"{result.seconds:.3f}",
    )
    for case in result.cases:
        node = ET.SubElement(
            suite,
            "testcase",
            name=case.name,
            classname=Path(result.path).stem,
            time=f"{case.seconds:.3f}",
        )
        if not case.ok:
            text = _details(case)
            failure = ET.SubElement(
                node,
                "failure",
                message=text.splitlines()[0],
                type="GradientMismatch" if case.golden != "regression" else "GoldenRegression",
            )
            failure.text = text
    return root


def _details(case) -> str:
    lines = []
    if case.report is not None:
        for name, var in case.report.variables.items():
            if not var.ok:
                if var.failures:
                    lines.append(
                        f"{name}: {var.failures} of {var.compared} elements differ "
                        f"from finite differences, max abs error "
                        f"{var.max_abs_error:.3g}"
                    )
                if var.expect is not None and not var.expect.ok:
                    lines.append(f"{name}: expect {var.expect.formula!r}: {var.expect.verdict()}")
    if case.golden == "regression":
        lines.append(case.message or "golden values changed")
    return "\n".join(lines) or "failed"


def write(result: SuiteResult, path: str) -> None:
    """Write atomically (a temp file, then rename)."""
    tree = ET.ElementTree(to_xml(result))
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=target.name, suffix=".tmp")
    os.close(fd)
    try:
        tree.write(tmp, encoding="utf-8", xml_declaration=True)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
