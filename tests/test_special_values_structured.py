"""Every op of the table that is not elementwise (reductions, softmax, cumulative ops,
linear algebra, convolution, pooling, normalisation, losses, shapes and indexing) at
special values, against PyTorch: each of its configurations, and more shapes for the
reductions (0-d with and without an axis, one element, a singleton axis, empty), with
each differentiable input filled in turn with zeros, ones (ties, singular matrices), one
zero, one nan, one ±inf, all ±inf, and for square matrices the identity (repeated
eigenvalues), its negative (not positive-definite) and a rank-1 matrix. Values and
gradients (a fixed random cotangent) must agree, nan with nan and inf with inf, and
where PyTorch refuses agrad must refuse too (and the other way round).

Where PyTorch's own number is wrong or undefined, agrad differs on purpose and says so in
the README; those cases are listed in `KNOWN`, and the tests after the generated one check
what agrad gives there against algebra or finite differences instead."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import require_torch
from opinfo import INFO, torch_fn

import agrad
from agrad.engine.ops import TABLE, apply
from agrad.engine.ops.core import Case, broadcast_shape, same_shape

OPS = [
    op for op in TABLE.values()
    if op.vjp is not None and op.shape_rule not in (same_shape, broadcast_shape)
    and not INFO[op.name].vjp_only
]  # fmt: skip


def fills(shape, rng):
    """Special contents for an input of ``shape``, by name."""
    base = rng.uniform(-2.0, 2.0, size=shape)
    out = {"zeros": np.zeros(shape), "ones": np.ones(shape)}
    if base.size:
        for name, value in (("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf), ("zero", 0.0)):
            a = base.copy()
            a.flat[0] = value
            out[name] = a
        out["all -inf"], out["all +inf"] = np.full(shape, -np.inf), np.full(shape, np.inf)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        n = shape[-1]
        out["identity"] = np.broadcast_to(np.eye(n), shape).copy()
        out["-identity"] = -out["identity"]
        out["rank 1"] = np.broadcast_to(
            np.outer(np.arange(1.0, n + 1), np.arange(1.0, n + 1)), shape
        ).copy()
    return out


def _more_cases(op):
    """Shapes users reach and the table's cases leave out: 0-d (with an axis: PyTorch takes
    0 and -1), one element, a singleton axis, empty."""
    if op.name in ("max_dim", "min_dim"):
        return [Case(((),), {"axis": 0}), Case(((),), {"axis": -1}), Case(((1,),), {"axis": 0}),
                Case(((2, 1),), {"axis": 1})]  # fmt: skip
    if op.family == "along_axis":
        return [Case(((),), {"axis": 0}), Case(((),), {"axis": -1}), Case(((1,),), {"axis": 0}),
                Case(((0,),), {"axis": 0}), Case(((2, 0),), {"axis": 1})]  # fmt: skip
    if op.family == "reduction" or op.name in ("mean", "var", "std", "norm"):
        return [Case(((),)), Case(((),), {"axis": 0}), Case(((),), {"axis": -1, "keepdims": True}),
                Case(((1,),)), Case(((2, 1),), {"axis": 1}), Case(((0,),)),
                Case(((2, 0),), {"axis": 1})]  # fmt: skip
    return []


def samples(op):
    """(label, arrays, params) for each case of ``op`` and each special fill of each of
    its differentiable inputs."""
    rng = np.random.default_rng(0)
    for case in [*op.cases, *_more_cases(op)]:
        base = [rng.uniform(*op.domain_of(i), size=s) for i, s in enumerate(case.shapes)]
        for i in op.nondiff:
            base[i] = (base[i] > 0).astype(np.float64)
        for i in op.differentiable_inputs(len(base)):
            for name, filled in fills(case.shapes[i], rng).items():
                arrays = list(base)
                arrays[i] = filled
                yield f"{case.shapes} {case.params} input {i} = {name}", arrays, case.params


# Where agrad differs from PyTorch on purpose (documented in the README), by op and by the
# label's fill; each is checked against algebra or finite differences below.
KNOWN = {
    # PyTorch 2.13 gives 0 for the gradient of det at an exactly singular matrix of rank
    # n - 1; the derivative there is the cofactor matrix (test_det_at_a_singular_matrix).
    ("det", "ones"): "cofactors where PyTorch gives 0",
    ("det", "rank 1"): "cofactors where PyTorch gives 0",
    # log|det| of a singular matrix is -inf and its gradient inv(A)ᵀ does not exist;
    # PyTorch returns -inf and inf/nan entries, agrad refuses (test_slogdet_refuses...).
    ("slogdet", "zeros"): "refused: singular",
    ("slogdet", "ones"): "refused: singular",
    ("slogdet", "rank 1"): "refused: singular",
    # A matrix holding inf is no real matrix to factor: PyTorch factors one with inf on the
    # diagonal (sqrt(inf) = inf) and refuses the rest; agrad refuses any inf or nan.
    ("cholesky", "inf"): "refused: not finite",
    # An infinite affine weight: PyTorch's fused kernel computes x·(w/σ) + (b - μ·w/σ),
    # inf - inf = nan; the value is w·x̂ + b = ±inf (test_normalisation_with_an_inf_weight).
    **{
        (n, f): "±inf where PyTorch's fused kernel gives nan"
        for n in ("batch_norm", "layer_norm")
        for f in ("inf", "-inf", "all -inf", "all +inf")
    },  # fmt: skip
    # var of a single nan: both values are nan; PyTorch's gradient is inf, agrad's nan.
    ("var", "nan"): "gradient nan where PyTorch gives inf, at a nan input",
    # A target of ±inf (targets are probabilities): with pos_weight, PyTorch's input gradient
    # is nan where the limit is ±inf (its formula meets inf - inf; agrad's does not always).
    **{
        ("binary_cross_entropy_with_logits", f): "±inf where PyTorch gives nan (target ±inf)"
        for f in ("inf", "-inf", "all -inf", "all +inf")
    },  # fmt: skip
    # PyTorch has no prod over several axes: the oracle chains prods, whose 0·inf differs.
    ("prod", "inf"): "the oracle composes single-axis prods",
    ("prod", "-inf"): "the oracle composes single-axis prods",
}


def _known(op, label):
    fill = label.rsplit(" = ", 1)[1]
    if (op.name, fill) not in KNOWN:
        return None
    if op.name in ("batch_norm", "layer_norm") and "input 1" not in label:
        return None  # only an infinite weight, not an infinite input
    if op.name == "var" and "((1,),)" not in label and "((),)" not in label:
        return None
    if op.name == "prod" and "(0, 2)" not in label:
        return None
    if op.name == "binary_cross_entropy_with_logits" and "input 1" not in label:
        return None  # only an infinite target, not an infinite logit
    return KNOWN[op.name, fill]


def _run(lib, op, arrays, params, cotangent_seed=5):
    wanted = op.differentiable_inputs(len(arrays))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if lib is agrad:
                xs = [agrad.tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]
                out = apply(op, *xs, **params)
            else:
                xs = [lib.tensor(a, dtype=lib.float64, requires_grad=i in wanted)
                      for i, a in enumerate(arrays)]  # fmt: skip
                out = torch_fn(op.name)(lib, *xs, **params)
            v = np.random.default_rng(cotangent_seed).standard_normal(tuple(out.shape))
            grads = lib.autograd.grad(
                out, [xs[i] for i in wanted], lib.tensor(v, dtype=out.dtype), allow_unused=True
            )
        except Exception as exc:  # noqa: BLE001 - a refusal is an outcome to compare
            return "refused", type(exc).__name__, None
    value = out.detach().numpy()
    return (
        "value",
        np.asarray(value),
        [
            np.zeros(arrays[i].shape) if g is None else np.asarray(g.detach().numpy())
            for i, g in zip(wanted, grads, strict=True)
        ],
    )


def _same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(
        np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)
        and np.array_equal(np.isposinf(a), np.isposinf(b))
        and np.array_equal(np.isneginf(a), np.isneginf(b))
    )


def disagreements(op):
    torch = require_torch()
    bad = []
    for label, arrays, params in samples(op):
        ours, theirs = _run(agrad, op, arrays, params), _run(torch, op, arrays, params)
        if ours[0] == theirs[0] == "refused":
            continue
        if ours[0] == "refused" and ours[1] not in ("AgradValueError", "AgradShapeError"):
            bad.append((label, f"agrad raised {ours[1]}: an internal error"))
        same = ours[0] == theirs[0] and _same(ours[1], theirs[1])
        same = same and all(_same(a, b) for a, b in zip(ours[2], theirs[2], strict=True))
        if not same and _known(op, label) is None:
            bad.append((label, ours[:2], theirs[:2]))
    return bad


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_op_at_special_values_as_pytorch(op):
    assert disagreements(op) == []


def test_the_generator_reaches_every_structured_op_and_the_reported_cases():
    names = {op.name for op in OPS}
    reported = "sum prod amax norm logsumexp std var softmax log_softmax cumsum cumprod det inv"
    for name in (*reported.split(), "solve", "cholesky", "nll_loss", "conv2d", "max_pool2d"):
        assert name in names
    labels = [label for label, _, _ in samples(TABLE["softmax"])]
    assert any("((),)" in label and "-inf" in label for label in labels)
    assert any("((0,),)" in label for label in labels)


# ---- where PyTorch's number is wrong or undefined: agrad's, checked independently ---------


def _central(f, a, h=1e-6):
    grad = np.zeros_like(a)
    for j in range(a.size):
        up, down = a.copy(), a.copy()
        up.flat[j] += h
        down.flat[j] -= h
        grad.flat[j] = (f(up) - f(down)) / (2 * h)
    return grad


@pytest.mark.parametrize(
    "matrix, cofactors",
    [
        ([[1.0, 1.0], [1.0, 1.0]], [[1.0, -1.0], [-1.0, 1.0]]),
        ([[1.0, 2.0], [2.0, 4.0]], [[4.0, -2.0], [-2.0, 1.0]]),
        ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
         [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]]),
        ([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], np.zeros((3, 3))),  # rank n - 2
    ],
)  # fmt: skip
def test_det_at_a_singular_matrix_is_the_cofactor_matrix(matrix, cofactors):
    a = agrad.tensor(matrix, requires_grad=True)
    agrad.linalg.det(a).backward()
    # det is a polynomial: its central differences are exact up to rounding
    numeric = _central(lambda m: np.linalg.det(m), np.array(matrix))
    np.testing.assert_allclose(a.grad.numpy(), cofactors, atol=1e-9)
    np.testing.assert_allclose(a.grad.numpy(), numeric, atol=1e-6)


@pytest.mark.parametrize("matrix", [np.zeros((2, 2)), np.ones((3, 3))])
def test_slogdet_of_a_singular_matrix_refuses_its_gradient(matrix):
    a = agrad.tensor(matrix, requires_grad=True)
    logabsdet = agrad.linalg.slogdet(a)[1]
    assert float(logabsdet) == -np.inf  # the value is right: log 0
    with pytest.raises(agrad.AgradValueError, match="singular"):
        logabsdet.backward()


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_cholesky_refuses_a_matrix_that_is_not_finite(value):
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    a[0, 0] = value
    with pytest.raises(agrad.AgradValueError, match="inf or nan"):
        agrad.linalg.cholesky(agrad.tensor(a))


@pytest.mark.parametrize("weight", [np.inf, -np.inf])
def test_normalisation_with_an_inf_weight_is_inf_times_the_normalised_input(weight):
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
    w = np.array([weight, 1.0, 1.0])
    y = agrad.nn.functional.batch_norm(
        agrad.tensor(x), None, None, agrad.tensor(w), agrad.tensor(np.zeros(3)), training=True
    )
    normalised = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    with np.errstate(invalid="ignore"):
        expected = normalised * w  # column 0: ±inf, signed by the normalised input
    np.testing.assert_array_equal(y.numpy(), expected)
