"""A value the gradient flows through must never be read as a constant in silence.

`agrad check "sum(clip(x, min=w))" --wrt w` passed with the gradient 0 (the truth is 1:
f = w + 5 for w in (1, 2)), and `eval` called w unused: the bound was read as a Python
number, so autograd lost its gradient, and the checker's replay held it fixed too. The same
held for every parameter the language reads as a number (an axis, a size, a fill value, a
rate) and for `tensor(w)`, which makes a new leaf of w's values. Now:

- clip/clamp take tensor bounds as PyTorch's clamp does: operands, with gradients
  (ClampBackward0, ClampMinBackward1, ClampMaxBackward1), in the language and the API;
- every other number parameter of the language refuses a value computed from a variable
  being differentiated (exit 2, one line) — the class is the converters of
  `agrad.lang.functions.KINDS`, each tested here;
- `tensor(w)` keeps PyTorch's meaning (a new leaf: the gradient is cut), and a check of
  such a program runs it for real, so the cut gradient fails as it does in PyTorch's
  gradcheck.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad.errors import AgradValueError
from agrad.lang.functions import KINDS
from agrad.lang.session import Session


def _check(cli, program, *sets, wrt="w"):
    args = ["check", program, "--wrt", wrt, "--format", "json"]
    for s in sets:
        args += ["--set", s]
    return cli(args)


def test_clip_with_a_variable_bound_has_its_gradient_and_passes(cli):
    # f(w) = sum(max(x, w)) = w + 2 + 3 for w in (1, 2): df/dw = 1 (algebra).
    r = cli(["eval", "sum(clip(x, min=w))", "--set", "x=[1,2,3]", "--set", "w=1.5",
            "--wrt", "w,x", "--format", "json"])  # fmt: skip
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["grads"] == {"w": 1, "x": [0, 1, 1]} and out["unused"] == []
    r = _check(cli, "sum(clip(x, min=w))", "x=[1,2,3]", "w=1.5", wrt="w,x")
    assert r.code == 0, r.out
    assert json.loads(r.out)["variables"]["w"]["worst"][0]["analytic"] == 1


def test_a_wrong_bound_gradient_fails(cli):
    # --expect gives the hand-derived claim: 0 for w (as the old lost gradient) must fail.
    r = cli(["check", "sum(clip(x, min=w, max=2.5))", "--set", "x=[1,2,3]", "--set", "w=1.5",
            "--wrt", "w", "--expect", "w=0"])  # fmt: skip
    assert r.code == 1, r.out


@pytest.mark.parametrize(
    ("program", "sets", "grads"),
    [
        # max(min(x, hi), lo) per element; where lo > hi the result is hi (PyTorch's order).
        ("sum(clip(x, min=w, max=2.5))", ["x=[1,2,3]", "w=1.5"], {"w": 1}),
        ("sum(clip(x, max=w))", ["x=[1,2,3]", "w=1.5"], {"w": 2}),
        ("sum(clip(x, min=w, max=0.5))", ["x=[1,2,3]", "w=1.5"], {"w": 0}),
        ("sum(clip(x, min=[0, 2.5, 1]) * [1, 2, 3])", ["x=[1,2,3]"], {"x": [1, 0, 3]}),
    ],
)
def test_tensor_bounds_in_the_language(cli, program, sets, grads):
    args = ["eval", program, "--wrt", ",".join(grads), "--format", "json"]
    for s in sets:
        args += ["--set", s]
    r = cli(args)
    assert r.code == 0, r.err
    assert json.loads(r.out)["grads"] == grads


NUMBER_KINDS = [k for k, (kind, _) in KINDS.items() if kind in {
    "int", "float", "bool", "axis", "shape", "size"}]  # fmt: skip


@pytest.mark.parametrize("annotation", NUMBER_KINDS, ids=str)
def test_every_number_converter_refuses_a_value_with_a_gradient(annotation):
    kind, convert = KINDS[annotation]
    w = agrad.tensor(1.0, requires_grad=True) * 1.0
    value = (w,) if kind == "size" else w  # (*size gets the tuple of its arguments)
    with pytest.raises(AgradValueError, match="read as a number, which carries no gradient"):
        convert(value, "f", "p")
    constant = agrad.tensor(1.0)  # the same value without a gradient is taken
    convert((constant,) if kind == "size" else constant, "f", "p")


@pytest.mark.parametrize(
    "program",
    [
        "sum(x, axis=w)",
        "sum(full([2], w) * x)",
        "sum(reshape(x, [w * 2]))",
        "sum(arange(w) * 0) + sum(x)",
        "sum(x[w])",
        "sum(softplus(x, beta=w))",
        "sum(linspace(0, w, 3)) + sum(x)",
    ],
)
def test_number_parameters_refuse_a_variable_from_the_cli(cli, program):
    r = cli(["eval", program, "--set", "x=[1,2]", "--set", "w=1", "--wrt", "w"])
    assert r.code == 2, (r.out, r.err)
    assert r.err.startswith("error: ") and "carries no gradient" in r.err
    assert "Traceback" not in r.err


def test_a_new_leaf_of_a_variable_cuts_its_gradient_and_the_check_fails(cli):
    # tensor(w) is PyTorch's torch.tensor(w): a copy, cut from the graph (eval reports
    # what autograd gives); the function still moves with w (d/dw sum(w*x) = 3), so a
    # check must fail, as torch.autograd.gradcheck fails on the same function.
    r = cli(["eval", "sum(tensor(w) * x)", "--set", "w=1.5", "--set", "x=[1,2]", "--wrt", "w",
            "--format", "json"])  # fmt: skip
    assert r.code == 0 and json.loads(r.out)["unused"] == ["w"]
    r = _check(cli, "sum(tensor(w) * x)", "w=1.5", "x=[1,2]")
    assert r.code == 1, r.out
    worst = json.loads(r.out)["variables"]["w"]["worst"][0]
    assert worst["analytic"] == 0 and worst["numeric"] == pytest.approx(3.0)
    # a part of the gradient lost beside a part kept: 2 claimed, 5 true
    r = _check(cli, "sum(tensor(w, requires_grad=true) * x + w * x)", "w=1.5", "x=[1,2]")
    assert r.code == 1, r.out


def test_a_new_leaf_of_constants_is_still_replayed(cli):
    r = _check(cli, "sum(tensor([1, 2]) * w)", "w=1.5")
    assert r.code == 0, r.out
    # the complex step ran on the replay: no real runs were needed
    assert json.loads(r.out)["evaluations_per_element"] <= 2


def test_clamp_with_tensor_bounds_matches_pytorch():
    torch = require_torch()
    x0 = np.array([1.0, 2.0, 3.0, 2.5, np.nan, 0.5])
    lo0 = np.array([1.5, 2.0, 0.0, 3.0, 0.0, np.nan])  # a tie, lo > hi, nans
    hi0 = np.array([2.5, 2.5, 2.5, 2.5, 2.5, 2.5])
    weights = np.arange(1.0, 7.0)
    for form in ("clamp", "clip", "clamp_min", "clamp_max", "clamp_", "min_only"):
        results = []
        for lib in (torch, agrad):
            x, lo, hi = (lib.tensor(a, dtype=lib.float64, requires_grad=True)
                         for a in (x0, lo0, hi0))  # fmt: skip
            if form == "clamp_":
                y = x * 1
                y.clamp_(min=lo, max=hi)
            elif form in ("clamp_min", "clamp_max"):
                y = getattr(lib, form)(x, lo if form == "clamp_min" else hi)
            elif form == "min_only":
                y = x.clamp(min=lo)
            else:
                y = getattr(lib, form)(x, lo, hi)
            (y * lib.tensor(weights, dtype=lib.float64)).sum().backward()
            grads = [None if t.grad is None else np.asarray(t.grad) for t in (x, lo, hi)]
            results.append((type(y.grad_fn).__name__, np.asarray(y.detach()), grads))
        (name_t, value_t, grads_t), (name_a, value_a, grads_a) = results
        assert name_a == name_t, form
        np.testing.assert_array_equal(value_a, value_t)
        for a, t in zip(grads_a, grads_t, strict=True):
            assert (a is None) == (t is None), form
            if a is not None:
                np.testing.assert_array_equal(a, t)


def test_clamp_bounds_broadcast_and_a_constant_bound_mixes_with_a_tensor():
    x = agrad.tensor([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], requires_grad=True)
    lo = agrad.tensor([[0.5], [0.0]], requires_grad=True)
    y = agrad.clamp(x, min=lo, max=2.0)  # a number beside a tensor bound (PyTorch refuses)
    y.sum().backward()
    np.testing.assert_array_equal(y.numpy(force=True), [[0.5, 1.0, 2.0], [2.0, 0.0, 0.5]])
    np.testing.assert_array_equal(lo.grad.numpy(), [[1.0], [1.0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])


def test_fit_of_a_bound_moves_it():
    # the bound is a parameter a fit can learn: minimise sum((clip(x, min=w) - 2)**2) over
    # w with x = [1, 3]: only x = 1 is clipped, so w -> 2.
    from agrad.lang.fit import fit

    session = Session.create("sum((clip(x, min=w) - 2)**2)", ["x=[1,3]", "w=1.5"], ["w"])
    result = fit(session, 200, 0.1)
    assert result.values["w"] == pytest.approx(2.0, abs=1e-6)


def _parameter_cases():
    """Every entry's configurations with a number parameter, from the op table."""
    from agrad.engine.ops import TABLE

    for op in TABLE.values():
        for case in op.cases:
            for key, value in case.params.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    yield pytest.param(op, case, key, id=f"{op.name}-{key}")


