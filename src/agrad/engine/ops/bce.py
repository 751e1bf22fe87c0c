"""Binary cross-entropy on probabilities (PyTorch's binary_cross_entropy), and its backward.

PyTorch's kernels, to the formula: each log is clamped at -100, so a saturated wrong
prediction costs 100, never inf::

    loss = (t - 1)·max(log1p(-x), -100) - t·max(log(x), -100)      (times weight)

and the gradient is *not* that expression's derivative (0 where a log is clamped) but::

    d/dx = g·(x - t) / max((1 - x)·x, ε),   ε = float32(1e-12) in every dtype
    d/dt = -g·logit(x)                       (±inf at x = 0 or 1, as PyTorch's)

times the weight, over the number of elements for ``reduction='mean'``. So at x = 0 with
t = 1 the gradient is -1/ε ≈ -1e12, pointing the way out, as PyTorch's.

``binary_cross_entropy_backward`` (operands: the cotangent broadcast to the input's shape,
x, t) is that first rule as an entry of its own, so ``create_graph=True`` differentiates
it with PyTorch's double-backward formulas (BinaryCrossEntropyBackwardBackward0)::

    d/dg = (x - t) / ((x + ε')·(1 - x + ε'))
    d/dx = g·(x² - 2xt + t) / ((x + ε')²·(1 - x + ε')²)
    d/dt = -g / max((1 - x)·x, ε'),          ε' = 1e-12

The weight is a constant (PyTorch does not differentiate it either).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradShapeError, AgradValueError, AgradValueRuntimeError
from .core import INPUTS, Case, Op, batch_of, raw, register, special
from .losses import REDUCTIONS, check_reduction
from .windows import checked, each_point

EPSILON = float(np.float32(1e-12))  # PyTorch's kernel: `constexpr float EPSILON = 1e-12`
EPSILON_2 = 1e-12  # its double-backward formulas: a double


def _weight(weight, like):
    """The weight as an array of ``like``'s dtype (as PyTorch requires it), or 1."""
    if weight is None:
        return 1.0
    return np.asarray(weight, dtype=raw(like).dtype)


def _reduce(losses, reduction):
    if reduction == "none":
        return losses
    return np.sum(losses) if reduction == "sum" else np.mean(losses)


def _forward(x, t, weight=None, reduction="mean"):
    with np.errstate(divide="ignore", invalid="ignore"):
        losses = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if weight is not None:
        losses = losses * _weight(weight, losses)
    return _reduce(losses, reduction)


def _complex_forward(x, t, weight=None, reduction="mean"):
    # Inside (0, 1) the clamps do nothing and the logs are analytic: the complex step's form.
    losses = (t - 1) * np.log1p(-x) - t * np.log(x)
    return _reduce(losses * (1.0 if weight is None else np.asarray(weight)), reduction)


def _vjp(ns, g, out, x, t, weight=None, reduction="mean", needs=(True, True)):
    if reduction != "none":  # a cotangent per loss: spread over the input's elements
        g = g.reshape(batch_of(g, out.ndim) + (1,) * len(x.shape))
    gx = ns.binary_cross_entropy_backward(g, x, t, weight, reduction) if needs[0] else None
    gt = None
    if needs[1]:  # PyTorch's: -logit(x)·g·w (/ n); ±inf at x = 0 or 1
        with np.errstate(divide="ignore"):
            gt = -ns.log(x / (1 - x)) * g
        if weight is not None:
            gt = gt * _weight(weight, x)
        if reduction == "mean":
            gt = gt / max(math.prod(x.shape), 1)
    return gx, gt


def _shape(shape, target, weight=None, reduction="mean"):
    check_reduction(reduction)
    if tuple(target) != tuple(shape):
        raise AgradShapeError(
            f"Using a target size ({list(target)}) that is different to the input size "
            f"({list(shape)}) is deprecated. Please ensure they have the same size."
        )
    _check_weight(shape, weight)
    return tuple(shape) if reduction == "none" else ()


def _check_weight(shape, weight):
    if weight is None:
        return
    try:
        if np.broadcast_shapes(np.shape(weight), tuple(shape)) == tuple(shape):
            return
    except ValueError:
        pass
    raise AgradShapeError(
        f"binary_cross_entropy: a weight of shape {list(np.shape(weight))} does not "
        f"broadcast to the input's shape {list(shape)}"
    )


