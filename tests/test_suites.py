"""`agrad check --suite` for CI: error cases beside the others, JUnit that CI systems read,
golden values that say what moved, several suites, and Ctrl-C.

Runs go through the CLI's boundary in-process (`cli`), stdout, stderr and the exit status
asserted separately. Expected numbers are derived by hand in the comments.
"""

from __future__ import annotations

import json
import os
import re
import socket
import xml.etree.ElementTree as ET

import pytest

LINREG = """[[case]]
name = "linreg"
program = "sum((w*x+b-y)**2)"
wrt = ["w", "b"]
set = { x = "[1,2]", y = "[5,7]", w = "1", b = "0" }
"""
# value 41, d/dw = -28, d/db = -18 (r = w*x + b - y = [-4, -5])
VECTOR = """[[case]]
name = "vector"
program = "x**2 + 3*x"
wrt = ["x"]
set = { x = "[0.5, -1.0, 2.0]" }
"""
# value [1.75, -2, 10]; Jacobian diag(2x + 3) = diag(4, 1, 7)
KINK = """[[case]]
name = "kink"
program = "sum(relu(x))"
wrt = ["x"]
strict = true
set = { x = "[1, 0]" }
"""
# relu'(0) is 0 in autograd, the one-sided derivatives at 0 are 0 and 1: a kink, which
# strict = true counts as a failure of element (1,).


@pytest.fixture(autouse=True)
def _not_in_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)  # CI=true would require golden values


def write(tmp_path, *cases: str, name: str = "s.toml", head: str = "") -> str:
    path = tmp_path / name
    path.write_text(head + "\n".join(cases))
    return str(path)


def case_lines(text: str) -> dict[str, int]:
    lines, header = {}, 0
    for n, row in enumerate(text.splitlines(), 1):
        if row.startswith("[[case]]"):
            header = n
        m = re.match(r'name = "(.*)"', row)
        if m:
            lines[m.group(1)] = header
    return lines


def run_json(cli, *argv: str) -> tuple[int, dict]:
    result = cli(["check", *argv, "--format", "json"])
    assert result.code in (0, 1), (result.code, result.err)
    assert result.err == ""
    return result.code, json.loads(result.out)


# ---- a case that cannot run is an error case; the others run -------------------------------

ERROR_CASES = {
    "syntax": ('program = "sum(x**"\nwrt = ["x"]\nset = { x = "1" }', ["line 1, column"]),
    "shape": ('program = "[1,2] + [1,2,3]*x"\nwrt = ["x"]\nset = { x = "1" }', ["(2,)", "(3,)"]),
    "empty program": ('program = ""\nwrt = ["x"]', ["empty"]),
    "unknown key": ('program = "x"\nwrt = ["x"]\nset = { x = "1" }\nwrtt = 1', ["'wrtt'"]),
    "no wrt": ('program = "x"\nset = { x = "1" }', ["wrt"]),
    "wrong type": ('program = "x"\nwrt = "x"\nset = { x = "1" }', ["list of names"]),
    "missing file": ('file = "nope.ag"\nwrt = ["x"]', ["cannot read", "no such file"]),
    "not UTF-8": ('file = "latin1.ag"\nwrt = ["x"]', ["not UTF-8", "line 1"]),
    "unknown name": ('program = "sum(q*x)"\nwrt = ["x"]\nset = { x = "1" }', ["name 'q'"]),
    "bad set file": ('program = "sum(x)"\nwrt = ["x"]\nset = { x = "@d.npz" }', ["zip"]),
    "fifo": ('file = "pipe.ag"\nwrt = ["x"]', ["not a regular file"]),
    "fifo as data": ('program = "sum(x)"\nwrt = ["x"]\nset = { x = "@pipe.csv" }', ["regular"]),
}


