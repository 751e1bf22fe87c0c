"""The test side of the op table: one entry per op, for what the engine's entry cannot say
about itself (PyTorch's OpInfo, for agrad).

- ``torch``: the oracle, PyTorch's equivalent as ``(torch, *tensors, **params) -> tensor``
  (None: ``torch.<op name>`` with the same arguments);
- ``program``: a program of the language that reaches the op, and its ``--set`` values
  (``agrad check`` runs it broken and unbroken), or ``not_in_language``: why none does;
- ``api``, ``method``: Python expressions reaching it through ``agrad.*`` and a Tensor
  method, for entries whose family does not say how (custom ones);
- ``zero_gradient``: its VJP is 0 everywhere, so no mutation of it can change a result;
- ``vjp_only``: used only inside VJP rules, never recorded by a forward program.

Expressions and programs see ``x``, ``y`` (vectors of 4), ``p`` (positive), ``s`` (small),
``m`` (a 2x4 matrix), ``q`` (a 3x3 matrix), ``S`` (symmetric positive definite, 3x3) and
``mask`` (a 0/1 vector); ``tests/test_op_faces.py`` runs them.
Everything else about an op (its shapes, domain, special values, saved values, faces)
is in its `Op` entry; `INFO` must have one entry per op of the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agrad.engine.ops import TABLE

X = "[0.3, -1.2, 0.7, 1.6]"
Y = "[1.1, 0.4, -0.8, 0.5]"
POS = "[0.4, 1.3, 0.8, 2.1]"
SMALL = "[0.3, -0.6, 0.45, -0.2]"
A = "[[0.5, -1.0, 0.25, 0.8], [1.5, 0.2, -0.7, 0.1]]"
IMAGE = "reshape(sin(arange(32) * 1.3), [1, 2, 4, 4])"  # (N, C, H, W), no ties
KERNEL = "reshape(cos(arange(24) * 0.7), [3, 2, 2, 2])"
Q = "[[2.0, 0.5, -0.3], [0.4, 1.5, 0.2], [-0.1, 0.3, 1.8]]"  # well-conditioned
SPD = "[[2.0, 0.5, 0.1], [0.5, 1.5, 0.3], [0.1, 0.3, 1.2]]"  # symmetric positive definite
VALUES = {"x": X, "y": Y, "p": POS, "s": SMALL, "m": A, "mask": "[1, 0, 0, 1]", "img": IMAGE,
          "w": KERNEL, "q": Q, "S": SPD}  # fmt: skip


@dataclass(frozen=True)
class Info:
    torch: Callable[..., Any] | None = None
    program: tuple[str, dict[str, str]] | None = None
    not_in_language: str = ""
    api: str = ""
    method: str = ""
    zero_gradient: bool = False
    vjp_only: bool = False  # used only inside VJP rules: never recorded by a forward program
    # False: the PyTorch reference composes the op from others (windows is pad + unfold), so
    # its grad_fn is named otherwise; the names are not compared.
    same_grad_fn: bool = True
    # False: PyTorch composes the op from others (kron, einsum), which save their own copies:
    # a write into an input after recording does not reach them, so the refusals differ.
    same_saves: bool = True


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


def _unfold_backward(t, g, length, dimension, size, step):
    d = g.ndim - 1 + dimension
    shape = (*g.shape[:d], length, *g.shape[d + 1 : -1])
    return t.ops.aten.unfold_backward(g, shape, d, size, step)


def _as_strided(t, x, ids):
    """PyTorch's as_strided for flat positions that form a strided grid (the test cases)."""
    ids = np.asarray(ids)
    stride = [int(np.diff(ids, axis=d).flat[0]) if ids.shape[d] > 1 else 1 for d in range(ids.ndim)]
    return x.as_strided(ids.shape, stride, int(ids.flat[0]))


def _copy_slices(t, base, value, ids):
    y = base.clone()
    y.view(-1)[t.as_tensor(ids)] = value  # an index_put_ into a view: CopySlices on y
    return y


def _all_dims(x):
    return tuple(range(x.ndim))


