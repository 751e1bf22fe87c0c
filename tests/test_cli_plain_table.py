"""The eval tables printed without Rich (agrad.cli.render.plain_table) against Rich's own
text for the same tables, byte for byte; and the cases that must stay Rich's."""

import contextlib
import io
import random
import string

import pytest

from agrad.cli import run
from agrad.cli.render import plain_table
from agrad.cli.render.common import console
from agrad.cli.render.plain_table import PlainTable, plain_text

ALPHABET = string.ascii_letters + string.digits + string.punctuation + " "


def _rich_text(tables) -> str:
    out = io.StringIO()
    c = console()
    c.file = out
    for t in tables:
        c.print(t.rich())
    return out.getvalue()


def _random_table(rng: random.Random) -> PlainTable:
    word = lambda lo, hi: "".join(rng.choice(ALPHABET) for _ in range(rng.randint(lo, hi)))  # noqa: E731
    ncols = rng.randint(1, 5)
    table = PlainTable(word(1, 70), [word(0, 12) for _ in range(ncols)])
    table.show_header = rng.random() < 0.7
    for _ in range(rng.randint(1, 6)):
        table.add_row(*(word(0, 15) for _ in range(ncols)))
    return table


@pytest.mark.parametrize("columns", ["80", "40", "20", "120", "200", "7"])
def test_random_tables_match_rich(columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", columns)
    rng = random.Random(int(columns))
    plain = 0
    for _ in range(400):
        tables = [_random_table(rng) for _ in range(rng.randint(1, 3))]
        text = plain_text(tables)
        if text is not None:  # None: Rich prints it (wrapping, expanding, ...)
            plain += 1
            assert text == _rich_text(tables), [t.title for t in tables]
    assert plain > 20 or int(columns) <= 20  # the plain path is taken, not always declined


def _cli(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run(args)
    return code, out.getvalue()


PROGRAMS = [
    ["eval", "sum((w*x+b-y)**2)", "--wrt", "w,b", "--set", "x=[1,2]", "--set", "y=[5,7]",
     "--set", "w=1", "--set", "b=0"],
    ["eval", "sum(x**2)", "--set", "x=randn(3,2)", "--wrt", "x", "--precision", "12"],
    ["eval", "sum(x*w)", "--set", "x=randn(30)", "--set", "w=2", "--wrt", "x,w"],
    ["eval", "x*2", "--set", "x=3"],
    ["eval", "sum(x)", "--set", "x=[1,2]", "--set", "u=5", "--wrt", "x,u"],
    ["eval", "log(x)", "--set", "x=-1", "--wrt", "x"],
]  # fmt: skip


@pytest.mark.parametrize("args", PROGRAMS)
@pytest.mark.parametrize("env", [{}, {"COLUMNS": "30"}, {"COLUMNS": "200"}, {"NO_COLOR": "1"}])
def test_eval_tables_unchanged(args, env, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, fast = _cli(args)
    monkeypatch.setattr(plain_table, "plain_text", lambda tables: None)  # always Rich
    code_rich, rich = _cli(args)
    assert code == code_rich
    assert fast == rich


def test_terminals_and_forced_colour_stay_rich(monkeypatch):
    table = PlainTable("output", ["", ""])
    table.add_row("value", "1")
    assert plain_text([table]) is not None
    for name, value in [("FORCE_COLOR", "1"), ("TTY_COMPATIBLE", "1")]:
        with monkeypatch.context() as m:
            m.setenv(name, value)
            assert plain_text([table]) is None

    class Tty(io.StringIO):
        def isatty(self):
            return True

    with contextlib.redirect_stdout(Tty()):
        assert plain_text([table]) is None
    wide = PlainTable("output", ["", ""])
    wide.add_row("value", "…")  # not ASCII: Rich measures it
    assert plain_text([wide]) is None
