"""`agrad CMD ...` builds only CMD's Click command (start-up): everything it prints and
returns must be what the whole app gives, for help, usage errors and normal runs."""

from __future__ import annotations

import pytest

import agrad.cli.app as app_module
from agrad.cli.app import command

COMMANDS = list(command().commands)  # every registered command, from the whole app
VARIANTS = [
    ["--help"],
    ["-h"],
    [],
    ["--bogus"],
    ["--format", "nope", "sum(x)"],
    ["--set"],
    ["sum(x)", "--set", "x=[1,2]", "--wrt", "x", "--format", "json"],
    ["-x", "--set", "x=2"],
    ["sum(x", "--set", "x=1"],
]


def both(cli, monkeypatch, argv):
    one = cli(argv)
    with monkeypatch.context() as m:
        m.setattr(app_module, "invoked_command", lambda argv: None)  # the whole app
        whole = cli(argv)
    return one, whole


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("rest", VARIANTS, ids=lambda v: " ".join(v) or "(none)")
def test_one_command_behaves_as_the_whole_app(cli, monkeypatch, name, rest):
    one, whole = both(cli, monkeypatch, [name, *rest])
    assert (one.code, one.out, one.err) == (whole.code, whole.out, whole.err)


def test_the_invoked_command_is_the_first_argument_only():
    assert app_module.invoked_command(["eval", "x"]) == "eval"
    assert app_module.invoked_command(["--version"]) is None
    assert app_module.invoked_command(["evl", "x"]) is None  # unknown: the whole app says so
    assert app_module.invoked_command([]) is None


def test_shell_completion_sees_every_command(monkeypatch):
    monkeypatch.setenv("_AGRAD_COMPLETE", "bash_complete")
    assert app_module.invoked_command(["eval"]) is None
