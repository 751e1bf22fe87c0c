"""False passes of the replayed checks, class by class: a value read from the inputs to
make something the graph does not record (a comparison's mask, an integer cast, indices
from sort, argmax or bucketize) is a constant of the recording, so a replay cannot see the
jump or kink it makes. Found: `agrad.autograd.gradcheck` passed
``(x*x).sum() + ((x > 0) * w).sum()`` at a point with two elements on 0 and weights +1/-1
for about a quarter of the pairs of positions (the probes that cross-check the replay move
every element at once; when both elements cross, the jumps cancel in every value they
see), and `agrad check` did the same for programs beyond 4,096 elements.

Now such a read moves the escape counter (`engine.escapes.read_values`), so gradcheck
calls the function point by point, as PyTorch's; and `agrad check` compares the fixed
values where the program makes them (the mask itself, where nothing cancels).

The oracle: PyTorch's gradcheck fails every one of these functions at these points."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

import agrad
from agrad.check.callables import AgradCallableTarget
from agrad.check.checker import check_target
from agrad.check.options import CheckOptions
from agrad.check.verdict import KINK, PASS
from agrad.cli import run as cli_run

torch = pytest.importorskip("torch")

N = 300
PAIRS = [(0, 2), (0, 3), (0, 6), (1, 5), (4, 7)]  # the first three passed before the fix


def _base(i: int, j: int, on: float) -> np.ndarray:
    base = np.random.default_rng(1).uniform(0.5, 1.5, N)
    base[i] = base[j] = on
    return base


def _weights(i: int, j: int) -> np.ndarray:
    w = np.zeros(N)
    w[i], w[j] = 1.0, -1.0
    return w


# name -> (where the two elements sit, f(T, x, w)): jumps (or kinks) of opposite weight
CASES = {
    "comparison": (0.0, lambda T, x, w: (x * x).sum() + ((x > 0).to(x.dtype) * w).sum()),
    "where": (0.0, lambda T, x, w: T.where(x > 0, x + w, x).sum()),
    "integer_cast": (1.0, lambda T, x, w: (x * x).sum() + (x.long().to(x.dtype) * w).sum()),
    "bucketize": (
        0.5,
        lambda T, x, w: (
            (x * x).sum() + (T.bucketize(x, T.tensor([0.5], dtype=x.dtype)).to(x.dtype) * w).sum()
        ),
    ),
    "signbit": (0.0, lambda T, x, w: (x * x).sum() + (T.signbit(x - 0.0).to(x.dtype) * w).sum()),
}


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("name", list(CASES))
def test_jumps_that_cancel_in_a_probe_fail_gradcheck_as_in_pytorch(name, pair):
    on, f = CASES[name]
    base, w = _base(*pair, on), _weights(*pair)
    xt = torch.tensor(base, requires_grad=True)
    wt = torch.tensor(w)
    assert not torch.autograd.gradcheck(lambda x: f(torch, x, wt), (xt,), raise_exception=False)
    xa = agrad.tensor(base, requires_grad=True)
    wa = agrad.tensor(w)
    assert not agrad.autograd.gradcheck(lambda x: f(agrad, x, wa), (xa,), raise_exception=False)


# kinks at ties, hidden by indices the replay holds fixed (the order of a sort, argmax):
# PyTorch's gradcheck fails them; agrad's verdict for a claim between the one-sided
# derivatives is "kink" (README: a failure only under --strict), never a plain pass
TIES = {
    "sort": lambda T, x: (x.sort().values * T.arange(4.0, dtype=x.dtype)).sum(),
    "topk": lambda T, x: (x.topk(2).values * T.tensor([1.0, 3.0], dtype=x.dtype)).sum(),
    "argmax_gather": lambda T, x: x.gather(0, x.argmax().reshape(1)).sum() * 2.0 + x.sum(),
    "max_dim_indices": lambda T, x: x.gather(0, x.max(dim=0).indices.reshape(1)).sum(),
}


@pytest.mark.parametrize("name", list(TIES))
def test_kinks_at_ties_are_kinks_as_pytorch_fails_them(name):
    base = [1.0, 1.0, -0.5, 0.25]  # the first two tie
    f = TIES[name]
    xt = torch.tensor(base, dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(lambda x: f(torch, x), (xt,), raise_exception=False)
    xa = agrad.tensor(base, dtype=agrad.float64, requires_grad=True)
    target = AgradCallableTarget(lambda x: f(agrad, x), (xa,))
    verdicts = check_target(target, CheckOptions()).variables["input 0"].verdicts.reshape(-1)
    assert list(verdicts) == [KINK, KINK, PASS, PASS]
    strict = check_target(
        AgradCallableTarget(lambda x: f(agrad, x), (xa,)), CheckOptions(strict=True)
    )
    assert not strict.ok


@pytest.mark.parametrize("name", ["comparison", "where", "integer_cast"])
def test_away_from_the_boundaries_the_same_functions_pass_as_in_pytorch(name):
    _, f = CASES[name]
    base, w = _base(0, 2, 0.7), _weights(0, 2)
    xt = torch.tensor(base, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: f(torch, x, torch.tensor(w)), (xt,))
    xa = agrad.tensor(base, requires_grad=True)
    assert agrad.autograd.gradcheck(lambda x: f(agrad, x, agrad.tensor(w)), (xa,))


# ---- agrad check of programs beyond check.program_runs.PER_ELEMENT elements ---------------------

BIG = 5000


def _check(tmp_path, program: str, x: np.ndarray, w: np.ndarray) -> tuple[int, dict]:
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    argv = ["check", program, "--wrt", "x", "--set", f"x=@{tmp_path / 'x.npy'}",
            "--set", f"w=@{tmp_path / 'w.npy'}", "--format", "json"]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_run(argv)
    return code, json.loads(out.getvalue())


@pytest.mark.parametrize("pair", [(0, 1), (2, 5), (3, 4)])  # (0, 1), (3, 4) passed before
def test_a_big_program_with_jumps_that_cancel_in_a_probe_never_passes(tmp_path, pair):
    i, j = pair
    x = np.random.default_rng(1).uniform(0.5, 1.5, BIG)
    x[i] = x[j] = 0.0
    w = np.zeros(BIG)
    w[i], w[j] = 1.0, -1.0
    code, report = _check(tmp_path, "sum(x*x + (x > 0) * w)", x, w)
    assert code == 1 and not report["ok"]
    assert report["variables"]["x"]["verdict"] != "pass"


def test_a_big_program_with_a_mask_away_from_its_boundaries_passes(tmp_path):
    x = np.random.default_rng(1).uniform(0.5, 1.5, BIG)
    w = np.random.default_rng(2).standard_normal(BIG)
    code, report = _check(tmp_path, "sum(x*x + (x > 0) * w + where(x > 1, x, 2*x))", x, w)
    assert code == 0 and report["variables"]["x"]["verdict"] == "pass"
