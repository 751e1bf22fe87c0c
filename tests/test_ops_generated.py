"""Every op in the op table, tested by being in the table.

For each entry and each of its cases (shapes and parameters), with inputs drawn
from the entry's domain:
- its VJP against central finite differences of its own NumPy forward;
- the batched VJP (a block of one-hot cotangents, as jacobian uses) against
  row-by-row VJPs;
- its VJP under create_graph=True (tensor ops) against the array VJP, and the
  derivative of that VJP against finite differences (second order);
- forward values, gradients and grad_fn names against PyTorch, when installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import agrad
from agrad.engine.autograd import run_backward
from agrad.engine.ops import TABLE, Case, apply

DEFAULT_CASES = {
    1: (Case(((),)), Case(((3,),)), Case(((2, 3),))),
    2: (Case(((2, 3), (2, 3))), Case(((2, 3), (3,))), Case(((1, 3), (2, 1)))),
}
# Ops used only inside VJP rules: PyTorch names their nodes differently.
INTERNAL = {"index_backward", "sum_to"}
EPS = 1e-6


def cases_of(op):
    return op.cases or DEFAULT_CASES[op.arity]


def all_cases(differentiable_only=False):
    params = []
    for op in TABLE.values():
        if differentiable_only and op.vjp is None:
            continue
        for i, case in enumerate(cases_of(op)):
            params.append(pytest.param(op, case, id=f"{op.name}-{i}"))
    return params


def make_inputs(op, case, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(*op.domain_of(i), size=s) for i, s in enumerate(case.shapes)]
    if op.name == "where":
        arrays[0] = (arrays[0] > 0).astype(np.float64)  # a 0/1 mask, as the language gives
    return arrays


def differentiable_inputs(op, arrays):
    return [i for i in range(len(arrays)) if not (op.name == "where" and i == 0)]


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


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True))
def test_vjp_matches_finite_differences(op, case):
    arrays = make_inputs(op, case)
    v = np.random.default_rng(1).standard_normal(forward(op, arrays, case.params).shape)
    _, _, grads = vjp(op, arrays, case.params, v)
    for i, g in zip(differentiable_inputs(op, arrays), grads, strict=True):
        expected = numeric_vjp(op, arrays, case.params, v, i)
        got = np.zeros_like(expected) if g is None else np.asarray(g)
        assert got.shape == arrays[i].shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True))
def test_batched_vjp_equals_row_by_row(op, case):
    arrays = make_inputs(op, case)
    out_shape = forward(op, arrays, case.params).shape
    n = int(np.prod(out_shape))
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
    assert n >= 0


@pytest.mark.parametrize("op,case", all_cases(differentiable_only=True))
def test_create_graph_vjp_and_its_derivative(op, case):
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


# ---- PyTorch as the oracle --------------------------------------------------------------


def _unsqueeze(t, x, shape):
    dim = next(i for i in range(len(shape)) if i >= x.ndim or shape[i] != x.shape[i])
    return x.unsqueeze(dim)


def _squeeze(t, x, shape):
    dim = next(i for i in range(x.ndim) if i >= len(shape) or shape[i] != x.shape[i])
    return x.squeeze(dim)


def _prod(t, x, axis=None, keepdims=False):
    if axis is None:
        return x.prod()
    for a in sorted(axis if isinstance(axis, tuple) else (axis,), reverse=True):
        x = x.prod(dim=a, keepdim=keepdims)
    return x


def _torch_index(t, index):
    return tuple(t.as_tensor(i) if isinstance(i, np.ndarray) else i for i in index)


def _setitem(t, old, value, index, advanced):
    y = old.clone()
    y[_torch_index(t, index)] = value
    return y


def _index_backward(t, g, shape, index, advanced):
    z = t.zeros(shape, dtype=g.dtype)
    z[_torch_index(t, index)] = g
    return z


def _all_dims(x):
    return tuple(range(x.ndim))


TORCH = {
    "neg": lambda t, x: -x,
    "arcsin": lambda t, x: t.asin(x),
    "arccos": lambda t, x: t.acos(x),
    "arctan": lambda t, x: t.atan(x),
    "softplus": lambda t, x, beta=1.0, threshold=20.0: t.nn.functional.softplus(x, beta, threshold),
    "clip": lambda t, x, lo=None, hi=None: t.clamp(x, lo, hi),
    "pow_scalar": lambda t, x, exponent: x**exponent,
    "rpow": lambda t, x, base: base**x,
    "rsub": lambda t, x, other: other - x,
    "add": lambda t, a, b: a + b,
    "sub": lambda t, a, b: a - b,
    "mul": lambda t, a, b: a * b,
    "div": lambda t, a, b: a / b,
    "pow": lambda t, a, b: a**b,
    "where": lambda t, c, a, b: t.where(c.bool(), a, b),
    "sum": lambda t, x, axis=None, keepdims=False: (
        x.sum() if axis is None else x.sum(dim=axis, keepdim=keepdims)
    ),
    "mean": lambda t, x, axis=None, keepdims=False: (
        x.mean() if axis is None else x.mean(dim=axis, keepdim=keepdims)
    ),
    "prod": _prod,
    "var": lambda t, x, axis=None, keepdims=False, correction=1: t.var(
        x, dim=axis, keepdim=keepdims, correction=correction
    ),
    "std": lambda t, x, axis=None, keepdims=False, correction=1: t.std(
        x, dim=axis, keepdim=keepdims, correction=correction
    ),
    "cumsum": lambda t, x, axis=0: t.cumsum(x, dim=axis),
    "amax": lambda t, x, axis=None, keepdims=False: (
        x.max() if axis is None else t.amax(x, dim=axis, keepdim=keepdims)
    ),
    "amin": lambda t, x, axis=None, keepdims=False: (
        x.min() if axis is None else t.amin(x, dim=axis, keepdim=keepdims)
    ),
    "max_dim": lambda t, x, axis, keepdims=False: t.max(x, dim=axis, keepdim=keepdims).values,
    "min_dim": lambda t, x, axis, keepdims=False: t.min(x, dim=axis, keepdim=keepdims).values,
    "logsumexp": lambda t, x, axis=None, keepdims=False: t.logsumexp(
        x, dim=_all_dims(x) if axis is None else axis, keepdim=keepdims
    ),
    "softmax": lambda t, x, axis=-1: t.softmax(x, dim=axis),
    "log_softmax": lambda t, x, axis=-1: t.log_softmax(x, dim=axis),
    "norm": lambda t, x, ord=2.0, axis=None, keepdims=False: t.linalg.vector_norm(
        x, ord=ord, dim=axis, keepdim=keepdims
    ),
    "reshape": lambda t, x, shape: x.reshape(shape),
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "permute": lambda t, x, axes: x.permute(axes),
    "transpose": lambda t, x, dim0, dim1: x.transpose(dim0, dim1),
    "expand": lambda t, x, shape: x.expand(shape),
    "astype": lambda t, x, dtype: x.to(getattr(t, np.dtype(dtype).name), copy=True),
    "sum_to": lambda t, x, shape: x.sum_to_size(shape),
    "index": lambda t, x, index, advanced: x[_torch_index(t, index)],
    "index_backward": _index_backward,
    "setitem": _setitem,
    "concat": lambda t, *xs, axis=0: t.cat(xs, dim=axis),
    "stack": lambda t, *xs, axis=0: t.stack(xs, dim=axis),
    "unbind": lambda t, x, index, advanced: x.unbind(0)[index[0]],
}
SAME_NAME = [
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "abs",
    "sign",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "sigmoid",
    "relu",
    "reciprocal",
    "clone",
    "maximum",
    "minimum",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
    "matmul",
    "logical_and",
    "logical_or",
    "logical_xor",
]


def torch_fn(name):
    if name in TORCH:
        return TORCH[name]
    return lambda t, *xs, **kw: getattr(t, name)(*xs, **kw)


def test_every_op_has_a_torch_equivalent():
    missing = [n for n in TABLE if n not in TORCH and n not in SAME_NAME]
    assert missing == []


@pytest.mark.parametrize("op,case", all_cases())
def test_matches_pytorch(op, case):
    torch = pytest.importorskip("torch")
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
    if op.name not in INTERNAL:
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
    "op,case", [p for p in all_cases(differentiable_only=True) if p.values[0].holomorphic]
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
