"""Files a suite may read, files agrad writes, what error messages may show, and the parser
cache: the attacks of issue 14, each as a class.

- A suite reads only files beside it (``file =`` and ``@file`` in ``set``), never a hidden
  one, unless --allow-outside; a secret outside never reaches stdout, stderr or JUnit.
- --junit-xml and the golden writer replace regular files atomically (keeping their mode),
  write through pipes and character devices, refuse links, folders and the suite itself,
  fail cleanly on a full or read-only disk, and clean up after a killed run.
- Terminal escapes in a program, a file name or a case name are shown escaped.
- An edited parser cache is detected and rebuilt.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SECRET = "SECRET_TOKEN_7f3a"


@pytest.fixture(autouse=True)
def _not_in_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def tree(tmp_path):
    """tmp/outside.ag (a secret), tmp/suite/ with model.ag, data.csv, .env, sub/, a link out."""
    (tmp_path / "outside.ag").write_text(f"{SECRET} = 1\n{SECRET} * q\n")
    (tmp_path / "outside.csv").write_text(f"{SECRET},1\n")
    folder = tmp_path / "suite"
    (folder / "sub").mkdir(parents=True)
    (folder / "model.ag").write_text("sum(x**2)\n")
    (folder / "sub" / "model.ag").write_text("sum(x**3)\n")
    (folder / "data.csv").write_text("1,2\n")
    (folder / ".env").write_text(f"{SECRET} = 1\n{SECRET}\n")
    (folder / "link_out.ag").symlink_to(tmp_path / "outside.ag")
    return folder


def suite_with(folder: Path, body: str, name: str = "s.toml") -> str:
    path = folder / name
    path.write_text(f'[[case]]\nname = "c"\nwrt = ["x"]\n{body}\n')
    return str(path)


def run_case(cli, suite: str, *extra: str) -> dict:
    result = cli(["check", "--suite", suite, "--format", "json", *extra])
    assert result.code in (0, 1), result.err
    assert result.err == ""
    assert SECRET not in result.out
    (case,) = json.loads(result.out)["cases"]
    return case


HOSTILE = {
    "parent": ('file = "../outside.ag"', "outside the suite's folder"),
    "absolute": ('file = "{tmp}/outside.ag"', "outside the suite's folder"),
    "sneaky parent": ('file = "sub/../../outside.ag"', "outside the suite's folder"),
    "link out": ('file = "link_out.ag"', "outside the suite's folder"),
    "hidden": ('file = ".env"', "hidden file"),
    "set parent": ('program = "sum(x)"\nset = { x = "@../outside.csv" }', "outside"),
    "set absolute": ('program = "sum(x)"\nset = { x = "@{tmp}/outside.csv" }', "outside"),
}


@pytest.mark.parametrize("which", list(HOSTILE))
def test_suite_paths_stay_in_the_suite_folder(cli, tree, which):
    body, words = HOSTILE[which]
    suite = suite_with(tree, body.replace("{tmp}", str(tree.parent)))
    case = run_case(cli, suite, "--junit-xml", str(tree / "j.xml"))
    assert case["outcome"] == "error" and words in case["error"]
    assert "--allow-outside" in case["error"]
    assert SECRET not in (tree / "j.xml").read_text()
    table = cli(["check", "--suite", suite])
    assert SECRET not in table.out + table.err


def test_allow_outside_reads_them(cli, tree):
    suite = suite_with(tree, 'file = "../outside.ag"')
    case = run_case(cli, suite, "--allow-outside")  # read now; the case's own error follows
    assert case["outcome"] == "error" and "outside the suite's folder" not in case["error"]
    suite = suite_with(tree, 'program = "sum(x*y)"\nset = { x = "@../outside.csv", y = "2" }')
    case = run_case(cli, suite, "--allow-outside")  # read: its bad row is named, not shown
    assert case["outcome"] == "error" and "row 1, column 1 is not a number" in case["error"]


def test_suite_paths_resolve_against_the_suite_folder(cli, tree, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # elsewhere: suite/model.ag is not ./model.ag
    suite = suite_with(tree, 'file = "model.ag"\nset = { x = "@data.csv" }')
    case = run_case(cli, suite)
    assert case["outcome"] == "passed"  # sum(x**2) at [1, 2]: gradient [2, 4]
    suite = suite_with(tree, 'file = "sub/model.ag"\nset = { x = "@data.csv" }')
    assert run_case(cli, suite)["outcome"] == "passed"


def test_a_program_file_error_shows_only_its_own_line(cli, tmp_path):
    (tmp_path / "p.ag").write_text(f"{SECRET} = 1\ny = 2\nsum(q)\n")
    result = cli(["eval", "-f", str(tmp_path / "p.ag")])
    assert result.code == 2 and SECRET not in result.err
    assert result.err.splitlines()[1:] == ["sum(q)", "    ^"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    parts=st.lists(
        st.sampled_from(
            [
                "..",
                ".",
                "sub",
                ".env",
                "model.ag",
                "link_out.ag",
                "outside.ag",
                "suite",
                "",
                "~",
                "%2e%2e",
                "...",
            ]
        ),  # fmt: skip
        min_size=1,
        max_size=5,
    ),
    absolute=st.booleans(),
    in_set=st.booleans(),
)
def test_hostile_paths_never_leave_the_folder(cli, tree, parts, absolute, in_set):
    """Any path a suite may name: it runs only if it stays in the suite's folder and names
    no hidden file; the secret beside the folder never shows."""
    path = "/".join(parts)
    if absolute:
        path = str(tree.parent / path)
    body = f'file = "{path}"' if not in_set else f'program = "sum(x)"\nset = {{ x = "@{path}" }}'
    case = run_case(cli, suite_with(tree, body))
    real = os.path.realpath(tree / path)
    inside = os.path.commonpath([real, os.path.realpath(tree)]) == os.path.realpath(tree)
    hidden = any(p.startswith(".") for p in Path(os.path.relpath(real, tree)).parts)
    if not inside or hidden:
        assert case["outcome"] == "error"
        assert "outside the suite's folder" in case["error"] or "hidden" in case["error"]


# ---- what agrad writes, and where ---------------------------------------------------------

PASSING = 'program = "sum(x**2)"\nset = { x = "[1,2]" }'


def test_junit_over_a_character_device_writes_through(cli, tree):
    suite = suite_with(tree, PASSING)
    result = cli(["check", "--suite", suite, "--junit-xml", "/dev/null"])
    assert result.code == 0 and result.err == ""
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_junit_into_a_fifo_writes_through(cli, tree):
    suite = suite_with(tree, PASSING)
    fifo = tree / "report.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    result = cli(["check", "--suite", suite, "--junit-xml", str(fifo)])
    reader.join(timeout=30)
    assert result.code == 0 and result.err == ""
    assert ET.fromstring(received[0]).get("tests") == "1"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("target", ["symlink", "suite", "golden", "folder", "dangling"])
def test_junit_refuses_targets_it_must_not_replace(cli, tree, target):
    suite = suite_with(tree, PASSING)
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    real = tree / "real.xml"
    real.write_text("keep me")
    paths = {"symlink": tree / "link.xml", "suite": Path(suite), "folder": tree / "sub",
             "golden": tree / "s.golden.json", "dangling": tree / "dangling.xml"}  # fmt: skip
    (tree / "link.xml").symlink_to(real)
    (tree / "dangling.xml").symlink_to(tree / "nowhere.xml")
    before = {p: p.read_bytes() for p in (real, Path(suite), tree / "s.golden.json")}
    result = cli(["check", "--suite", suite, "--junit-xml", str(paths[target])])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: --junit-xml: ")
    words = {"symlink": "symbolic link", "suite": "a file this run reads",
             "golden": "a file this run reads", "folder": "folder",
             "dangling": "symbolic link to nothing"}  # fmt: skip
    assert words[target] in result.err
    assert {p: p.read_bytes() for p in before} == before
    assert (tree / "link.xml").is_symlink()


def test_atomic_replace_keeps_the_mode_and_leaves_no_temporaries(cli, tree):
    suite = suite_with(tree, PASSING)
    report = tree / "report.xml"
    report.write_text("old")
    os.chmod(report, 0o640)
    assert cli(["check", "--suite", suite, "--junit-xml", str(report)]).code == 0
    assert stat.S_IMODE(os.stat(report).st_mode) == 0o640
    assert ET.parse(report).getroot().get("tests") == "1"
    assert not [p for p in os.listdir(tree) if p.endswith(".agrad-tmp")]


@pytest.mark.parametrize("failure", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_update_golden_on_a_full_or_read_only_disk(cli, tree, monkeypatch, failure):
    from agrad import files

    suite = suite_with(tree, PASSING)
    assert cli(["check", "--suite", suite, "--update-golden"]).code == 0
    golden = tree / "s.golden.json"
    before = golden.read_bytes()
    suite_with(tree, PASSING.replace("[1,2]", "[3,4]"))

    def fail(*args):
        raise OSError(failure, os.strerror(failure))

    monkeypatch.setattr(files.os, "fsync", fail)
    result = cli(["check", "--suite", suite, "--update-golden"])
    assert result.code == 2 and result.out == ""
    assert result.err == (
        f"error: --update-golden: cannot write {str(golden)!r}: {os.strerror(failure)}; "
        "it was left as it was\n"
    )
    assert golden.read_bytes() == before
    assert not [p for p in os.listdir(tree) if p.endswith(".agrad-tmp")]


def test_golden_through_a_link_to_a_full_device(cli, tree):
    suite = suite_with(tree, PASSING)
    (tree / "s.golden.json").symlink_to("/dev/full")  # writes there fail with ENOSPC
    result = cli(["check", "--suite", suite, "--update-golden"])
    assert result.code == 2 and result.out == ""
    assert "No space left on device" in result.err and "Traceback" not in result.err


def test_a_killed_update_leaves_a_temporary_that_the_next_run_removes(tree):
    suite = suite_with(tree, PASSING)
    killed = (
        "import os, agrad.files as f\n"
        "f.os.replace = lambda *a: os._exit(9)  # killed between the write and the rename\n"
        "from agrad.cli import main\n"
        f"main(['check', '--suite', {suite!r}, '--update-golden'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", killed], capture_output=True, text=True)
    assert proc.returncode == 9
    (left,) = [p for p in os.listdir(tree) if p.endswith(".agrad-tmp")]
    assert left.startswith(".s.golden.json.")
    live = tree / f".s.golden.json.{os.getpid()}.agrad-tmp"  # a writer that still runs
    live.write_text("in progress")
    again = subprocess.run(
        [sys.executable, "-m", "agrad", "check", "--suite", suite, "--update-golden"],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert not (tree / left).exists() and live.exists()
    assert json.loads((tree / "s.golden.json").read_text())["c"]["value"] == 5


# ---- escapes in messages ------------------------------------------------------------------

ESC = "\x1b"


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", f"x + {ESC}[2J1", "--set", "x=1"],
        ["eval", f"x{ESC}]0;pwned{chr(7)}", "--set", "x=1"],
        ["eval", "sum(q)\u202e", "--set", "x=1"],
        ["eval", "-f", f"/tmp/no{ESC}[31m.ag"],
        ["eval", "x", "--set", f"x=@/tmp/no{ESC}[31m.npy"],
        ["eval", "x", "--set", f"x{ESC}=1"],
    ],
)
def test_terminal_escapes_are_shown_escaped(cli, argv):
    result = cli(argv)
    assert result.code == 2 and result.out == ""
    assert ESC not in result.err and "\u202e" not in result.err and chr(7) not in result.err
    assert "\\x1b" in result.err or "\\u202e" in result.err


def test_caret_lines_up_under_an_escaped_character(cli):
    result = cli(["eval", f"x +{ESC}1", "--set", "x=1"])
    _, line, caret = result.err.rstrip("\n").split("\n")
    assert line == "x +\\x1b1" and caret.index("^") == line.index("\\x1b")


def test_case_names_are_escaped_in_tables_and_junit(cli, tree):
    suite = tree / "s.toml"
    suite.write_text(f'[[case]]\nname = "a\\u001b[31mred"\n{PASSING}\nwrt = ["x"]\n')
    junit = tree / "j.xml"
    result = cli(["check", "--suite", str(suite), "--junit-xml", str(junit)])
    assert result.code == 0 and ESC not in result.out and "a\\x1b[31mred" in result.out
    assert ET.parse(junit).find(".//testcase").get("name") == "a\\x1b[31mred"


# ---- the parser cache ---------------------------------------------------------------------


def fresh(cache_home: Path, program: str) -> subprocess.CompletedProcess:
    code = (
        "from agrad.lang.program import Program\n"
        f"print(float(Program.compile({program!r}).run().output.data))\n"
    )
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": os.environ.get("PATH", "")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def verified(cache: Path) -> str:
    """The cache's tables, after checking that its header verifies them."""
    import hashlib

    header, tables = cache.read_text().split("\n", 1)
    assert json.loads(header)["sha256"] == hashlib.sha256(tables.encode()).hexdigest()
    return tables


def test_an_edited_parser_cache_is_detected_and_rebuilt(tmp_path):
    import hashlib

    assert fresh(tmp_path, "3-1").stdout == "2.0\n"
    (cache,) = (tmp_path / "agrad").glob("grammar-*.json")
    header, tables = cache.read_text().split("\n", 1)
    aliases = tables.count('"binary"')
    assert aliases and verified(cache) == tables
    edited = tables.replace('"binary"', '"unary"', 1)  # what a program means
    cache.write_text(header + "\n" + edited)
    result = fresh(tmp_path, "3-1")
    assert result.returncode == 0 and result.stdout == "2.0\n", result.stderr
    assert verified(cache).count('"binary"') == aliases  # rebuilt from the grammar
    # a header forged to match the edited tables, but naming another grammar: ignored too
    forged = json.loads(header) | {"source": "0" * 64}
    forged["sha256"] = hashlib.sha256(edited.encode()).hexdigest()
    cache.write_text(json.dumps(forged) + "\n" + edited)
    assert fresh(tmp_path, "3-1").stdout == "2.0\n"
    assert verified(cache).count('"binary"') == aliases