@pytest.mark.parametrize(("op", "case", "key"), list(_parameter_cases()))
def test_a_number_parameter_refuses_a_tensor_that_requires_grad(op, case, key):
    # PyTorch's TypeError ("must be Number, not Tensor"): as a parameter, not an operand,
    # its gradient would be lost in silence (softplus(x, beta=w) gave w no gradient).
    from agrad.engine.ops import apply
    from agrad.errors import AgradTypeError

    rng = np.random.default_rng(0)
    operands = [agrad.tensor(rng.uniform(*op.domain_of(i), size=s)) for i, s in
                enumerate(case.shapes)]  # fmt: skip
    params = {**case.params, key: agrad.tensor(float(case.params[key]), requires_grad=True)}
    with pytest.raises(AgradTypeError, match=f"argument '{key}' must be a number"):
        apply(op, *operands, **params)
    params[key] = agrad.tensor(float(case.params[key]))  # without a gradient: nothing lost
    try:
        apply(op, *operands, **params)
    except AgradTypeError:  # pragma: no cover - the failure this test reports
        pytest.fail(f"{op.name}: a tensor without a gradient was refused as {key}")
    except Exception:  # noqa: BLE001 - an op may still want a Python int there (its own error)
        pass


def test_rsub_with_a_tensor_keeps_its_gradient():
    torch = require_torch()
    grads = []
    for lib in (torch, agrad):
        x = lib.tensor([[0.3, 0.6], [0.2, 0.9]], dtype=lib.float64, requires_grad=True)
        y = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        (lib.rsub(x, y) * lib.tensor([1.0, 2.0], dtype=lib.float64)).sum().backward()
        grads.append((np.asarray(x.grad), float(y.grad)))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    assert grads[0][1] == grads[1][1] == 6.0