def _reduce(name):
    """PyTorch's reduction of that name, with NumPy's axis and keepdims."""

    def fn(t, x, axis=None, keepdims=False):
        if axis is None:
            return getattr(t, name)(x)
        return getattr(t, name)(x, dim=axis, keepdim=keepdims)

    return fn


def _cli(program: str, *names: str, **values: str) -> tuple[str, dict[str, str]]:
    """A program and its --set values: ``_cli("sum(x * y)", "x", "y")`` takes the standard
    values of x and y; ``_cli("sum(log(x))", x=POS)`` chooses them."""
    return program, {**{n: VALUES[n] for n in names}, **values}


def _torch_clamp(t, x, *limits, bounds="both", name=""):
    """PyTorch's clamp with tensor bounds, as agrad's public functions reach the entry."""
    if name:  # clamp_min(x, t), clamp_max(x, t)
        return getattr(t, name)(x, limits[0])
    return t.clamp(x, *limits) if bounds == "both" else t.clamp(x, **{bounds: limits[0]})


def _sample(name: str) -> Info:
    """An op of a generated family reached by its name, in a program of the language."""
    return Info(program=_cli(f"sum({name}(x))", "x"))


INFO: dict[str, Info] = {
    "neg": Info(lambda t, x: -x, _cli("sum(-x * x)", "x")),
    "exp": _sample("exp"),
    "log": Info(program=_cli("sum(log(x))", x=POS)),
    "log1p": Info(program=_cli("sum(log1p(x))", x=POS)),
    "expm1": _sample("expm1"),
    "sqrt": Info(program=_cli("sum(sqrt(x))", x=POS)),
    "abs": _sample("abs"),
    "sign": Info(program=_cli("sum(sign(x) * x)", "x"), zero_gradient=True),
    "floor": Info(program=_cli("sum(floor(x) * x)", "x"), zero_gradient=True),
    "ceil": Info(program=_cli("sum(ceil(x) * x)", "x"), zero_gradient=True),
    "trunc": Info(program=_cli("sum(trunc(x) * x)", "x"), zero_gradient=True),
    "round": Info(program=_cli("sum(round(x) * x)", "x"), zero_gradient=True),
    "log10": Info(program=_cli("sum(log10(x))", x=POS)),
    "log2": Info(program=_cli("sum(log2(x))", x=POS)),
    "rsqrt": Info(program=_cli("sum(rsqrt(x))", x=POS)),
    "remainder": Info(
        lambda t, a, b: t.remainder(a, b),
        _cli("sum(remainder(x, p) * y)", "x", "y", "p"),
        method="x % 2.0",
    ),
    "floor_divide": Info(
        not_in_language="the Python API's // (not differentiable)", method="x // 2.0"
    ),
    "div_rounding": Info(
        lambda t, a, b, rounding_mode="trunc": t.div(a, b, rounding_mode=rounding_mode),
        not_in_language="the Python API's div(a, b, rounding_mode=...)",
        api="agrad.div(x, p, rounding_mode='floor')",
        method="x.div(p, rounding_mode='trunc')",
    ),
    "sin": _sample("sin"),
    "cos": _sample("cos"),
    "tan": Info(program=_cli("sum(tan(x))", x=SMALL)),
    "arcsin": Info(lambda t, x: t.asin(x), _cli("sum(arcsin(x))", x=SMALL)),
    "arccos": Info(lambda t, x: t.acos(x), _cli("sum(arccos(x))", x=SMALL)),
    "arctan": Info(lambda t, x: t.atan(x), _cli("sum(arctan(x))", "x")),
    "sinh": _sample("sinh"),
    "cosh": _sample("cosh"),
    "tanh": _sample("tanh"),
    "sigmoid": _sample("sigmoid"),
    "relu": Info(program=_cli("sum(relu(x) * x)", "x")),
    "reciprocal": Info(program=_cli("sum(reciprocal(x))", x=POS)),
    "clone": Info(not_in_language="engine API only (Tensor.clone)"),
    "softplus": Info(
        lambda t, x, beta=1.0, threshold=20.0: t.nn.functional.softplus(x, beta, threshold),
        _cli("sum(softplus(x))", "x"),
        api="agrad.softplus(x, beta=2.0)",
        method="x.softplus()",
    ),
    "clip": Info(
        lambda t, x, min=None, max=None: t.clamp(x, min, max),
        _cli("sum(clip(x, min=-1, max=1) ** 2)", "x"),
        api="agrad.clamp(x, -1.0, 1.0)",
        method="x.clip(max=1.0)",
    ),
    "clamp_tensor": Info(
        _torch_clamp,
        _cli("sum(clip(x, min=y * 0.5, max=p) ** 2)", "x", "y", "p"),
        api="agrad.clamp(x, min=y)",
        method="x.clamp_max(p)",
    ),
    "pow_scalar": Info(
        lambda t, x, exponent: x**exponent,
        _cli("sum(x ** 3)", "x"),
        api="agrad.pow(x, 3.0)",
        method="x.pow(2)",
    ),
    "rpow": Info(
        lambda t, x, base: base**x,
        _cli("sum(2 ** x)", "x"),
        api="agrad.pow(2.0, x)",
        method="2.0 ** x",
    ),
    "rsub": Info(
        lambda t, x, other: other - x,
        _cli("sum((1 - x) * y)", "x", "y"),
        api="agrad.rsub(x, 1.0)",
        method="1.0 - x",
    ),
    "add": Info(
        lambda t, a, b: a + b,
        _cli("sum((x + y) ** 2)", "x", "y"),
        api="agrad.add(x, y, alpha=2)",
        method="x.add(y)",
    ),
    "sub": Info(
        lambda t, a, b: a - b,
        _cli("sum((x - y) ** 2)", "x", "y"),
        api="agrad.sub(x, y)",
        method="x - y",
    ),
    "mul": Info(lambda t, a, b: a * b, _cli("sum(x * y)", "x", "y")),
    "div": Info(lambda t, a, b: a / b, _cli("sum(x / y)", "x", "y")),
    "pow": Info(
        lambda t, a, b: a**b,
        _cli("sum(x ** y)", "y", x=POS),
        api="agrad.pow(p, y)",
        method="p.pow(y)",
    ),
    "asinh": _sample("asinh"),
    "acosh": Info(program=_cli("sum(acosh(p + 1))", "p")),
    "atanh": Info(program=_cli("sum(atanh(s))", "s")),
    "exp2": _sample("exp2"),
    "logit": Info(program=_cli("sum(logit(p / 3))", "p"), api="agrad.logit(p / 3, 0.2)"),
    "frac": Info(program=_cli("sum(frac(x * 3))", "x")),
    "nan_to_num": Info(
        not_in_language="the language's values are finite where it is differentiated",
        api="agrad.nan_to_num(x / mask)",
        method="x.nan_to_num(nan=1.0, posinf=2.0)",
    ),
    "atan2": Info(program=_cli("sum(atan2(x, y))", "x", "y")),
    "hypot": Info(program=_cli("sum(hypot(x, y))", "x", "y")),
    "logaddexp": Info(program=_cli("sum(logaddexp(x, y))", "x", "y")),
    "logaddexp2": Info(
        not_in_language="logaddexp2 is a Python-API op (the language has logaddexp)",
        api="agrad.logaddexp2(x, y)",
        method="x.logaddexp2(y)",
    ),
    "xlogy": Info(
        not_in_language="xlogy is a Python-API op", api="agrad.xlogy(x, p)", method="x.xlogy(p)"
    ),
    "fmod": Info(
        not_in_language="fmod is a Python-API op (the language has remainder)",
        api="agrad.fmod(x, 0.5)",
        method="p.fmod(y + 2)",
    ),
    "maximum": Info(program=_cli("sum(maximum(x, y))", "x", "y")),
    "minimum": Info(program=_cli("sum(minimum(x, y))", "x", "y")),
    "where": Info(
        lambda t, c, a, b: t.where(c.bool(), a, b),
        _cli("sum(where(x > 0, x ** 2, 3 * x))", "x"),
        api="agrad.where(mask, x, y)",
        method="x.where(mask > 0, y)",
    ),
    "lt": Info(program=_cli("sum((x < y) * x)", "x", "y")),
    "le": Info(program=_cli("sum((x <= y) * x)", "x", "y")),
    "gt": Info(program=_cli("sum((x > y) * x)", "x", "y")),
    "ge": Info(program=_cli("sum((x >= y) * x)", "x", "y")),
    "eq": Info(program=_cli("sum((x == y) * x)", "x", "y")),
    "ne": Info(program=_cli("sum((x != y) * x)", "x", "y")),
    "logical_and": Info(not_in_language="the language has no boolean operators"),
    "logical_or": Info(not_in_language="the language has no boolean operators"),
    "logical_xor": Info(not_in_language="the language has no boolean operators"),
    "logical_not": Info(not_in_language="the language has no boolean operators", method="~(x > 0)"),
    "sum": Info(
        lambda t, x, axis=None, keepdims=False: (
            x.sum() if axis is None else x.sum(dim=axis, keepdim=keepdims)
        ),
        _cli("sum(x * y, axis=0)", "x", "y"),
    ),
    "mean": Info(
        lambda t, x, axis=None, keepdims=False: (
            x.mean() if axis is None else x.mean(dim=axis, keepdim=keepdims)
        ),
        _cli("mean(x ** 2)", "x"),
        api="agrad.mean(m, dim=1)",
        method="m.mean(axis=0, keepdims=True)",
    ),
    "prod": Info(_prod, _cli("prod(x)", "x")),
    "amax": Info(
        lambda t, x, axis=None, keepdims=False: (
            x.max() if axis is None else t.amax(x, dim=axis, keepdim=keepdims)
        ),
        _cli("max(x * y)", "x", "y"),
    ),
    "amin": Info(
        lambda t, x, axis=None, keepdims=False: (
            x.min() if axis is None else t.amin(x, dim=axis, keepdim=keepdims)
        ),
        _cli("min(x * y)", "x", "y"),
    ),
    "max_dim": Info(
        lambda t, x, axis, keepdims=False: t.max(x, dim=axis, keepdim=keepdims).values,
        not_in_language="max(x, axis=...) builds amax",
        api="agrad.max(m, 1).values",
        method="m.max(dim=0)[0]",
    ),
    "min_dim": Info(
        lambda t, x, axis, keepdims=False: t.min(x, dim=axis, keepdim=keepdims).values,
        not_in_language="min(x, axis=...) builds amin",
        api="agrad.min(m, 1).values",
        method="m.min(0, keepdim=True).values",
    ),
    "var": Info(
        lambda t, x, axis=None, keepdims=False, correction=1: t.var(
            x, dim=axis, keepdim=keepdims, correction=correction
        ),
        _cli("var(x)", "x"),
        api="agrad.var(m, dim=1, unbiased=False)",
        method="m.var()",
    ),
    "std": Info(
        lambda t, x, axis=None, keepdims=False, correction=1: t.std(
            x, dim=axis, keepdim=keepdims, correction=correction
        ),
        _cli("std(x)", "x"),
        api="agrad.std(m, axis=0)",
        method="m.std(1)",
    ),
    "cumsum": Info(lambda t, x, axis: t.cumsum(x, dim=axis), _cli("sum(cumsum(x) * x)", "x")),
    "cumprod": Info(
        lambda t, x, axis: t.cumprod(x, dim=axis), _cli("sum(cumprod(x) * y)", "x", "y")
    ),
    "logsumexp": Info(
        lambda t, x, axis=None, keepdims=False: t.logsumexp(
            x, dim=_all_dims(x) if axis is None else axis, keepdim=keepdims
        ),
        _cli("logsumexp(x)", "x"),
    ),
    "softmax": Info(
        lambda t, x, axis: t.softmax(x, dim=axis), _cli("sum(softmax(x) * y)", "x", "y")
    ),
    "log_softmax": Info(
        lambda t, x, axis: t.log_softmax(x, dim=axis), _cli("sum(log_softmax(x) * y)", "x", "y")
    ),
    "norm": Info(
        lambda t, x, ord=2.0, axis=None, keepdims=False: t.linalg.vector_norm(
            x, ord=ord, dim=axis, keepdim=keepdims
        ),
        _cli("norm(x)", "x"),
        api="agrad.norm(m, 1, dim=1)",
        method="m.norm(p=3.0)",
    ),
    "any": Info(_reduce("any"), not_in_language="no boolean results in the language"),
    "all": Info(_reduce("all"), not_in_language="no boolean results in the language"),
    "argmax": Info(_reduce("argmax"), not_in_language="no integer results in the language"),
    "argmin": Info(_reduce("argmin"), not_in_language="no integer results in the language"),
    "matmul": Info(
        program=_cli("sum(tanh(A @ x))", "x", A=A), api="agrad.dot(x, y)", method="m @ x"
    ),
    "reshape": Info(
        lambda t, x, shape: x.reshape(shape),
        _cli("sum(reshape(x, [2, 2]) ** 3)", "x"),
        api="agrad.reshape(x, 2, 2)",
        method="x.view(-1, 1)",
    ),
    "unsqueeze": Info(
        _unsqueeze,
        not_in_language="engine API only",
        api="agrad.unsqueeze(x, 0)",
        method="x.unsqueeze(1)",
    ),
    "squeeze": Info(
        _squeeze,
        not_in_language="engine API only",
        api="agrad.squeeze(m[:1])",
        method="m[:1].squeeze(0)",
    ),
    "permute": Info(
        lambda t, x, axes: x.permute(axes),
        _cli("sum(transpose(A) ** 3)", A=A),
        api="agrad.transpose(m)",
        method="m.T",
    ),
    "transpose": Info(
        lambda t, x, dim0, dim1: x.transpose(dim0, dim1),
        not_in_language="the language's transpose(x, axes) and .T build permute",
        api="agrad.swapaxes(m, 0, 1)",
        method="m.t()",
    ),
    "expand": Info(
        lambda t, x, shape: x.expand(shape),
        not_in_language="engine API only (broadcasting is the ops' own)",
        api="agrad.broadcast_to(x, (2, 4))",
        method="x.expand(3, -1)",
    ),
    "astype": Info(
        lambda t, x, dtype: x.to(getattr(t, np.dtype(dtype).name), copy=True),
        not_in_language="engine API only (--dtype converts inputs, not the graph)",
        api="agrad.astype(x, agrad.float32)",
        method="x.float()",
    ),
    "sum_to": Info(
        lambda t, x, shape: x.sum_to_size(shape),
        not_in_language="used inside VJP rules",
        vjp_only=True,
    ),
    "index": Info(
        lambda t, x, index, advanced: x[_torch_index(t, index)],
        _cli("3 * x[1] + sum(x[2:] ** 2)", "x"),
        method="m[0, 1:]",
    ),
    "unbind": Info(
        lambda t, x, index, advanced: x.unbind(0)[index[0]],
        not_in_language="engine API only (iteration over a tensor)",
        api="agrad.unbind(m)[1]",
        method="list(x)[2]",
    ),
    "index_backward": Info(_index_backward, not_in_language="used inside VJP rules", vjp_only=True),
    "setitem": Info(
        _setitem,
        _cli("z = zeros(4); z[0] = x[0] * 2; z[1:] = x[1:] ** 2; sum(z * z)", "x"),
    ),
    "as_strided": Info(
        _as_strided,
        _cli("t0 = x * 1; t1 = t0[1:]; t1[0] = 5; sum(t1 * t1 * t0[:3])", "x"),
    ),
    "copy_slices": Info(
        _copy_slices,
        _cli("t0 = x * 1; t1 = t0[1:]; t1[0:2] = exp(x[:2]); sum(t0 * t0)", "x"),
    ),
    "concat": Info(
        lambda t, *xs, axis=0: t.cat(xs, dim=axis),
        _cli("sum(concat([x, y]) ** 3)", "x", "y"),
        api="agrad.cat([x, y])",
    ),
    "stack": Info(
        lambda t, *xs, axis=0: t.stack(xs, dim=axis),
        _cli("sum(stack([x, y]) ** 3)", "x", "y"),
        api="agrad.stack([x, y], 1)",
    ),
    "unfold": Info(
        lambda t, x, dimension, size, step: x.unfold(dimension, size, step),
        not_in_language="engine API only (Tensor.unfold)",
        method="x.unfold(0, 2, 1)",
    ),
    "unfold_backward": Info(
        _unfold_backward, not_in_language="used inside VJP rules", vjp_only=True
    ),
}


