"""The cyclic collector is the user's: agrad as a library never disables or retunes it.

Only the command line, whose process is agrad's own, pauses it while a program runs
(`agrad.lang.gcpause`). These tests watch every way the collector can be switched off
or retuned while the library's entry points run: the language's parse, Session and
Program, the engine's backward, gradcheck and the functional Jacobian/Hessian.
"""

from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

import agrad
from agrad.lang import gcpause
from agrad.lang.parser import parse
from agrad.lang.session import Session

TOUCHING = ("disable", "set_threshold", "freeze")


@pytest.fixture
def watched_gc(monkeypatch):
    """Record every call that would switch the collector off or retune it, and check at
    each collection callback that it is still on (a pause leaves it enabled=False)."""
    calls: list[str] = []
    for name in TOUCHING:
        real = getattr(gc, name)

        def spy(*args, _name=name, _real=real):
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(gc, name, spy)
    monkeypatch.setattr(gcpause, "_ALLOWED", [False])  # a library process
    assert gc.isenabled()
    yield calls
    assert gc.isenabled()


def _cubic(x):
    return (x**3).sum()


LIBRARY_CALLS = {
    "parse": lambda: parse("y = 2*x; sum(y)"),
    "Session evaluate": lambda: Session.create("sum(x**2)", ["x=[1,2]"], ["x"]).evaluate(),
    "Session jacobian": lambda: Session.create("x**2", ["x=[1,2]"], ["x"]).jacobian(),
    "Tensor backward": lambda: (agrad.tensor([1.0, 2.0], requires_grad=True) ** 2).sum().backward(),
    "gradcheck": lambda: agrad.autograd.gradcheck(
        _cubic, (agrad.tensor(np.array([0.5, -1.0]), requires_grad=True),)
    ),
    "functional.hessian": lambda: agrad.autograd.functional.hessian(
        _cubic, agrad.tensor(np.array([0.5, -1.0]))
    ),
}


@pytest.mark.parametrize("name", sorted(LIBRARY_CALLS))
def test_library_calls_leave_the_collector_alone(watched_gc, name):
    enabled_inside: list[bool] = []

    def seen(phase, info):  # runs inside whatever the call is doing when a pass starts
        enabled_inside.append(gc.isenabled())

    gc.callbacks.append(seen)
    try:
        gc.collect()  # at least one callback, inside the watched region below
        LIBRARY_CALLS[name]()
    finally:
        gc.callbacks.remove(seen)
    assert watched_gc == [], f"{name} called gc.{watched_gc}"
    assert all(enabled_inside)


def test_a_long_program_runs_with_the_collector_on_and_collecting(watched_gc):
    # Long enough that generation-0 collections happen during the run itself.
    text = " + ".join(["sin(x*1.5)"] * 3000)
    passes: list[int] = []
    gc.callbacks.append(lambda phase, info: passes.append(info["generation"]))
    try:
        result = Session.create(text, ["x=2"], ["x"]).evaluate()
    finally:
        gc.callbacks.pop()
    assert result.value == pytest.approx(3000 * np.sin(3.0), rel=1e-12)
    assert watched_gc == []
    assert passes, "the collector never ran during a 12,000-node program"


def test_the_command_line_pauses_the_collector_while_a_program_runs():
    # In a process of its own, as `agrad` runs: the pause is the CLI's, not the library's.
    script = (
        "import gc, sys\n"
        "from agrad.lang import session\n"
        "seen = []\n"
        "real = session.Session.run  # called inside evaluate, under its pause\n"
        "def spy(self, *a, **k):\n"
        "    seen.append(gc.isenabled())\n"
        "    return real(self, *a, **k)\n"
        "session.Session.run = spy\n"
        "import os\n"
        "_exit = os._exit\n"
        "def report(code):\n"
        "    sys.stderr.write(f'enabled-inside={seen}\\n'); sys.stderr.flush(); _exit(code)\n"
        "os._exit = report\n"
        "from agrad.cli import main\n"
        "sys.argv = ['agrad', 'eval', 'sum(x**2)', '--set', 'x=[1,2]', '--wrt', 'x',\n"
        "            '--format', 'json']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert '"grads": {"x": [2, 4]}' in done.stdout
    assert "enabled-inside=[False]" in done.stderr