@pytest.mark.parametrize("which", list(ERROR_CASES))
def test_one_bad_case_is_an_error_case(cli, tmp_path, which):
    body, words = ERROR_CASES[which]
    (tmp_path / "latin1.ag").write_bytes("x # caf\xe9\n".encode("latin-1"))
    (tmp_path / "d.npz").write_bytes(b"PK\x03\x04 not a zip")
    os.mkfifo(tmp_path / "pipe.ag")  # would block a reader forever
    os.mkfifo(tmp_path / "pipe.csv")
    bad = f'[[case]]\nname = "bad"\n{body}\n'
    suite = write(tmp_path, LINREG, bad, VECTOR)
    lines = case_lines((tmp_path / "s.toml").read_text())
    code, report = run_json(cli, "--suite", suite, "--junit-xml", str(tmp_path / "j.xml"))
    assert code == 1 and report["ok"] is False
    outcomes = {c["name"]: c["outcome"] for c in report["cases"]}
    assert outcomes == {"linreg": "passed", "bad": "error", "vector": "passed"}
    (error,) = [c for c in report["cases"] if c["outcome"] == "error"]
    assert error["check"] is None and error["line"] == lines["bad"]
    assert error["error"].startswith(f"{suite}:{lines['bad']}: case 2 ('bad'): ")
    for word in words:
        assert word in error["error"], error["error"]
    assert "internal error" not in error["error"]
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.get("errors") == "1" and root.get("failures") == "0" and root.get("tests") == "3"
    (node,) = root.findall(".//testcase[@name='bad']")
    assert node.find("error") is not None and node.find("failure") is None
    assert words[0] in node.find("error").get("message")
    table = cli(["check", "--suite", suite])
    assert table.code == 1 and table.err == ""
    assert re.search(r"│\s*bad\s*│\s*ERROR", table.out)
    assert "suite FAILED: 1 of 3 case(s) could not run" in table.out


def test_error_case_keeps_its_caret(cli, tmp_path):
    suite = write(tmp_path, '[[case]]\nname = "s"\nprogram = "sum(x) +"\nwrt = ["x"]\n')
    table = cli(["check", "--suite", suite])
    assert table.code == 1
    assert "ERROR s: " in table.out and "sum(x) +\n        ^" in table.out


def test_duplicate_names_and_a_missing_name(cli, tmp_path):
    plain = 'program = "x"\nwrt = ["x"]\nset = { x = "1" }\n'
    suite = write(tmp_path, f'[[case]]\nname = "a"\n{plain}', f'[[case]]\nname = "a"\n{plain}',
                  f"[[case]]\n{plain}")  # fmt: skip
    code, report = run_json(cli, "--suite", suite)
    assert code == 1
    assert [c["outcome"] for c in report["cases"]] == ["passed", "error", "error"]
    assert "same name" in report["cases"][1]["error"]
    assert report["cases"][2]["name"] == "case 3" and "needs a name" in report["cases"][2]["error"]


UNREADABLE = {
    "invalid TOML": (b'[[case]]\nname = "a"\nwrt = [x]\n', ["not valid TOML", "line 3"]),
    "no cases": (b'[[cases]]\nname = "a"\n', ["unknown top-level key 'cases'"]),
    "empty": (b"", ["no [[case]] tables"]),
    "not UTF-8": ('name = "caf\xe9"\n'.encode("latin-1"), ["not UTF-8", "line 1"]),
    "bad golden table": (b"[golden]\nrtol = -1\n" + LINREG.encode(), ["rtol", ">= 0"]),
    "golden table typo": (b"[golden]\nrtoll = 1\n" + LINREG.encode(), ["'rtoll'"]),
}


@pytest.mark.parametrize("which", list(UNREADABLE))
def test_a_suite_that_cannot_be_read_exits_2(cli, tmp_path, which):
    content, words = UNREADABLE[which]
    (tmp_path / "s.toml").write_bytes(content)
    result = cli(["check", "--suite", str(tmp_path / "s.toml")])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and "Traceback" not in result.err
    for word in words:
        assert word in result.err, result.err


@pytest.mark.parametrize("target", ["missing", "folder", "fifo", "/dev/zero"])
def test_suite_paths_that_are_not_files_exit_2(cli, tmp_path, target):
    path = {"missing": str(tmp_path / "no.toml"), "folder": str(tmp_path)}.get(target, target)
    if target == "fifo":
        path = str(tmp_path / "f.toml")
        os.mkfifo(path)
    result = cli(["check", "--suite", path])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: --suite: cannot read")


# ---- JUnit --------------------------------------------------------------------------------


def test_junit_for_ci(cli, tmp_path):
    suite = write(tmp_path, LINREG, KINK)
    lines = case_lines((tmp_path / "s.toml").read_text())
    report = tmp_path / "reports" / "nested" / "x.xml"  # folders made as needed
    result = cli(["check", "--suite", suite, "--junit-xml", str(report)])
    assert result.code == 1 and result.err == ""
    root = ET.parse(report).getroot()
    (testsuite,) = root.findall("testsuite")
    assert testsuite.get("hostname") == socket.gethostname()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", testsuite.get("timestamp"))
    assert testsuite.get("tests") == "2" and testsuite.get("failures") == "1"
    cases = {c.get("name"): c for c in testsuite.findall("testcase")}
    for name, node in cases.items():
        assert node.get("file") == suite and node.get("line") == str(lines[name])
    failure = cases["kink"].find("failure")
    assert failure.get("type") == "GradientMismatch"
    text = failure.text
    # the variable, the element, its verdict and the numbers: autograd 0 at the kink
    assert "x: 1 of 2 elements differ" in text
    assert re.search(
        r"x at \(1,\): autograd 0, finite differences \S+, abs error \S+ beyond tolerance "
        r"\S+ \(fail",
        text,
    ), text
    assert cases["linreg"].find("failure") is None and cases["linreg"].find("error") is None


