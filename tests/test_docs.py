"""Every example of the README and of every `--help` runs, pasted into bash, and prints what
the text says it prints.

- README: each ``$ agrad ...`` command of a fenced block (continuation lines included) runs
  in bash with ``set -o pipefail``, in one folder shared by all the examples (the TOML block
  is saved there as checks.toml); where the block shows output, stdout must be exactly
  that. The set-up command, the inline ``agrad ...`` examples of the prose and the Python
  blocks run too.
- ``--help``: each command's Example is taken from the help text as printed at 80 columns
  (so a rewrapped example would break here), run in bash, and the sentence after it
  checked: every "quoted" phrase must appear in the output and every number in it must be
  one of the output's numbers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import agrad_executable

README = Path(__file__).resolve().parents[1] / "README.md"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
COMMANDS = ["eval", "jacobian", "hessian", "check", "graph", "fit", "functions"]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "AGRAD_DEBUG")}
    bin_dir = os.path.dirname(agrad_executable())
    env.update(COLUMNS="80", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    env["PATH"] = f"{bin_dir}:{os.path.dirname(sys.executable)}:{env.get('PATH', '')}"
    return env


def bash(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail\n{command}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment(),
        timeout=120,
    )


# ---- the README ---------------------------------------------------------------------------


def fenced_blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the README."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", README.read_text(), flags=re.M | re.S)


def shell_examples() -> list[tuple[str, list[str] | None]]:
    """(command, expected stdout lines or None) of each `$ ` line in plain fenced blocks."""
    examples = []
    for language, text in fenced_blocks():
        if language:
            continue
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            command = lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command += "\n" + lines[i]
            i += 1
            output = []
            while i < len(lines) and not lines[i].startswith("$ "):
                output.append(lines[i].rstrip())
                i += 1
            examples.append((command, output or None))
    return examples


def inline_examples() -> list[str]:
    """`agrad ...` spans of the prose that are complete commands (no placeholders)."""
    prose = re.sub(r"^```.*?^```$", "", README.read_text(), flags=re.M | re.S)
    spans = re.findall(r"`(agrad [^`]+)`", prose.replace("\n", " "))
    skip = ("PROGRAM", "NAME", "FILE", "PATH", "COMMAND", "...", "--install-completion")
    commands = {" ".join(s.split()) for s in spans if not any(w in s for w in skip)}
    return sorted(c for c in commands if len(c.split()) > 2)  # not a bare "agrad jacobian"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The examples' folder: the TOML block as checks.toml, and each block that starts
    with ``# NAME.py`` (the files `check --python` examples name) as that file."""
    import textwrap

    path = tmp_path_factory.mktemp("readme")
    for language, text in fenced_blocks():
        if language == "toml":
            (path / "checks.toml").write_text(text)
    indented = re.findall(r"^( +)```\n(.*?)^ +```$", README.read_text(), flags=re.M | re.S)
    for _indent, text in indented:
        code = textwrap.dedent(text)
        name = re.match(r"# (\w+\.py)\n", code)
        if name:
            (path / name.group(1)).write_text(code)
    return path


def test_the_readme_has_examples_to_run():
    assert len(shell_examples()) >= 8 and len(inline_examples()) >= 3
    assert sum(lang == "python" for lang, _ in fenced_blocks()) >= 2


@pytest.mark.parametrize(
    "index", range(len(shell_examples())), ids=[c[:60] for c, _ in shell_examples()]
)
def test_readme_shell_example(folder, index):
    # the examples run in order, in one folder (a block may make files the next one reads)
    for command, _ in shell_examples()[:index]:
        if "x.npy" in command and "numpy.save" in command:
            bash(command, folder)
    command, expected = shell_examples()[index]
    result = bash(command, folder)
    assert result.returncode == 0, (command, result.stderr)
    assert result.stderr == "", result.stderr
    if expected is not None:
        assert [line.rstrip() for line in result.stdout.splitlines()] == expected


@pytest.mark.parametrize("command", inline_examples())
def test_readme_inline_example(folder, command):
    result = bash(command, folder)
    assert result.returncode == 0, (command, result.stderr)
    assert result.stderr == ""


def test_readme_setup_command(folder):
    setup = re.search(r"^    pip install \. && (agrad .*)$", README.read_text(), flags=re.M)
    result = bash(setup.group(1), folder)
    assert result.returncode == 0 and result.stderr == ""
    assert {"41", "-28", "-18"} <= set(NUMBER.findall(result.stdout))


@pytest.mark.parametrize(
    "index", [i for i, (lang, _) in enumerate(fenced_blocks()) if lang == "python"]
)
def test_readme_python_example(folder, index):
    code = fenced_blocks()[index][1]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
        env=environment(), timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


# ---- every --help example -----------------------------------------------------------------


def help_example(command: str) -> tuple[str, str]:
    """The example command (as bash would receive it pasted) and the sentence after it."""
    result = subprocess.run(
        [agrad_executable(), command, "--help"], capture_output=True, text=True,
        env=environment(),
    )  # fmt: skip
    assert result.returncode == 0 and result.stderr == ""
    text = result.stdout.split("Example:", 1)[1]
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    example = "\n".join(line.strip() for line in paragraphs[0].splitlines())
    assert example.startswith(f"agrad {command} "), example
    says = " ".join(paragraphs[1].split())
    assert says.startswith(("prints", "compares", "fits")), says
    return example, says


@pytest.mark.parametrize("command", COMMANDS)
def test_help_example_runs_and_prints_what_the_help_says(command, tmp_path):
    example, says = help_example(command)
    for value in re.findall(r"--set (\S+)", example):  # quoted: [1,2] is a glob to zsh
        assert value.startswith("'") and value.endswith("'"), value
    result = bash(example, tmp_path)
    assert result.returncode == 0, (example, result.stderr)
    assert result.stderr == ""
    quoted = re.findall(r'"([^"]+)"', says)
    for phrase in quoted:
        assert phrase in result.stdout, (phrase, result.stdout)
    printed = [float(n) for n in NUMBER.findall(result.stdout)]
    for n in NUMBER.findall(re.sub(r'"[^"]*"', "", says)):
        assert any(abs(float(n) - p) <= 1e-4 * max(1, abs(p)) for p in printed), (n, says)
