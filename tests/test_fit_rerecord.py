"""`agrad fit` records each step's graph again from the first run's (`Rerecord`) rather
than running the program: it must give the very numbers the program's runs give — the
same loss curve and the same fitted values, bit for bit — and must run the program
wherever the graph depends on the values (a mask, an index, ``tensor(w)``), wherever
something writes in place, and wherever a step raises (whose error the program reports
where it stands).

The oracle is the program itself: the same fit with the rerecording switched off.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from fuzzing import Generator

from agrad.engine import replay
from agrad.errors import AgradError
from agrad.lang.fit import fit
from agrad.lang.session import Session

PROGRAMS = [
    # (program, --set values, --wrt, whether the rerecording is used)
    ("mean((w*x+b-y)**2)", ["x=[1,2,3]", "y=[2,3,5]", "w=0", "b=0"], "w,b", True),
    (
        "sum(relu(w*x - 1)) + sum(abs(w - y))",
        ["x=[1,2,3]", "y=[2,3,5]", "w=[0.5,0.1,2]"],
        "w",
        True,
    ),
    ("logsumexp(W @ x) - (W @ x)[1]", ["x=[1,2,3]", "W=[[0.1,0.2,0.3],[0.3,0.1,0.2]]"], "W", True),
    ("sum(max(w * x, axis=0)) + sum(w**2)", ["x=[[1,2],[3,-1]]", "w=[0.5,-0.5]"], "w", True),
    ("sum((clip(x, min=w) - 2)**2)", ["x=[1,3]", "w=1.5"], "w", True),
    ("sum(w * randn(3)) + sum(w**2)", ["w=[1,2,3]"], "w", True),  # the same draws each step
    ("v = tensor(2.0, requires_grad=true)\nsum((w*v - x)**2)", ["x=[1,2]", "w=0.5"], "w", True),
    ("sum(softmax(w * x) * y)", ["x=[1,2,3]", "y=[0.1,0.5,0.2]", "w=0.3"], "w", True),
    ("sum(cumsum(w * x) ** 2)", ["x=[1,2,3]", "w=0.1"], "w", True),
    ("sum(x[0:2] * w) + w**2", ["x=[1,2,3]", "w=0.1"], "w", True),
    # the graph depends on the values: the program runs every step
    ("sum(where(w * x > 1, w * x, 0.5 * w * x)) + w**2", ["x=[1,2,3]", "w=0.4"], "w", False),
    ("sum(tensor(w) * x) + w**2", ["x=[1,2]", "w=1.5"], "w", False),
    ("sum((w > 0) * x * w) + w**2", ["x=[1,2]", "w=1.5"], "w", False),
    ("y = x * 1\ny[0] = w\nsum(y**2)", ["x=[1,2]", "w=1.5"], "w", False),
    # a constant made inside a composite from the values (logdet's nan where det < 0): the
    # determinant changes sign on the way, and the program's run diverges there (QA 14)
    ("logdet(w) + sum(w**2)", ["w=[[2,1],[0.5,3]]"], "w", False),
]


def _fit(program, sets, wrt, steps=25, lr=0.1, rerecord=True, dtype=None, monkeypatch=None):
    used = []
    original = replay.Rerecord.of

    def spy(output, leaves):
        made = original(output, leaves) if rerecord else None
        used.append(made is not None)
        return made

    monkeypatch.setattr(replay.Rerecord, "of", staticmethod(spy))
    session = Session.create(program, sets, [wrt], dtype=dtype or np.float64)
    return fit(session, steps, lr, momentum=0.5), any(used)


def _same(a, b):
    assert a.history == b.history or np.array_equal(a.history, b.history, equal_nan=True)
    assert a.values.keys() == b.values.keys()
    for name in a.values:
        np.testing.assert_array_equal(a.values[name], b.values[name])
    assert np.array_equal(a.loss, b.loss, equal_nan=True)
    assert (a.steps, a.diverged, a.diverged_at) == (b.steps, b.diverged, b.diverged_at)


@pytest.mark.parametrize(("program", "sets", "wrt", "rerecorded"), PROGRAMS)
def test_the_rerecording_gives_the_programs_numbers(monkeypatch, program, sets, wrt, rerecorded):
    fast, used = _fit(program, sets, wrt, monkeypatch=monkeypatch)
    assert used is rerecorded
    slow, _ = _fit(program, sets, wrt, rerecord=False, monkeypatch=monkeypatch)
    _same(fast, slow)
    assert len(fast.history) == 26 or fast.diverged


def test_float32_and_adam(monkeypatch):
    program, sets = "mean((w*x+b-y)**2)", ["x=[1,2,3]", "y=[2,3,5]", "w=0", "b=0"]
    fast, used = _fit(program, sets, "w,b", dtype="float32", monkeypatch=monkeypatch)
    slow, _ = _fit(program, sets, "w,b", dtype="float32", rerecord=False,
                   monkeypatch=monkeypatch)  # fmt: skip
    assert used and fast.values["w"].dtype == np.float32
    _same(fast, slow)


@pytest.mark.parametrize("seed", range(40))
def test_generated_programs(monkeypatch, seed):
    body = Generator(seed).smooth()
    program = f"sum(({body}) * w) + sum(w**2)"
    values = {"x": "[0.5,-1,2]", "y": "[1,2,3]", "w": "[0.3,0.2,0.1]"}
    sets = [f"{n}={v}" for n, v in values.items() if re.search(rf"\b{n}\b", program)]
    try:
        slow, _ = _fit(program, sets, "w", steps=10, rerecord=False, monkeypatch=monkeypatch)
    except AgradError as error:  # the program itself refuses: so must the rerecording path
        with pytest.raises(type(error)):
            _fit(program, sets, "w", steps=10, monkeypatch=monkeypatch)
        return
    fast, _ = _fit(program, sets, "w", steps=10, monkeypatch=monkeypatch)
    _same(fast, slow)


def test_a_step_that_raises_is_reported_by_the_program(monkeypatch):
    # cholesky of W·Wᵀ - 1.5·I: positive definite at the start, not after a few steps
    # (the fit pushes W towards zero); both paths must stop with the program's error,
    # located at the call.
    program = "sum(cholesky(W @ W.T - 1.5 * eye(2)))**2 + sum(W**2) * 50"
    sets = ["W=[[2.0, 0.1], [0.2, 2.0]]"]
    errors = []
    for rerecord in (True, False):
        with pytest.raises(AgradError) as caught:
            _fit(program, sets, "W", steps=200, lr=0.01, rerecord=rerecord,
                 monkeypatch=monkeypatch)  # fmt: skip
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "line 1" in errors[0]


def test_divergence_keeps_the_last_finite_state(monkeypatch):
    program, sets = "-sum(exp(w * x))", ["x=[1, 2]", "w=1.0"]  # descent runs off to -inf
    fast, used = _fit(program, sets, "w", steps=200, lr=5.0, monkeypatch=monkeypatch)
    slow, _ = _fit(program, sets, "w", steps=200, lr=5.0, rerecord=False,
                   monkeypatch=monkeypatch)  # fmt: skip
    assert used and fast.diverged
    _same(fast, slow)
    # the values kept are those of the last finite loss: the program gives that loss there
    w = fast.values["w"]
    assert -(np.exp(w * 1.0) + np.exp(w * 2.0)) == pytest.approx(fast.loss)