# ---- golden values ------------------------------------------------------------------------


def test_golden_regression_says_what_moved(cli, tmp_path):
    suite = write(tmp_path, LINREG, VECTOR)
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    recorded = json.loads((tmp_path / "s.golden.json").read_text())
    assert recorded["linreg"] == {"value": 41, "grads": {"w": -28, "b": -18}}
    assert recorded["vector"]["jacobian"]["x"] == [[4, 0, 0], [0, 1, 0], [0, 0, 7]]
    # x**2 + 3*x -> x**2 + 3.5*x: the output moves by 0.5 x, most at x = 2 (10 -> 11);
    # the Jacobian's diagonal by 0.5 everywhere, first at (0, 0) (4 -> 4.5)
    write(tmp_path, LINREG, VECTOR.replace("3*x", "3.5*x"))
    code, report = run_json(cli, "--suite", suite)
    assert code == 1
    vector = report["cases"][1]
    assert vector["golden"] == "regression" and vector["check"]["ok"] is True
    message = vector["message"]
    assert "the output changed at 3 of 3 element(s); the most at (2,): from 10 to 11" in message
    assert "the Jacobian of x changed at 3 of 9 element(s)" in message
    assert "from 4 to 4.5" in message and "atol 1e-09 + rtol 1e-07" in message
    assert vector["golden_max_abs_error"] == pytest.approx(1.0)
    # the gradient of a scalar output: which variable
    write(tmp_path, LINREG.replace('w = "1"', 'w = "1.5"'), VECTOR)
    code, report = run_json(cli, "--suite", suite)
    message = report["cases"][0]["message"]
    # w = 1.5: r = [-3.5, -4], loss 28.25, d/dw = 2(-3.5 - 8) = -23, d/db = -15
    assert "the output changed from 41 to 28.25" in message
    assert "the gradient of w changed from -28 to -23" in message
    assert "the gradient of b changed from -18 to -15" in message


def test_golden_tolerance_per_suite_and_per_case(cli, tmp_path):
    suite = write(tmp_path, LINREG)
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    moved = LINREG.replace('w = "1"', 'w = "1.000001"')  # the loss moves by about 2.8e-5
    write(tmp_path, moved)
    assert run_json(cli, "--suite", suite)[0] == 1  # rtol 1e-7 by default
    write(tmp_path, moved, head="[golden]\nrtol = 1e-5\n\n")
    assert run_json(cli, "--suite", suite)[0] == 0  # the suite's tolerance
    write(tmp_path, moved + "golden = { rtol = 1e-9 }\n", head="[golden]\nrtol = 1e-5\n\n")
    code, report = run_json(cli, "--suite", suite)  # the case's own is tighter again
    assert code == 1 and "rtol 1e-09" in report["cases"][0]["message"]
    write(tmp_path, moved + "golden = false\n")
    code, report = run_json(cli, "--suite", suite)
    assert code == 0 and report["cases"][0]["golden"] == "off"


FLOAT32 = """[[case]]
name = "layer32"
program = "PROGRAM"
dtype = "float32"
wrt = ["v"]
set = { A = "randn(200, 300)", u = "randn(200)", v = "randn(300)" }
"""


def test_float32_golden_values_allow_a_summation_orders_rounding(cli, tmp_path):
    # sum(u * tanh(A @ v)) and dot(u, tanh(A @ v)) are the same function; in float32 they
    # round differently (QA round 27: flagged at float64's rtol 1e-7, one float32 ulp)
    suite = write(tmp_path, FLOAT32.replace("PROGRAM", "sum(u * tanh(A @ v))"))
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    write(tmp_path, FLOAT32.replace("PROGRAM", "dot(u, tanh(A @ v))"))
    code, report = run_json(cli, "--suite", suite)
    assert code == 0 and report["cases"][0]["golden"] == "match", report["cases"][0]
    # ... but a real drift, 1e-4 of the output, is still seen
    write(tmp_path, FLOAT32.replace("PROGRAM", "1.0001 * sum(u * tanh(A @ v))"))
    code, report = run_json(cli, "--suite", suite)
    assert code == 1 and report["cases"][0]["golden"] == "regression"


