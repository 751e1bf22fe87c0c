"""A fuzz of the replay's contract: wherever a check evaluates a recorded graph instead of
the function, every element's verdict must be the one calling the function gives.

Random functions mix what a replay could hold fixed (comparisons, where, integer casts,
sort, argmax, max along a dim) with kinks a replay recomputes (relu, clamp, abs) and
smooth terms, with elements placed on the boundaries (0, 0.5, 1, ties) and weights of
both signs, so that jumps can cancel in a probe. Both targets: `agrad.autograd.gradcheck`'s
(`AgradCallableTarget`, replay against calls point by point) and `agrad check`'s programs
(replay backed by runs, both of its paths, against runs only)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

import agrad
from agrad.check import program_runs
from agrad.check.callables import AgradCallableTarget
from agrad.check.checker import check_target
from agrad.check.options import CheckOptions
from agrad.check.targets import Variable, pointwise
from agrad.cli import run as cli_run

ON = (0.0, 0.5, 1.0)  # where the boundaries below sit

# (python term of x and weights w, language term); c is one of ON
TERMS = [
    (lambda x, w, c: ((x > c).to(x.dtype) * w).sum(), "sum((x > {c}) * w)"),
    (lambda x, w, c: agrad.where(x >= c, x * w, x * x).sum(), "sum(where(x >= {c}, x * w, x * x))"),
    (lambda x, w, c: (x.long().to(x.dtype) * w).sum(), None),
    (lambda x, w, c: (x.sort().values * w).sum(), None),
    (lambda x, w, c: x.gather(0, x.argmax().reshape(1)).sum() * w[0], None),
    (lambda x, w, c: x.reshape(2, -1).max(dim=1).values.sum() * w[1], "max(x) * w[1]"),
    (lambda x, w, c: (agrad.relu(x - c) * w).sum(), "sum(relu(x - {c}) * w)"),
    (lambda x, w, c: (agrad.clamp(x, -c, c) * w).sum(), "sum(clamp(x, -{c}, {c}) * w)"),
    (lambda x, w, c: (agrad.abs(x - c) * w).sum(), "sum(abs(x - {c}) * w)"),
    (lambda x, w, c: (agrad.sin(x) * x * w).sum(), "sum(sin(x) * x * w)"),
]


def _case(seed: int, language: bool):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([6, 40, 120]))
    x = rng.uniform(-1.5, 1.5, n)
    c = float(rng.choice(ON))  # every term's boundary, and a few elements on it
    on = rng.choice(n, int(rng.integers(2, 5)), replace=False)
    x[on] = c
    if rng.random() < 0.2:
        x[1] = x[0]  # a tie
    w = rng.choice([-1.0, 1.0], n)
    w[on] = np.resize([1.0, -1.0], len(on))  # jumps of opposite weight: they cancel
    usable = [t for t in TERMS if t[1] is not None] if language else TERMS
    first = usable[int(rng.integers(0, 2 if language else 4))]  # one that reads values
    more = [usable[k] for k in rng.choice(len(usable), int(rng.integers(0, 3)), replace=False)]
    picked = [first] + [t for t in more if t is not first]
    return x, w, picked, [c] * len(picked)


def _verdicts(report) -> tuple:
    v = report.variables["input 0"]
    return v.ok, tuple(np.asarray(v.verdicts).reshape(-1))


@pytest.mark.parametrize("seed", range(60))
def test_gradcheck_replay_gives_the_verdicts_of_calls(monkeypatch, seed):
    x, w, picked, cs = _case(seed, language=False)
    wt = agrad.tensor(w)

    def f(t):
        return sum(term(t, wt, c) for (term, _), c in zip(picked, cs, strict=True))

    def verdicts():
        target = AgradCallableTarget(f, (agrad.tensor(x, requires_grad=True),))
        return _verdicts(check_target(target, CheckOptions()))

    replayed = verdicts()
    monkeypatch.setattr(AgradCallableTarget, "_record_replay", lambda self: None)
    assert replayed == verdicts()


def _check_json(program: str, x: np.ndarray, w: np.ndarray) -> dict:
    argv = ["check", program, "--wrt", "x", "--set", f"x={x.tolist()}",
            "--set", f"w={w.tolist()}", "--format", "json", "--all"]  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli_run(argv)
    report = json.loads(out.getvalue())["variables"]["x"]
    return {"ok": report["ok"], "verdicts": [e["verdict"] for e in report["elements"]]}


@pytest.mark.parametrize("per_element", [program_runs.PER_ELEMENT, 0])  # both paths
@pytest.mark.parametrize("seed", range(40))
def test_agrad_check_backed_replay_gives_the_verdicts_of_runs(monkeypatch, seed, per_element):
    x, w, picked, cs = _case(seed, language=True)
    program = " + ".join(lang.format(c=c) for (_, lang), c in zip(picked, cs, strict=True))
    monkeypatch.setattr(program_runs, "PER_ELEMENT", per_element)
    backed = _check_json(program, x, w)

    def runs_only(base, replay, exact, real_at, probe_at=None):
        return Variable(base, pointwise(real_at))

    monkeypatch.setattr("agrad.check.language.backed", runs_only)
    assert backed == _check_json(program, x, w), program
