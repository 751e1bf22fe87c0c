"""A program prepared once and run many times (what `agrad fit` does every step) computes
what running it afresh computes; the work done once (name checks, constant conversion, a
call's signature check, NumPy's generator) must not change any result."""

from __future__ import annotations

import json

import numpy as np
import pytest

import agrad
from agrad.check.serial import json_number, to_json
from agrad.lang.fit import fit
from agrad.lang.session import Session

PROGRAMS = [
    # randn in the program: every run is seeded alike, so every step sees the same noise
    ("mean((w*x + b - y + 0.1*randn(4))**2)", ["x=[0,1,2,3]", "y=[1,3,5,7]", "w=0", "b=0"]),
    # an indexed assignment writes into its target: each run starts from the inputs again
    ("z = x * 1; z[0] = w; sum((z*w + b - y)**2)", ["x=[0,1,2,3]", "y=[1,3,5,7]", "w=0.5", "b=0"]),
    # keyword arguments, a method call and PyTorch's keyword alias (dim -> axis)
    ("sum(mean((w*x + b - y)**2, dim=0).reshape(2))", ["x=[[0,1],[2,3]]", "y=[[1,3],[5,7]]",
                                                       "w=0", "b=0"]),
]  # fmt: skip


def reference_fit(session: Session, steps: int, lr: float) -> list[float]:
    """Plain SGD with a fresh `Session.run` per step: the unprepared semantics."""
    values = {n: np.array(session.bindings[n], dtype=np.float64) for n in session.wrt}
    losses = []
    for _ in range(steps + 1):
        run = session.run(dict(values))
        losses.append(run.output.item())
        run.output.backward()
        for name in session.wrt:
            values[name] = values[name] - lr * run.wrt[name].grad.numpy()
    return losses


@pytest.mark.parametrize("program,sets", PROGRAMS)
def test_fit_follows_the_unprepared_runs(program, sets):
    session = Session.create(program, sets, ["w,b"])
    result = fit(session, 5, 0.01)
    expected = reference_fit(Session.create(program, sets, ["w,b"]), 5, 0.01)
    np.testing.assert_allclose(result.history, expected, rtol=1e-12, atol=0)
    assert len(set(np.round(result.history, 12))) > 1, "the loss never changed: nothing fitted"


def test_a_prepared_run_leaves_its_inputs_unchanged():
    # z views x, so the assignment into z changes x: 2 + 2 = 4, as long as every run
    # starts from x = [1, 2] (a run that saw the last one's x would give 5, 6, ...)
    session = Session.create("z = x[0:2]; z[0] = z[0] + 1; sum(x)", ["x=[1,2]"])
    prepared = session.prepare([])
    assert [prepared.run().output.item() for _ in range(3)] == [4.0, 4.0, 4.0]
    assert session.run().output.item() == 4.0
    np.testing.assert_array_equal(session.bindings["x"], [1.0, 2.0])


def test_a_call_checked_once_still_refuses_bad_calls_on_every_program():
    """The signature check is kept per call site: another program's bad call is refused."""
    ok = Session.create("sum(x, axis=0)", ["x=[1,2]"])
    assert float(ok.run().output.numpy()) == 3.0
    bad = Session.create("sum(x, axes=0)", ["x=[1,2]"])
    with pytest.raises(agrad.AgradValueError, match="no argument 'axes'"):
        bad.run()
    with pytest.raises(agrad.AgradValueError, match="no argument 'axes'"):
        bad.run()  # and again: a refused call is never remembered as checked


def test_seeding_is_numpys_stream_whenever_the_generator_is_made():
    """The generator is made on first draw; the numbers are default_rng(seed)'s regardless."""
    agrad.manual_seed(123)
    state = agrad.default_generator.get_state()
    assert state == np.random.default_rng(123).bit_generator.state
    agrad.manual_seed(7)
    agrad.manual_seed(8)  # re-seeding before any draw: the last seed wins
    np.testing.assert_array_equal(
        agrad.rand(5).numpy(), np.random.default_rng(8).random(5)
    )  # fmt: skip
    g = agrad.Generator()
    assert 0 <= g.initial_seed() < 2**63


def _elementwise(array: np.ndarray):
    """to_json's contract, element by element: json_number of each, nested as the array."""
    if array.ndim == 0:
        return json_number(array)
    return [_elementwise(row) for row in array]


SPECIALS = [0.0, -0.0, 1.0, -3.0, 0.5, np.nan, np.inf, -np.inf, 2.0**53, -(2.0**53), 2.0**60,
            1e-300, 1e300, np.pi]  # fmt: skip


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (0, 3), (7,), (2, 3), (2, 3, 4), (40, 40)])
def test_json_numbers_array_at_once_match_element_by_element(shape):
    rng = np.random.default_rng(len(shape))
    for values in (
        rng.choice(SPECIALS, size=shape),
        rng.standard_normal(shape),
        np.round(rng.standard_normal(shape) * 5),
        rng.choice([1.0, 2.5, np.nan], size=shape),
    ):
        got, want = to_json(values), _elementwise(np.asarray(values))
        assert json.dumps(got) == json.dumps(want)
        flat_got = np.array(got, dtype=object).reshape(-1) if np.ndim(got) else [got]
        flat_want = np.array(want, dtype=object).reshape(-1) if np.ndim(want) else [want]
        assert [type(v) for v in flat_got] == [type(v) for v in flat_want]


def test_fit_of_a_loss_that_ignores_the_parameters_is_refused(cli):
    """A loss that does not depend on --wrt: a clean error that says so (exit 2, one line),
    not backward's "does not require grad" (what it printed before) nor a traceback."""
    for program in ("z = w*2; sum(x)", "v = w; sum(x * 3)"):
        result = cli(["fit", program, "--set", "x=[1,2]", "--set", "w=0", "--wrt", "w"])
        assert result.code == 2
        assert result.err.startswith("error: fit: the output does not depend on --wrt w")
        assert len(result.err.strip().splitlines()) == 1


def test_fit_with_an_unused_parameter_keeps_it(cli):
    """A parameter the loss uses only as w**0 gets a zero gradient and stays where it is."""
    result = cli(["fit", "sum(x*w**0) + (v-1)**2", "--set", "x=[1,2]", "--set", "w=1",
                  "--set", "v=0", "--wrt", "w,v", "--steps", "200", "--lr", "0.1",
                  "--format", "json"])  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["values"]["w"] == 1
    assert abs(payload["values"]["v"] - 1) < 1e-9
