"""Every op in the op table, tested by being in the table.

For each entry and each of its cases (shapes and parameters), with inputs drawn
from the entry's domain, and each of its samples at special values (zeros, ties):
- its VJP against central finite differences of its own NumPy forward;
- the batched VJP (a block of one-hot cotangents, as jacobian uses) against
  row-by-row VJPs;
- its VJP under create_graph=True (tensor ops) against the array VJP, and the
  derivative of that VJP against finite differences (second order);
- forward values, gradients and grad_fn names against PyTorch (the oracle, from
  `opinfo`); required when CI=true, skipped without PyTorch otherwise.
The VJP tests run twice: as usual, and with every value an entry declares its VJP never
reads replaced by a shape-only stand-in (the small-array threshold at 0), so a wrong
declaration fails. `test_saved_values.py` checks the declaration the other way.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch
from opinfo import INFO, torch_fn

import agrad
from agrad.engine.autograd import run_backward
from agrad.engine.ops import TABLE, apply
from agrad.engine.ops import core as op_core

EPS = 1e-6


def all_cases(differentiable_only=False, special=True, smooth=False):
    """pytest params (op, case) over the table: its cases, and its special samples (those
    on a kink left out when ``smooth``: no finite difference holds there)."""
    params = []
    for op in TABLE.values():
        if differentiable_only and op.vjp is None:
            continue
        for i, case in enumerate(op.cases):
            params.append(pytest.param(op, case, id=f"{op.name}-{i}"))
        for i, case in enumerate(op.special if special else ()):
            if not (smooth and case.at_kink):
                params.append(pytest.param(op, case, id=f"{op.name}-special{i}"))
    return params


@pytest.fixture(params=["kept", "stand-ins"])
def stand_ins(request, monkeypatch):
    """Run a test as usual, then with the small-array threshold at 0: every input or output
    an entry says its VJP never reads is then a stand-in holding only its shape."""
    if request.param == "stand-ins":
        monkeypatch.setattr(op_core, "SMALL", 0)
    return request.param


def make_inputs(op, case, seed=0):
    if case.values is not None:
        return [np.array(v, dtype=np.float64, copy=True) for v in case.values]
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(*op.domain_of(i), size=s) for i, s in enumerate(case.shapes)]
    for i in op.nondiff:  # a 0/1 mask, as the language gives
        arrays[i] = (arrays[i] > 0).astype(np.float64)
    return arrays


def differentiable_inputs(op, arrays):
    return op.differentiable_inputs(len(arrays))


def forward(op, arrays, params):
    return np.asarray(op.forward(*[np.array(a, copy=True) for a in arrays], **params))


def leaves(op, arrays):
    wanted = differentiable_inputs(op, arrays)
    return [agrad.tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]


def vjp(op, arrays, params, v, create_graph=False):
    ts = leaves(op, arrays)
    out = apply(op, *ts, **params)
    wanted = [ts[i] for i in differentiable_inputs(op, arrays)]
    grads = run_backward([out], [v], create_graph=create_graph, inputs=wanted)
    return out, wanted, grads


def numeric_vjp(op, arrays, params, v, i):
    grad = np.zeros_like(arrays[i])
    for j in range(arrays[i].size):
        up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
        up[i].flat[j] += EPS
        down[i].flat[j] -= EPS
        grad.flat[j] = np.sum((forward(op, up, params) - forward(op, down, params)) * v) / (2 * EPS)
    return grad


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True, smooth=True))
def test_vjp_matches_finite_differences(op, case, stand_ins):
    arrays = make_inputs(op, case)
    v = np.random.default_rng(1).standard_normal(forward(op, arrays, case.params).shape)
    _, _, grads = vjp(op, arrays, case.params, v)
    for i, g in zip(differentiable_inputs(op, arrays), grads, strict=True):
        expected = numeric_vjp(op, arrays, case.params, v, i)
        got = np.zeros_like(expected) if g is None else np.asarray(g)
        assert got.shape == arrays[i].shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True))
def test_batched_vjp_equals_row_by_row(op, case, stand_ins):
    arrays = make_inputs(op, case)
    out_shape = forward(op, arrays, case.params).shape
    seeds = np.random.default_rng(2).standard_normal((3, *out_shape))
    ts = leaves(op, arrays)
    out = apply(op, *ts, **case.params)
    wanted = [ts[i] for i in differentiable_inputs(op, arrays)]
    batched = run_backward([out], [seeds], retain_graph=True, inputs=wanted, batch=1)
    for row in range(3):
        single = run_backward([out], [seeds[row]], retain_graph=True, inputs=wanted)
        for b, s, t in zip(batched, single, wanted, strict=True):
            if s is None:
                assert b is None
                continue
            assert np.shape(b) == (3, *t.shape)
            np.testing.assert_allclose(np.asarray(b)[row], s, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True, smooth=True))
def test_create_graph_vjp_and_its_derivative(op, case, stand_ins):
    arrays = make_inputs(op, case)
    v = np.random.default_rng(3).standard_normal(forward(op, arrays, case.params).shape)
    _, _, plain = vjp(op, arrays, case.params, v)
    _, wanted, graphed = vjp(op, arrays, case.params, agrad.tensor(v), create_graph=True)
    for p, g in zip(plain, graphed, strict=True):
        if p is not None:
            np.testing.assert_allclose(g.data, p, rtol=1e-12, atol=1e-12)
    # Second order: d/dx_i <vjp(x), u> against finite differences of the first-order VJP.
    rng = np.random.default_rng(4)
    us = [rng.standard_normal(t.shape) for t in wanted]
    scalar = sum(
        (g * agrad.tensor(u)).sum()
        for g, u in zip(graphed, us, strict=True)
        if g is not None and g.requires_grad
    )
    if not isinstance(scalar, agrad.Tensor):
        return  # the VJP does not depend on the inputs (linear op): nothing second-order
    second = agrad.autograd.grad(scalar, wanted, allow_unused=True)
    idx = differentiable_inputs(op, arrays)
    for k, i in enumerate(idx):
        expected = np.zeros_like(arrays[i])
        for j in range(arrays[i].size):
            up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
            up[i].flat[j] += EPS
            down[i].flat[j] -= EPS
            gu = vjp(op, up, case.params, v)[2]
            gd = vjp(op, down, case.params, v)[2]
            expected.flat[j] = sum(
                np.sum((np.asarray(a) - np.asarray(b)) * u)
                for a, b, u in zip(gu, gd, us, strict=True)
                if a is not None
            ) / (2 * EPS)
        got = np.zeros_like(expected) if second[k] is None else second[k].data
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True, smooth=True))
def test_jvp_by_double_backward_matches_finite_differences(op, case):
    # autograd.functional.jvp and agrad.func.jvp differentiate each VJP in its cotangent:
    # that holds only if every rule is linear in g and records it under create_graph.
    arrays = make_inputs(op, case)
    idx = differentiable_inputs(op, arrays)
    rng = np.random.default_rng(5)
    tangents = [rng.standard_normal(arrays[i].shape) for i in idx]

    def f(*xs):
        full = [agrad.tensor(a) for a in arrays]
        for i, x in zip(idx, xs, strict=True):
            full[i] = x
        return apply(op, *full, **case.params)

    primals = tuple(agrad.tensor(arrays[i]) for i in idx)
    _, jv = agrad.autograd.functional.jvp(f, primals, tuple(agrad.tensor(t) for t in tangents))
    up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
    for i, t in zip(idx, tangents, strict=True):
        up[i] += EPS * t
        down[i] -= EPS * t
    expected = (forward(op, up, case.params) - forward(op, down, case.params)) / (2 * EPS)
    np.testing.assert_allclose(np.asarray(jv), expected, rtol=1e-5, atol=1e-6)


# ---- PyTorch as the oracle --------------------------------------------------------------


@pytest.mark.parametrize("op,case", all_cases())
def test_matches_pytorch(op, case, stand_ins):
    torch = require_torch()
    arrays = make_inputs(op, case)
    wanted = differentiable_inputs(op, arrays) if op.vjp else []
    ts = [
        torch.tensor(a, dtype=torch.float64, requires_grad=i in wanted)
        for i, a in enumerate(arrays)
    ]
    expected = torch_fn(op.name)(torch, *ts, **case.params)
    ours = apply(
        op, *leaves(op, arrays) if op.vjp else [agrad.tensor(a) for a in arrays], **case.params
    )
    np.testing.assert_allclose(ours.data, expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    if op.vjp is None:
        assert not ours.requires_grad
        return
    info = INFO[op.name]
    if not info.vjp_only and info.same_grad_fn:  # (else PyTorch names them otherwise)
        assert ours.grad_fn.name() == expected.grad_fn.name().split("::")[-1]
    v = np.random.default_rng(5).standard_normal(expected.shape)
    torch_grads = torch.autograd.grad(
        expected, [ts[i] for i in wanted], grad_outputs=torch.tensor(v), allow_unused=True
    )
    _, _, grads = vjp(op, arrays, case.params, v)
    for g, tg in zip(grads, torch_grads, strict=True):
        tg = np.zeros(g.shape if g is not None else ()) if tg is None else tg.numpy()
        np.testing.assert_allclose(
            np.zeros_like(tg) if g is None else g, tg, rtol=1e-10, atol=1e-12
        )


def _complex_step_jacobian(op, arrays, params, i, h=1e-20):
    """d forward / d input i by the complex step through the op's complex forward."""
    forward_c = op.for_complex().forward
    out = forward(op, arrays, params)
    jac = np.zeros((out.size, arrays[i].size))
    for j in range(arrays[i].size):
        args = [np.array(a, dtype=complex) for a in arrays]
        args[i].flat[j] += 1j * h
        jac[:, j] = (np.asarray(forward_c(*args, **params)).imag / h).reshape(-1)
    return jac


