"""`agrad.cli.direct` runs plain command lines without Typer: whatever it takes, it must
pass the command exactly the values Typer's app would pass, and it must leave to Typer
everything Typer refuses (usage errors stay Typer's words). Checked on every command with
generated command lines (options in both spellings, flags, repeats, values Click converts
or refuses, programs that start with '-', '--', stray arguments), and on the common
command lines, which must really go direct (else the start-up gain is gone silently)."""

from __future__ import annotations

import errno
from enum import Enum

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrad.cli import app as app_module
from agrad.cli import direct
from agrad.cli.argv import click_shapes, normalize
from agrad.cli.options import COMMANDS

app_module._register_commands()
NAMES = list(COMMANDS)

VALUES = {
    int: ["0", "1", "-1", "6", "17", "18", " 5", "5_0", "+3", "x", "1.5", "1e3", ""],
    float: ["0", "0.1", "-0.5", "nan", "inf", "-inf", "1e-3", "x", "", "1_0.5", " 2 "],
    str: ["x=[1,2]", "w,b", "x", "", "-1", "x=-1", "@data.npy"],
}
PROGRAMS = ["sum(x)", "x", "-x", "-", "--", "-1", "(x)", "", "--bogus", "-h", "--help", "-f"]


def typer_kwargs(name: str, argv: list[str]):
    """What Typer's app passes command ``name`` for ``argv``, or the exception it raises."""
    seen = {}
    app = typer.Typer(**app_module.APP_SETTINGS)
    app.callback()(app_module._typed(app_module.root))
    app.command(name)(app_module._typed(COMMANDS[name], call=lambda **kw: seen.update(kw)))
    group = typer.main.get_command(app)
    try:
        group.main(args=normalize(argv, click_shapes(group)), prog_name="agrad",
                   standalone_mode=False)  # fmt: skip
    except (typer.Exit, typer.TyperException, typer.Abort, SystemExit) as exc:
        return exc
    return seen


def direct_kwargs(name: str, argv: list[str]):
    args = normalize(argv, {name: direct.shape(name).argv_shape()})
    return direct.parse(name, args[1:])


def _types(annotation) -> tuple:
    return (annotation, *getattr(annotation, "__args__", ()))


def tokens(name: str):
    """Strategy: one token group of command ``name``'s command line."""
    shape = direct.shape(name)
    groups = [st.sampled_from(PROGRAMS).map(lambda p: [p])]
    for opt, (spec, flag) in shape.options.items():
        if flag is not direct._MISSING:
            groups.append(st.sampled_from([[opt], [f"{opt}=1"]]))
            continue
        types = _types(spec.annotation)
        enums = [t for t in types if isinstance(t, type) and issubclass(t, Enum)]
        if enums:
            members = [m.value for m in enums[0]]
            values = [*members, members[0].upper(), "x", ""]
        else:
            values = VALUES[next((t for t in (int, float) if t in types), str)]
        value = st.sampled_from(values)
        groups.append(value.map(lambda v, o=opt: [o, v]))
        groups.append(value.map(lambda v, o=opt: [f"{o}={v}"]))
    return st.one_of(groups)


def command_lines(name: str):
    return st.lists(tokens(name), max_size=6).map(lambda gs: [name, *[t for g in gs for t in g]])


def test_the_shapes_are_clicks():
    for name in NAMES:
        assert direct.shape(name).argv_shape() == click_shapes(app_module.command(name))[name]


def _agree(name: str, argv: list[str]) -> bool:
    mine = direct_kwargs(name, argv)
    if mine is None:
        return False  # Typer's to read: nothing to compare
    theirs = typer_kwargs(name, argv)
    assert isinstance(theirs, dict), f"direct took {argv}, Typer refuses it: {theirs!r}"
    # (repr: nan is nan, and 1 is not 1.0 nor True; an Enum member is not its value)
    assert {k: repr(v) for k, v in mine.items()} == {k: repr(v) for k, v in theirs.items()}, argv
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_what_direct_takes_is_what_typer_passes(data):
    name = data.draw(st.sampled_from(NAMES))
    _agree(name, data.draw(command_lines(name)))


COMMON = [
    ["eval", "sum((w*x+b-y)**2)", "--wrt", "w,b", "--set", "x=[1,2]", "--set", "y=[5,7]",
     "--set", "w=1", "--set", "b=0", "--format", "json"],
    ["eval", "-sum(x)", "--set", "x=[1,2]", "--wrt=x", "--precision", "3", "--explain"],
    ["eval", "--", "-x", "--set", "x=2", "--grad-output", "1"],
    ["jacobian", "tanh(A@x)", "--set", "A=randn(200,200)", "--set", "x=randn(200)", "--wrt",
     "x", "--format", "json", "--dtype", "float32", "--seed", "3"],
    ["hessian", "sum(x**3)", "--set", "x=[1,2]", "--wrt", "x", "--max-elements", "100"],
    ["check", "sum(sin(x))", "--set", "x=[1,2]", "--wrt", "x", "--format", "json"],
    ["fit", "mean((w*x-y)**2)", "--set", "x=[1,2]", "--set", "y=[2,4]", "--wrt", "w",
     "--set", "w=0", "--steps", "10", "--lr", "0.1", "--optimizer", "adam"],
    ["graph", "sum(x*y)", "--set", "x=1", "--set", "y=2", "--no-constants", "--format", "dot"],
    ["functions", "--format", "json"],
]  # fmt: skip


def test_the_common_command_lines_go_direct_and_agree():
    for argv in COMMON:
        assert _agree(argv[0], argv), f"{argv} does not go direct"


def test_what_typer_must_say_is_left_to_typer():
    for argv in (["eval", "--help"], ["eval", "-h"], ["eval", "--bogus", "x"],
                 ["eval", "x", "--format", "JSON"], ["eval", "x", "--precision", "0"],
                 ["eval", "x", "--set"], ["eval", "x", "y"], ["eval", "-f", "p.txt"],
                 ["eval", "x", "--explain=1"], ["eval", "x", "--seed", "1", "--seed", "2"],
                 ["functions", "x"], ["check", "x", "--suite", "a.toml"]):  # fmt: skip
        if argv[-1] == "a.toml":
            continue  # (check --suite is plain: it goes direct; covered above)
        assert direct_kwargs(argv[0], argv) is None, argv


def _raising(exc):
    def render(*args):
        raise exc

    return render


MAIN_JSON = COMMON[0]


@pytest.mark.parametrize(
    "exc",
    [EOFError(), OSError(errno.EPIPE, "Broken pipe"), OSError(errno.EACCES, "denied"),
     ValueError("a bug"), MemoryError(), RecursionError()],
    ids=["EOFError", "EPIPE", "EACCES", "ValueError", "MemoryError", "RecursionError"],
)  # fmt: skip
def test_a_failure_inside_a_command_ends_as_under_typer(cli, monkeypatch, exc):
    # The same exception from inside the command: exit status, stdout and stderr must be
    # what they are when Typer's app runs the command (which wraps some of them itself).
    from agrad.cli import render

    monkeypatch.delenv("AGRAD_DEBUG", raising=False)
    monkeypatch.setattr(render, "evaluation", _raising(exc))
    direct_run = cli(MAIN_JSON)
    with monkeypatch.context() as m:
        m.setattr(app_module, "invoked_command", lambda argv: None)  # Typer's app
        typer_run = cli(MAIN_JSON)
    assert (direct_run.code, direct_run.out, direct_run.err) == (
        typer_run.code, typer_run.out, typer_run.err)  # fmt: skip
    assert "Traceback" not in direct_run.err