# ---- the neural-network entries (agrad.nn's heavy ops) ------------------------------------


def _flat_pads(padding):
    """(before, after) pairs per trailing dim -> F.pad's widths, last dim first."""
    return [w for pair in reversed(padding) for w in pair]


def _torch_windows(t, x, kernel, stride, padding, dilation):
    y = t.nn.functional.pad(x, _flat_pads(padding))
    for i, (k, st, dl) in enumerate(zip(kernel, stride, dilation, strict=True)):
        dim = x.ndim - len(kernel) + i  # new window axes go last, so this stays the i-th
        y = y.unfold(dim, dl * (k - 1) + 1, st)[..., ::dl]
    return y


def _torch_windows_backward(t, g, spatial, kernel, stride, padding, dilation):
    lead = tuple(g.shape[: g.ndim - 2 * len(kernel)])
    z = t.zeros(lead + tuple(spatial), dtype=g.dtype, requires_grad=True)
    y = _torch_windows(t, z, kernel, stride, padding, dilation)
    return t.autograd.grad(y, z, g, create_graph=True)[0]  # the adjoint, differentiable in g


def _torch_conv(d):
    def fn(t, x, w, *b, stride, padding, dilation, groups):
        pad = tuple(lo for lo, hi in padding)
        assert all(lo == hi for lo, hi in padding), "PyTorch's conv pads evenly"
        conv = getattr(t.nn.functional, f"conv{d}d")
        return conv(x, w, b[0] if b else None, stride, pad, dilation, groups)

    return fn