@pytest.mark.parametrize(
    "op,case",
    [p for p in all_cases(differentiable_only=True, smooth=True) if p.values[0].holomorphic],
)
def test_holomorphic_forward_gives_the_vjp_by_complex_step(op, case):
    """The checker's complex step trusts `Op.holomorphic`: through each such op, the complex
    forward's imaginary part must carry the derivative the VJP gives (and its real part
    the forward's value)."""
    arrays = make_inputs(op, case)
    out = forward(op, arrays, case.params)
    real = np.asarray(op.for_complex().forward(*[a.astype(complex) for a in arrays], **case.params))
    np.testing.assert_allclose(real.real, out, rtol=1e-13, atol=1e-13)
    for i in differentiable_inputs(op, arrays):
        jac = _complex_step_jacobian(op, arrays, case.params, i)
        eye = np.eye(out.size).reshape((out.size, *out.shape))
        ts = leaves(op, arrays)
        o = apply(op, *ts, **case.params)
        g = run_backward([o], [eye], inputs=[ts[i]], batch=1)[0]
        expected = np.zeros_like(jac) if g is None else np.asarray(g).reshape(jac.shape)
        np.testing.assert_allclose(jac, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True, special=False))
def test_float32_stays_float32(op, case):
    """A float32 application gives a float32 value and float32 gradients (a float64
    constant inside a rule, as the pooling divisors were, made them float64)."""
    if op.name == "astype":  # (its purpose is to change the dtype)
        return
    arrays = [a.astype(np.float32) for a in make_inputs(op, case)]
    params = {
        k: v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.float64 else v
        for k, v in case.params.items()
    }
    wanted = differentiable_inputs(op, arrays)
    ts = [agrad.tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]
    out = apply(op, *ts, **params)
    assert out.dtype == np.float32, out.dtype
    if out.requires_grad:
        seed = np.ones(out.shape, dtype=np.float32)
        for g in run_backward([out], [seed], inputs=[ts[i] for i in wanted]):
            assert g is None or np.asarray(g).dtype == np.float32