NEAR_ZERO = """[[case]]
name = "at its minimum"
program = "sum((x - c)**2) + 1e6"
wrt = ["x"]
set = { x = "[1.0, 2.0]", c = "CENTRE" }
ATOL"""


@pytest.mark.parametrize(("atol", "code"), [("", 1), ("atol = 1e-5\n", 0)])
def test_a_cases_own_atol_is_its_golden_atol_too(cli, tmp_path, atol, code):
    # at the minimum the gradient is 2(x - c) = 0; moving c by 1e-8 moves it by 2e-8 —
    # a regression at the default atol 1e-9, noise for a case that says its gradient is
    # compared to 1e-5, a hundredth of which is its golden atol (QA round 27: a
    # least-squares gradient at its fit)
    suite = write(tmp_path, NEAR_ZERO.replace("CENTRE", "[1.0, 2.0]").replace("ATOL", atol))
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    moved = NEAR_ZERO.replace("CENTRE", "[1.00000001, 2.0]").replace("ATOL", atol)
    write(tmp_path, moved)
    assert run_json(cli, "--suite", suite)[0] == code


DRIFTS = {  # (QA round 29: both matched, with a row allowance of 1e-10 and a golden atol
    # equal to the case's own)
    "a small element beside a large one": (
        'program = "sum(w*x**2)"\nwrt = ["x"]\nset = { x = "[1.0, 1.0]", w = "[1e8, W]" }\n',
        "1e-2", "1.9e-2"),  # its gradient 0.02 -> 0.038
    "an element near the case's atol": (
        'program = "sum(v*y**3)"\nwrt = ["y"]\nset = { y = "[1.0, 2.0]", v = "[1.0, W]" }\n'
        "atol = 1e-3\n", "1e-4", "1.5e-4"),  # its gradient 1.2e-3 -> 1.8e-3
}  # fmt: skip


@pytest.mark.parametrize("name", list(DRIFTS))
def test_a_real_drift_of_a_small_element_is_a_regression(cli, tmp_path, name):
    body, before, after = DRIFTS[name]
    suite = write(tmp_path, '[[case]]\nname = "c"\n' + body.replace("W", before))
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    write(tmp_path, '[[case]]\nname = "c"\n' + body.replace("W", after))
    code, report = run_json(cli, "--suite", suite)
    assert code == 1 and report["cases"][0]["golden"] == "regression", report["cases"][0]


@pytest.mark.parametrize("table", ["rtol = inf", "atol = inf", "rtol = 1e-5\natol = inf"])
def test_an_infinite_golden_tolerance_is_refused(cli, tmp_path, table):
    # (it would let any drift pass, silently: QA round 21)
    suite = write(tmp_path, LINREG, head=f"[golden]\n{table}\n\n")
    result = cli(["check", "--suite", suite])
    assert result.code == 2
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "= inf" in lines[0]
    assert "golden = false" in lines[0]


def test_require_golden_and_ci(cli, tmp_path, monkeypatch):
    suite = write(tmp_path, LINREG)
    assert run_json(cli, "--suite", suite)[1]["cases"][0]["golden"] == "missing"  # exit 0
    code, report = run_json(cli, "--suite", suite, "--require-golden")
    assert code == 1
    message = report["cases"][0]["message"]
    assert (
        "no golden values" in message and f"agrad check --suite {suite} --update-golden" in message
    )
    monkeypatch.setenv("CI", "true")
    assert run_json(cli, "--suite", suite)[0] == 1
    assert run_json(cli, "--suite", suite, "--no-require-golden")[0] == 0
    junit = tmp_path / "j.xml"
    cli(["check", "--suite", suite, "--junit-xml", str(junit)])
    assert ET.parse(junit).find(".//failure").get("type") == "MissingGolden"
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    assert run_json(cli, "--suite", suite)[0] == 0