def _torch_batch_norm(t, x, w, b, running_mean=None, running_var=None, training=True, eps=1e-5):
    rm = None if running_mean is None else t.tensor(running_mean)
    rv = None if running_var is None else t.tensor(running_var)
    return t.nn.functional.batch_norm(x, rm, rv, w, b, training, 0.1, eps)


def _torch_nll(t, x, target, weight=None, ignore_index=-100, reduction="mean"):
    w = None if weight is None else t.tensor(weight)
    return t.nn.functional.nll_loss(x, t.tensor(target), w, ignore_index=ignore_index,
                                    reduction=reduction)  # fmt: skip


def _torch_bce_backward(t, g, x, tgt, weight=None, reduction="mean"):
    """PyTorch's kernel, given the cotangent of the loss (one per loss, or the reduced one,
    which agrad's entry receives broadcast to the input's shape: (1,) * ndim)."""
    if reduction != "none":
        g = g.reshape(())
    w = None if weight is None else t.as_tensor(weight, dtype=x.dtype)
    code = {"none": 0, "mean": 1, "sum": 2}[reduction]
    return t.ops.aten.binary_cross_entropy_backward(g, x, tgt, w, code)


NN_INFO = {
    "windows": Info(
        _torch_windows,
        not_in_language="inside conv/pooling VJPs and F.unfold",
        same_grad_fn=False,
        method="agrad.nn.functional.unfold(m.reshape(1, 1, 2, 4), 2)",
    ),
    "windows_backward": Info(
        _torch_windows_backward,
        not_in_language="inside conv/pooling VJPs and F.fold",
        same_grad_fn=False,
        method="agrad.nn.functional.fold(m.reshape(1, 4, 2), (2, 3), 2)",
    ),
    "conv2d": Info(
        _torch_conv(2),
        _cli("sum(tanh(conv2d(img, w, stride=2, padding=1)))", "img", "w"),
        api="agrad.conv2d(m.reshape(1, 1, 2, 4), agrad.ones(1, 1, 2, 2), padding='same')",
    ),
    "conv1d": Info(
        _torch_conv(1),
        not_in_language="the language has conv2d only",
        api="agrad.nn.functional.conv1d(m.reshape(1, 2, 4), agrad.ones(3, 2, 2), stride=2)",
    ),
    "max_pool2d": Info(
        lambda t, x, kernel, stride, padding, dilation, ceil_mode=False: t.nn.functional.max_pool2d(
            x, kernel, stride, padding, dilation, ceil_mode
        ),
        _cli("sum(max_pool2d(img, 2, stride=1) ** 2)", "img"),
        api="agrad.max_pool2d(m.reshape(1, 2, 4), 2)",
    ),
    "avg_pool2d": Info(
        lambda t, x, kernel, stride, padding, **options: t.nn.functional.avg_pool2d(
            x, kernel, stride, padding, **options
        ),
        _cli("sum(avg_pool2d(img, 3, stride=1, padding=1) ** 2)", "img"),
        api="agrad.avg_pool2d(m.reshape(1, 2, 4), 2, stride=1)",
    ),
    "adaptive_avg_pool2d": Info(
        lambda t, x, output_size: t.nn.functional.adaptive_avg_pool2d(x, output_size),
        _cli("sum(adaptive_avg_pool2d(img, [3, 2]) ** 2)", "img"),
        api="agrad.adaptive_avg_pool2d(m.reshape(1, 2, 4), (None, 3))",
    ),
    "batch_norm": Info(
        _torch_batch_norm,
        _cli("sum(batch_norm(img, weight=[1.5, 0.5], bias=[0.1, 0.2]) ** 3)", "img"),
        api="agrad.nn.functional.batch_norm(m, None, None, training=True)",
    ),
    "layer_norm": Info(
        lambda t, x, w, b, normalized_shape, eps=1e-5: t.nn.functional.layer_norm(
            x, normalized_shape, w, b, eps
        ),
        _cli("sum(layer_norm(m, [4]) ** 3)", "m"),
        api="agrad.nn.functional.layer_norm(m, 4)",
    ),
    "binary_cross_entropy_with_logits": Info(
        lambda t, x, tgt, weight=None, pos_weight=None, reduction="mean": (
            t.nn.functional.binary_cross_entropy_with_logits(
                x,
                tgt,
                weight=None if weight is None else t.as_tensor(weight),
                pos_weight=None if pos_weight is None else t.as_tensor(pos_weight),
                reduction=reduction,
            )
        ),
        not_in_language="a Python-API loss (agrad.nn.functional)",
        api="agrad.nn.functional.binary_cross_entropy_with_logits(x, agrad.sigmoid(y))",
    ),  # fmt: skip
    "binary_cross_entropy": Info(
        lambda t, x, tgt, weight=None, reduction="mean": t.nn.functional.binary_cross_entropy(
            x,
            tgt,
            weight=None if weight is None else t.as_tensor(weight, dtype=x.dtype),
            reduction=reduction,
        ),
        not_in_language="a Python-API loss (agrad.nn.functional)",
        api="agrad.nn.functional.binary_cross_entropy(agrad.sigmoid(x), agrad.sigmoid(y))",
    ),
    "binary_cross_entropy_backward": Info(
        _torch_bce_backward, not_in_language="used inside VJP rules", vjp_only=True
    ),
    "index_add": Info(
        lambda t, x, src, dim, index, alpha=1: x.index_add(
            dim, t.as_tensor(index), src, alpha=alpha
        ),
        not_in_language="index_add is a Python-API op (PyTorch's index_add / index_add_)",
        api="agrad.index_add(m, 1, agrad.tensor([0, 3]), m[:, :2])",
        method="m.index_add(1, agrad.tensor([3, 3]), m[:, 1:3], alpha=2)",
    ),  # fmt: skip
    "nll_loss": Info(
        _torch_nll,
        _cli("cross_entropy(m, t)", "m", t="[1, 3]"),
        api="agrad.nn.functional.nll_loss(m, agrad.tensor([0, 3]))",
    ),
    "erf": Info(program=_cli("sum(erf(x) * x)", "x")),
    "gelu": Info(
        lambda t, x, approximate="none": t.nn.functional.gelu(x, approximate=approximate),
        _cli("sum(gelu(x))", "x"),
        api="agrad.nn.functional.gelu(x, approximate='tanh')",
    ),
}
INFO.update(NN_INFO)


