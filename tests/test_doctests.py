"""Every docstring example in agrad runs (doctest); the README's command lines print what
the README shows after them, and its Python snippets give the values their comments show.
(tests/test_docs.py runs every README and --help example as a user would paste it.)"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import agrad_executable

import agrad

README = Path(__file__).resolve().parent.parent / "README.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    found = pkgutil.walk_packages(agrad.__path__, "agrad.")
    return sorted(m.name for m in found if not m.name.endswith("__main__"))  # (runs the CLI)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=FLAGS)
    for test in finder.find(module, globs={**vars(module), "agrad": agrad, "np": np}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} docstring example(s) failed"


def _blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def _commands() -> list[tuple[str, str]]:
    """(command line, the output the README shows after it) for each ``$ agrad`` line."""
    found = []
    for block in _blocks(""):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ agrad "):
                i += 1
                continue
            command = lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + lines[i].strip()
            output = []
            i += 1
            while i < len(lines) and lines[i] and not lines[i].startswith("$ "):
                output.append(lines[i])
                i += 1
            found.append((command, "\n".join(output)))
    return found


@pytest.mark.parametrize("command,shown", _commands(), ids=[c[:60] for c, _ in _commands()])
def test_readme_command_lines(cli, command, shown):
    import shlex

    argv = shlex.split(command)[1:]
    if "|" in argv or any("@" in a for a in argv):
        pytest.skip("needs files or a shell pipe")
    result = cli(argv)
    assert result.code == 0, result.err
    if shown:  # (rich pads lines with spaces the README does not show)
        assert [line.rstrip() for line in result.out.rstrip("\n").splitlines()] == [
            line.rstrip() for line in shown.splitlines()
        ]


@pytest.mark.parametrize("block", _blocks("python"), ids=lambda b: b.splitlines()[0][:40])
def test_readme_python_snippets(block, monkeypatch):
    """Run each snippet; an expression whose comment shows a value must have it (repr)."""
    monkeypatch.setenv("PATH", str(Path(agrad_executable()).parent), prepend=":")
    names: dict = {}
    lines = block.splitlines()
    checker = doctest.OutputChecker()
    for statement in ast.parse(block).body:
        source = ast.get_source_segment(block, statement)
        comment = lines[statement.end_lineno - 1].partition("  # ")[2].strip()
        if isinstance(statement, ast.Expr) and comment[:1] in "(<[-0123456789" and comment:
            got = repr(eval(source, names))  # noqa: S307 - the README's own snippet
            assert checker.check_output(comment + "\n", got + "\n", FLAGS), f"{source}: {got}"
        else:
            exec(source, names)  # noqa: S102 - the README's own snippet