def _prepare(x, t, weight=None, reduction="mean"):
    """The shape rule, then PyTorch's kernel check: probabilities in [0, 1], nan refused."""
    _shape(np.shape(x), np.shape(t), weight, reduction)
    for name, values in (("input", x), ("target", t)):
        a = np.asarray(values)
        if not np.all((a >= 0) & (a <= 1)):
            raise AgradValueRuntimeError(f"all elements of {name} should be between 0 and 1")
    return {"weight": weight, "reduction": reduction}


# ---- the backward, an entry of its own (double backward) ---------------------------------


def _backward_forward(g, x, t, weight=None, reduction="mean"):
    eps = np.asarray(EPSILON, dtype=x.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        gi = g * (x - t) / np.maximum((1 - x) * x, eps)
    if weight is not None:
        gi = gi * _weight(weight, gi)
    if reduction == "mean":
        gi = gi / max(x.size, 1)
    return gi


def _backward_complex(g, x, t, weight=None, reduction="mean"):
    gi = g * (x - t) / ((1 - x) * x) * (1.0 if weight is None else np.asarray(weight))
    return gi / max(x.size, 1) if reduction == "mean" else gi


def _backward_vjp(ns, gg, out, g, x, t, weight=None, reduction="mean", needs=(True,) * 3):
    w = _weight(weight, x)
    n = max(math.prod(x.shape), 1) if reduction == "mean" else 1
    e = EPSILON_2
    with np.errstate(divide="ignore", invalid="ignore"):
        dg = dx = dt = None
        if needs[0]:
            dg = (x - t) / ((x + e) * (1 - x + e)) * gg * w / n
        if needs[1]:
            dx = (x * x - 2 * x * t + t) / ((x + e) ** 2 * (1 - x + e) ** 2) * (gg * g) * w / n
        if needs[2]:
            d = (1 - x) * x
            dt = -gg * g * w / ns.where(raw(d) < e, e, d) / n
    return dg, dx, dt


def _backward_shape(g, x, t, weight=None, reduction="mean"):
    if reduction not in REDUCTIONS:
        raise AgradValueError(f"binary_cross_entropy_backward: bad reduction {reduction!r}")
    if tuple(x) != tuple(t):
        raise AgradShapeError(
            f"binary_cross_entropy_backward: input {tuple(x)} and target {tuple(t)} differ"
        )
    _check_weight(x, weight)
    return np.broadcast_shapes(tuple(g), tuple(x))


EDGES = special([0.0, 1e-15, 0.5, 1.0, 0.3, 1.0], [1.0, 1.0, 0.3, 0.0, 0.0, 1.0], at_kink=True)
W6 = np.array([[0.5], [2.0]])

register(
    Op("binary_cross_entropy", "BinaryCrossEntropyBackward0", _forward, _vjp, _shape,
       arity=2, saves=INPUTS, prepare=_prepare, batch=each_point, needs_mask=True,
       public=False, method=False, kink=True, complex_forward=_complex_forward,
       explain="d/dx = w·(x - t)/max((1 - x)·x, 1e-12), d/dt = -w·logit(x) (each log of "
               "the loss clamped at -100)",
       domain=((0.05, 0.95), (0.0, 1.0)),
       cases=(Case(((4,), (4,))), Case(((2, 3), (2, 3)), {"reduction": "sum"}),
              Case(((2, 3), (2, 3)), {"reduction": "none", "weight": np.array([0.5, 2.0, 1.0])}),
              Case(((2, 3), (2, 3)), {"weight": W6}), Case(((), ()))),
       special=(EDGES, special([0.0, 1.0, 1e-12], [0.0, 1.0, 0.5], reduction="none",
                               at_kink=True)),
       doc="binary cross-entropy of probabilities, each log clamped at -100"),
    Op("binary_cross_entropy_backward", "BinaryCrossEntropyBackwardBackward0",
       _backward_forward, _backward_vjp, _backward_shape, arity=3, saves=INPUTS,
       prepare=checked(_backward_shape), needs_mask=True, public=False,
       method=False, kink=True, complex_forward=_backward_complex,
       explain="PyTorch's double backward: d/dg = (x - t)/((x + ε)(1 - x + ε)), d/dx = "
               "g·(x² - 2xt + t)/((x + ε)²(1 - x + ε)²), d/dt = -g/max((1 - x)·x, ε)",
       domain=((-2.0, 2.0), (0.05, 0.95), (0.0, 1.0)),
       cases=(Case(((4,), (4,), (4,)), {"reduction": "none"}),
              Case(((1, 1), (2, 3), (2, 3))),
              Case(((1,), (3,), (3,)), {"reduction": "sum", "weight": np.array([0.5, 2.0, 1.0])})),
       doc="the gradient of binary_cross_entropy with respect to its input"),
)  # fmt: skip