# ---- matrix calculus (engine/ops/matrix.py, decomp.py, einsum.py) ------------------------

LINALG_INFO = {
    "trace": Info(
        program=_cli("trace(q @ q)", "q"), api="agrad.trace(m @ m.T)", method="m.trace()"
    ),
    "diagonal": Info(
        program=_cli("sum(diagonal(q, 1) ** 2)", "q"),
        api="agrad.diagonal(m, 1)",
        method="m.diagonal()",
    ),
    "diagonal_backward": Info(
        lambda t, g, shape, offset, dim1, dim2: t.diagonal_scatter(
            t.zeros(shape, dtype=g.dtype), g, offset, dim1, dim2
        ),
        not_in_language="used inside VJP rules",
        vjp_only=True,
    ),
    "diag_embed": Info(
        program=_cli("sum(diag(x) @ m.T)", "x", "m"),
        api="agrad.diag_embed(m, 1)",
        method="x.diag_embed()",
    ),
    "tril": Info(program=_cli("sum(tril(q) ** 2)", "q"), api="agrad.tril(m, 1)", method="q.tril()"),
    "triu": Info(
        program=_cli("sum(triu(q, -1) ** 2)", "q"), api="agrad.triu(m)", method="q.triu(1)"
    ),
    "kron": Info(
        program=_cli("sum(kron(q, x[:2]) ** 2)", "q", "x"),
        api="agrad.kron(x, y)",
        method="m.kron(q)",
        same_saves=False,
    ),
    "einsum": Info(
        lambda t, *xs, equation: t.einsum(equation, *xs),
        _cli('sum(einsum("ij,j->i", m, x) ** 2)', "m", "x"),
        api="agrad.einsum('ij,j->i', m, x)",
        same_grad_fn=False,
        same_saves=False,
    ),
    "det": Info(program=_cli("det(q)", "q"), api="agrad.linalg.det(q)", method="q.det()"),
    "slogdet": Info(
        lambda t, x: t.linalg.slogdet(x)[1],
        _cli("logdet(S)", "S"),
        api="agrad.linalg.slogdet(q).logabsdet",
        method="S.slogdet()[1]",
    ),
    "inv": Info(
        lambda t, x: t.linalg.inv(x),
        _cli("sum(inv(q) * q.T)", "q"),
        api="agrad.linalg.inv(q)",
        method="q.inverse()",
    ),
    "solve": Info(
        lambda t, a, b, vector=None: t.linalg.solve(a, b),
        _cli("sum(solve(q, x[:3]) ** 2)", "q", "x"),
        api="agrad.linalg.solve(q, m[:, :3].T)",
    ),
    "cholesky": Info(
        lambda t, x, upper=False: t.linalg.cholesky(x, upper=upper),
        _cli("sum(cholesky(S) ** 2)", "S"),
        api="agrad.linalg.cholesky(S)",
        method="S.cholesky()",
    ),
}
INFO.update(LINALG_INFO)

# For tests/test_check.py: the ops `agrad check` is run on, broken and unbroken.
_DIFFERENTIABLE = [name for name, op in TABLE.items() if op.vjp is not None]
CLI_PROGRAMS = {n: INFO[n].program for n in _DIFFERENTIABLE if INFO[n].program is not None}
NOT_IN_LANGUAGE = {n: INFO[n].not_in_language for n in _DIFFERENTIABLE if n not in CLI_PROGRAMS}
ZERO_GRADIENT = {n for n, info in INFO.items() if info.zero_gradient}


def torch_fn(name: str) -> Callable[..., Any]:
    """PyTorch's equivalent of op ``name``."""
    oracle = INFO[name].torch
    if oracle is not None:
        return oracle
    return lambda t, *xs, **kw: getattr(t, name)(*xs, **kw)
