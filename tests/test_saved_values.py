"""What each op's VJP saves, checked against PyTorch's version counters.

An entry declares which of its inputs' values and whether its output's value its VJP
reads (`Op.saves`); backward refuses when one of those was written in place after the
op was recorded, as PyTorch does for the values it saved. For every op and case: write
into its output, then into each input, after recording; backward must raise exactly
when PyTorch raises. (The other direction — a value declared unread that the VJP does
read — fails the VJP tests of test_ops_generated.py, run with every such value a
shape-only stand-in.)
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch
from opinfo import INFO, torch_fn
from test_ops_generated import all_cases, make_inputs

import agrad
from agrad.engine.ops import apply


def _record(lib, op, case, arrays):
    """Inputs (non-leaf copies where they take a gradient, so they can be written into;
    constant masks as booleans) and the op applied to them."""
    wanted = op.differentiable_inputs(len(arrays))
    torch = lib is not agrad
    dtype = {"dtype": lib.float64} if torch else {}
    inputs = []
    for i, a in enumerate(arrays):
        if i in op.nondiff:
            inputs.append(lib.tensor(a > 0))
        else:
            leaf = lib.tensor(a, requires_grad=i in wanted, **dtype)
            inputs.append(leaf * 1.0)
    if torch:
        out = torch_fn(op.name)(lib, *inputs, **case.params)
    else:
        out = apply(op, *inputs, **case.params)
    return inputs, out


def _write(t):
    """An in-place write that leaves the values as they are (only the version changes)."""
    if t.dtype == bool or str(t.dtype) == "torch.bool":
        t.copy_(t.clone())
    else:
        t.mul_(1.0)


def _raises(lib, op, case, arrays, target, cotangent):
    inputs, out = _record(lib, op, case, arrays)
    _write(out if target == "output" else inputs[target])
    seed = lib.tensor(cotangent) if lib is agrad else lib.tensor(cotangent, dtype=lib.float64)
    try:
        (out * seed).sum().backward()
    except RuntimeError as exc:
        return f"raised: {exc}"[:160]
    return "did not raise"


def _targets(op, arrays):
    targets = ["output"]
    for i in range(len(arrays)):
        if not (op.mutates and i == 0):  # setitem writes into its first input: that is its output
            targets.append(i)
    return targets


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True))
def test_inplace_write_after_recording_raises_exactly_when_pytorch_does(op, case):
    torch = require_torch()
    if not INFO[op.name].same_saves:
        pytest.skip("PyTorch composes this op from others, which keep their own copies")
    arrays = make_inputs(op, case)
    _, reference = _record(torch, op, case, arrays)
    cotangent = np.random.default_rng(0).standard_normal(tuple(reference.shape))
    for target in _targets(op, arrays):
        if target == "output" and reference._base is not None:
            continue  # PyTorch's output is a view of an input: view semantics, not saved values
        theirs = _raises(torch, op, case, arrays, target, cotangent)
        if "is a view" in theirs:
            continue  # PyTorch refuses for its view semantics, not for a saved value
        ours = _raises(agrad, op, case, arrays, target, cotangent)
        assert ours.startswith("raised") == theirs.startswith("raised"), (
            f"{op.name}: a write into {'the output' if target == 'output' else f'input {target}'}"
            f" after recording: PyTorch {theirs}; agrad {ours}"
        )


def test_a_write_into_a_value_the_vjp_reads_is_refused_not_a_wrong_gradient():
    """The class of bug a wrong declaration hides (reciprocal's VJP reads its output)."""
    x = agrad.tensor([0.5, 1.0], requires_grad=True)
    y = agrad.reciprocal(x * 1.0)
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
