"""agrad.nn's losses and functional forms against PyTorch, float64, to 1e-10: values and
the input's gradient (cross-entropy with class indices, probabilities, class weights,
ignore_index and label smoothing in every reduction; nll, mse, l1, smooth l1, binary
cross-entropy on probabilities and logits; pad, unfold/fold, one_hot, normalize,
embedding), the loss modules' options, gradient clipping, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad import nn
from agrad.errors import AgradShapeError, AgradValueError

TOL = dict(rtol=1e-10, atol=1e-12)
R = np.random.default_rng(11)
LOGITS = R.standard_normal((5, 4))
CLASSES = np.array([3, 0, 1, 1, 2])
WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])
PROBS = R.dirichlet(np.ones(4), size=5)
LOGITS_KD = R.standard_normal((2, 4, 3, 2))
CLASSES_KD = R.integers(0, 4, (2, 3, 2))


def both(fn, x, *rest, **kwargs):
    """``fn(lib, x, *rest, **kwargs)`` on agrad and on PyTorch; compares the values and the
    gradient of x (for a random cotangent)."""
    torch = require_torch()
    xa = agrad.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ya, yt = fn(agrad, xa, *rest, **kwargs), fn(torch, xt, *rest, **kwargs)
    np.testing.assert_allclose(np.asarray(ya.detach()), yt.detach().numpy(), **TOL)
    v = np.random.default_rng(0).standard_normal(tuple(yt.shape))
    ya.backward(agrad.tensor(v))
    yt.backward(torch.tensor(v))
    np.testing.assert_allclose(np.asarray(xa.grad), xt.grad.numpy(), **TOL)
    return ya


def _arg(lib, a):
    if a is None or not isinstance(a, np.ndarray):
        return a
    return lib.tensor(a) if lib is agrad else lib.tensor(a, dtype=None if a.dtype.kind != "f"
                                                           else lib.float64)  # fmt: skip


def ce(lib, x, target, weight=None, **kw):
    return lib.nn.functional.cross_entropy(x, _arg(lib, target), _arg(lib, weight), **kw)


REDUCTIONS = ("mean", "sum", "none")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weight", [None, WEIGHT], ids=["unweighted", "weighted"])
def test_cross_entropy_class_indices(reduction, smoothing, weight):
    both(ce, LOGITS, CLASSES, weight, reduction=reduction, label_smoothing=smoothing)
    ignored = np.array([3, -100, 1, 1, -100])
    both(ce, LOGITS, ignored, weight, reduction=reduction, label_smoothing=smoothing)
    both(ce, LOGITS, np.array([3, 0, 1, 1, 0]), weight, ignore_index=1, reduction=reduction,
         label_smoothing=smoothing)  # fmt: skip
    both(ce, LOGITS_KD, CLASSES_KD, weight, reduction=reduction, label_smoothing=smoothing)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weight", [None, WEIGHT], ids=["unweighted", "weighted"])
def test_cross_entropy_probabilities(reduction, smoothing, weight):
    both(ce, LOGITS, PROBS, weight, reduction=reduction, label_smoothing=smoothing)
    kd = R.dirichlet(np.ones(4), size=(2, 3, 2)).transpose(0, 3, 1, 2).copy()
    both(ce, LOGITS_KD, kd, weight, reduction=reduction, label_smoothing=smoothing)


def test_cross_entropy_unbatched_and_all_ignored():
    both(ce, LOGITS[0], np.array(2))
    both(ce, LOGITS[0], PROBS[0], label_smoothing=0.1)
    out = ce(agrad, agrad.tensor(LOGITS), agrad.tensor(np.full(5, -100)))
    assert math.isnan(out.item())  # 0/0, as PyTorch


def test_cross_entropy_module_and_errors():
    torch = require_torch()
    for kwargs in ({}, {"weight": WEIGHT, "ignore_index": 0, "label_smoothing": 0.1},
                   {"reduction": "sum"}):  # fmt: skip
        ours = nn.CrossEntropyLoss(**{k: (agrad.tensor(v) if k == "weight" else v)
                                      for k, v in kwargs.items()})  # fmt: skip
        theirs = torch.nn.CrossEntropyLoss(**{k: (torch.tensor(v) if k == "weight" else v)
                                              for k, v in kwargs.items()})  # fmt: skip
        a = ours(agrad.tensor(LOGITS), agrad.tensor(CLASSES)).item()
        assert a == pytest.approx(theirs(torch.tensor(LOGITS), torch.tensor(CLASSES)).item(),
                                  rel=1e-12)  # fmt: skip
        assert repr(ours) == repr(theirs)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):  # as PyTorch
        nn.CrossEntropyLoss()(agrad.tensor(LOGITS), agrad.tensor([4, 0, 1, 1, 2]))
    with pytest.raises(AgradValueError, match="not a valid value for reduction"):
        nn.functional.mse_loss(agrad.ones(2), agrad.ones(2), reduction="avg")
    with pytest.raises(AgradShapeError, match="target of shape"):
        nn.functional.nll_loss(agrad.tensor(LOGITS), agrad.tensor([0, 1]))
    with pytest.raises(AgradValueError, match="label_smoothing"):
        ce(agrad, agrad.tensor(LOGITS), CLASSES, label_smoothing=1.5)


def nll(lib, x, target, weight=None, **kw):
    return lib.nn.functional.nll_loss(x, _arg(lib, target), _arg(lib, weight), **kw)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    both(nll, LOGITS, CLASSES, WEIGHT, reduction=reduction, ignore_index=1)
    both(nll, LOGITS_KD, CLASSES_KD, reduction=reduction)


def _pointwise(name):
    def fn(lib, x, target, **kw):
        return getattr(lib.nn.functional, name)(x, _arg(lib, target), **kw)

    return fn


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(name, reduction):
    target = LOGITS + R.standard_normal(LOGITS.shape) * np.array([0.1, 1.0, 3.0, 0.0])
    both(_pointwise(name), LOGITS, target, reduction=reduction)
    if name == "smooth_l1_loss":
        both(_pointwise(name), LOGITS, target, reduction=reduction, beta=0.5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    p = 1 / (1 + np.exp(-LOGITS))
    t = (R.random(LOGITS.shape) > 0.5).astype(float)

    def bce(lib, x, weight=None):
        return lib.nn.functional.binary_cross_entropy(x, _arg(lib, t), _arg(lib, weight),
                                                      reduction=reduction)  # fmt: skip

    both(bce, p)
    both(bce, p, WEIGHT)

    def logits(lib, x, weight=None, pos_weight=None):
        return lib.nn.functional.binary_cross_entropy_with_logits(
            x, _arg(lib, t), _arg(lib, weight), reduction=reduction,
            pos_weight=_arg(lib, pos_weight))  # fmt: skip

    both(logits, LOGITS)
    both(logits, LOGITS * 30, WEIGHT, np.array([1.0, 3.0, 0.5, 2.0]))  # large logits: stable


def test_binary_cross_entropy_refuses_values_outside_0_1():
    with pytest.raises(AgradValueError, match="between 0 and 1"):
        nn.BCELoss()(agrad.tensor([0.5, 1.5]), agrad.tensor([0.0, 1.0]))


def test_loss_modules_reprs_and_options():
    torch = require_torch()
    x, t = LOGITS, (R.random(LOGITS.shape) > 0.5).astype(float)
    for name, kwargs in [("MSELoss", {}), ("L1Loss", {"reduction": "sum"}),
                         ("SmoothL1Loss", {"beta": 0.3}), ("BCEWithLogitsLoss", {}),
                         ("NLLLoss", {"ignore_index": 2})]:  # fmt: skip
        ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
        assert repr(ours) == repr(theirs)
        target = CLASSES if name == "NLLLoss" else t
        a = ours(agrad.tensor(x), agrad.tensor(target)).item()
        b = theirs(torch.tensor(x), torch.tensor(target)).item()
        assert a == pytest.approx(b, rel=1e-12), name
    assert nn.MSELoss(size_average=False).reduction == "sum"  # PyTorch's legacy flags
    assert nn.L1Loss(reduce=False).reduction == "none"


@pytest.mark.parametrize("mode,widths", [("constant", (1, 2, 0, 1)), ("constant", (-1, 2)),
                                         ("reflect", (2, 1, 1, 2)), ("replicate", (3, 0, 2, 1)),
                                         ("circular", (1, 2, 2, 1))])  # fmt: skip
def test_pad(mode, widths):
    def pad(lib, x):
        return lib.nn.functional.pad(x, widths, mode=mode, **({"value": 0.5} if mode ==
                                                               "constant" else {}))  # fmt: skip

    both(pad, R.standard_normal((2, 3, 4, 5)))


def test_unfold_and_fold():
    x = R.standard_normal((2, 3, 6, 5))
    args = dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    cols = both(lambda lib, t: lib.nn.functional.unfold(t, **args), x)
    both(lambda lib, t: lib.nn.functional.fold(t, (6, 5), **args), np.asarray(cols.detach()))


def test_small_functional_forms():
    both(lambda lib, x: lib.nn.functional.normalize(x, dim=1), LOGITS)
    both(lambda lib, x: lib.nn.functional.linear(x, _arg(lib, WEIGHT[None, :]), None), LOGITS)
    both(lambda lib, x: lib.nn.functional.softmax(x), LOGITS)  # legacy dim: 1 for 2-D
    both(lambda lib, x: lib.nn.functional.leaky_relu(x, 0.3), LOGITS)
    both(lambda lib, w: lib.nn.functional.embedding(_arg(lib, np.array([[0, 3], [3, 2]])), w),
         LOGITS)  # fmt: skip
    torch = require_torch()
    hot = nn.functional.one_hot(agrad.tensor([2, 0, 1]), 4)
    assert hot.dtype == np.int64
    expected = torch.nn.functional.one_hot(torch.tensor([2, 0, 1]), 4).numpy()
    np.testing.assert_array_equal(np.asarray(hot), expected)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm(norm_type):
    torch = require_torch()
    grads = [R.standard_normal((3, 4)), R.standard_normal(5)]
    ours = [agrad.zeros(*g.shape, requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for a, t, g in zip(ours, theirs, grads, strict=True):
        a.grad, t.grad = agrad.tensor(g), torch.tensor(g)
    na = nn.utils.clip_grad_norm_(ours, 0.7, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(theirs, 0.7, norm_type)
    assert na.item() == pytest.approx(nt.item(), rel=1e-12)
    for a, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a.grad), t.grad.numpy(), **TOL)
    nn.utils.clip_grad_value_(ours, 0.1)
    assert max(np.abs(np.asarray(a.grad)).max() for a in ours) <= 0.1


def test_clip_grad_norm_nonfinite():
    p = agrad.zeros(2, requires_grad=True)
    p.grad = agrad.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
