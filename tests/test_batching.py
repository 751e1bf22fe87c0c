"""Batching rules (used to evaluate many perturbed points at once in finite differences),
generated from the op table: for every op and case, a batched replay equals replaying each
point alone; ops without a rule say so (and the checker falls back to one point at a time).
"""

from __future__ import annotations

import numpy as np
import pytest
from opinfo import INFO
from test_ops_generated import all_cases, leaves, make_inputs

import agrad
from agrad.check.numeric import differences
from agrad.engine.batching import DEFAULTS, Unbatchable
from agrad.engine.ops import TABLE, apply
from agrad.engine.replay import Tape


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True))
def test_batched_replay_equals_point_by_point(op, case):
    arrays = make_inputs(op, case)
    ts = leaves(op, arrays)
    out = apply(op, *ts, **case.params)
    wanted = [t for t in ts if t.requires_grad]
    tape = Tape(out, wanted)
    base = [t._array for t in wanted]
    for k in range(len(wanted)):
        rng = np.random.default_rng(k)
        block = base[k][None] + 0.01 * rng.standard_normal((4, *base[k].shape))
        if op.batch is None:
            with pytest.raises(Unbatchable):
                tape.batch(k, block, base)
            continue
        got = tape.batch(k, block, base)
        for row in range(4):
            args = list(base)
            args[k] = block[row]
            expected = tape(*args)
            assert got[row].shape == expected.shape
            np.testing.assert_allclose(got[row], expected, rtol=1e-13, atol=1e-13)


def test_every_op_a_program_can_record_has_a_batching_rule():
    """Its own, or the default for its shape rule; only ops used inside VJP rules (never
    recorded by a forward program, so never replayed) have none."""
    missing = {name for name, op in TABLE.items() if op.batch is None}
    assert missing == {name for name, info in INFO.items() if info.vjp_only}


def test_entries_without_a_rule_of_their_own_get_their_shape_rules_default():
    for op in TABLE.values():
        if op.shape_rule in DEFAULTS:
            assert op.batch is not None


def test_batched_differences_equal_point_by_point():
    x = agrad.tensor(np.linspace(-1.0, 2.0, 7), requires_grad=True)
    y = agrad.softmax(x * x, axis=0)[:4] @ agrad.tensor(np.arange(4.0))
    tape = Tape(y, [x])
    one = differences(tape, x._array, 1e-6)
    many = differences(tape, x._array, 1e-6, batched=lambda b: tape.batch(0, b, [x._array]))
    np.testing.assert_allclose(many.jacobian, one.jacobian, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(many.left, one.left, rtol=1e-9, atol=1e-12)