@pytest.mark.parametrize(
    "entry, words",
    [
        (5, ["golden entry is int"]),
        ({"value": "forty-one", "grads": {}}, ["not numbers"]),
        ({"value": 41, "grads": [1, 2]}, ["'grads' is list"]),
        ({"value": 41, "grads": {"w": {"a": 1}, "b": -18}}, ["the gradient of w", "not numbers"]),
    ],
)
def test_golden_entries_of_the_wrong_type(cli, tmp_path, entry, words):
    suite = write(tmp_path, LINREG, VECTOR)
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    recorded = json.loads((tmp_path / "s.golden.json").read_text())
    (tmp_path / "s.golden.json").write_text(json.dumps({**recorded, "linreg": entry}))
    code, report = run_json(cli, "--suite", suite)
    assert code == 1
    linreg, vector = report["cases"]
    assert linreg["outcome"] == "error" and vector["golden"] == "match"
    for word in words:
        assert word in linreg["error"], linreg["error"]
    assert "--update-golden" in linreg["error"]


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe", b"[" * 100_000])
def test_a_damaged_golden_file(cli, tmp_path, content):
    suite = write(tmp_path, LINREG)
    (tmp_path / "s.golden.json").write_bytes(content)
    result = cli(["check", "--suite", suite])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and "--update-golden" in result.err
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0  # rewrites it
    assert json.loads((tmp_path / "s.golden.json").read_text())["linreg"]["value"] == 41


def test_update_golden_keeps_the_entry_of_a_case_that_errs(cli, tmp_path):
    suite = write(tmp_path, LINREG, VECTOR)
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    before = json.loads((tmp_path / "s.golden.json").read_text())
    write(tmp_path, LINREG, VECTOR.replace("x**2", "x**2)"))  # vector now fails to parse
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 1
    assert json.loads((tmp_path / "s.golden.json").read_text()) == before


# ---- several suites -----------------------------------------------------------------------


def test_several_suites_all_run(cli, tmp_path):
    first = write(tmp_path, LINREG, name="a.toml")
    second = write(tmp_path, VECTOR, KINK, name="b.toml")
    junit = tmp_path / "j.xml"
    code, report = run_json(cli, "--suite", first, "--suite", second, "--junit-xml", str(junit))
    assert code == 1  # the kink case fails
    assert [(s["path"], s["cases"], s["ok"]) for s in report["suites"]] == [
        (first, 1, True),
        (second, 2, False),
    ]
    assert [(c["suite"], c["name"]) for c in report["cases"]] == [
        (first, "linreg"), (second, "vector"), (second, "kink"),
    ]  # fmt: skip
    assert [s.get("name") for s in ET.parse(junit).getroot().findall("testsuite")] == ["a", "b"]
    assert cli(["check", "--suite", first, "--suite", second, "--update-golden"]).code == 1
    assert (tmp_path / "a.golden.json").exists() and (tmp_path / "b.golden.json").exists()
    table = cli(["check", "--suite", first, "--suite", second])
    assert "suite FAILED: 1 of 3 case(s) failed in 2 suites" in table.out
    # one unreadable suite among them: nothing runs
    (tmp_path / "c.toml").write_text("[[case]\n")
    result = cli(["check", "--suite", first, "--suite", str(tmp_path / "c.toml")])
    assert result.code == 2 and result.out == ""


# ---- Ctrl-C during a suite ----------------------------------------------------------------


def test_ctrl_c_reports_the_cases_done(cli, tmp_path, monkeypatch):
    from agrad.check import suite as suite_module

    real = suite_module.check

    def interrupted_on_vector(session, options, expect):
        if session.program.source.startswith("x**2"):
            raise KeyboardInterrupt
        return real(session, options, expect)

    monkeypatch.setattr(suite_module, "check", interrupted_on_vector)
    suite = write(tmp_path, LINREG, VECTOR, KINK)
    junit = tmp_path / "j.xml"
    result = cli(["check", "--suite", suite, "--update-golden", "--junit-xml", str(junit)])
    assert result.code == 130
    assert result.err.startswith("error: interrupted at 'vector': 1 of 3 case(s) done")
    assert re.search(r"│\s*linreg\s*│\s*ok", result.out) and "kink" not in result.out
    assert not junit.exists() and not (tmp_path / "s.golden.json").exists()
    # nothing says the values were recorded, or that the suite passed (QA round 27)
    assert "updated" not in result.out and "not written" in result.out, result.out
    assert "suite passed" not in result.out and "suite interrupted" in result.out
    as_json = cli(["check", "--suite", suite, "--update-golden", "--format", "json"])
    cases = json.loads(as_json.out)["cases"]
    assert as_json.code == 130 and [c["golden"] for c in cases] == ["not written"]


def test_names_are_printed_as_written_not_as_emoji_or_markup(cli, tmp_path):
    # A case name is the user's text: rich must neither turn ':smile:' into an emoji nor
    # '[bold]' into style, in the table or in the error line (both did print '😄').
    name = "fit :smile: [bold]x[/bold] :+1:"
    body = '[[case]]\nname = "{}"\nprogram = "sum(x**2)"\nset = ["x=[1,2]"]\nwrt = ["x"]\n'
    result = cli(["check", "--suite", write(tmp_path, body.format(name))])
    assert result.code == 1
    assert ":smile:" in result.out and ":+1:" in result.out and "[bold]x[/bold]" in result.out
    assert "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in result.out
    assert "\N{THUMBS UP SIGN}" not in result.out
