"""An audit generated from the public namespaces: a tensor that requires grad, given where
a function takes something other than its first tensor (a bound, an order p, a fill value,
a quantile, a rate), must either carry its gradient (where PyTorch differentiates: clamp's
bounds, quantile's q) or be refused (PyTorch's TypeError: hardtanh's min_val, norm's p,
full's fill_value) — never be read as a number in silence, which loses its gradient and
lets a check agree with the loss (QA round 14 found a dozen such functions).

Each callable is tried with x (2x3, tracked) and a tracked scalar y in a few positions and
under each numeric keyword of its signature; where the call runs and its outputs move
with y (finite differences, 1e-6 apart), y must get a gradient, and the right one."""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings

import numpy as np
import pytest
import test_escape_audit as audit

import agrad
from agrad.engine.escapes import ESCAPES

X = np.array([[0.3, -1.2, 2.0], [0.7, 0.4, -0.4]])
Y = 0.55  # (no element of X: no tie, no kink at y)
STEP = 1e-6
# PyTorch's own answer is no gradient here: floor_divide has none, new_tensor copies (and
# detaches) its data, normal's samples have a zero gradient for mean and std.
EXEMPT = {"agrad.floor_divide", "Tensor.floor_divide", "Tensor.new_tensor", "agrad.normal"}
PATTERNS = {
    "(x, y)": lambda f, x, y: f(x, y),
    "(x, 1, y)": lambda f, x, y: f(x, 1, y),
    "(x, y, 1)": lambda f, x, y: f(x, y, 1.0),
}


def _total(call, y_value):
    """The sum of the floating outputs of ``call`` at y, with x and y; None where it
    refuses, draws random numbers or reads values into Python (the escape audit's)."""
    x = agrad.tensor(X, requires_grad=True)
    y = agrad.tensor(y_value, requires_grad=True)
    before = ESCAPES[0]
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with audit._settings_kept():
                result = call(x, y)
    except Exception:
        return None
    outs = [o for o in audit._tensors(result) if o.dtype.kind == "f"]
    if not outs or ESCAPES[0] != before:
        return None
    total = sum(float(np.sum(np.asarray(o.detach()), dtype=np.float64)) for o in outs)
    return total, outs, y


def _lost(call) -> str:
    at, moved = _total(call, Y), _total(call, Y + STEP)
    if at is None or moved is None or not (np.isfinite(at[0]) and np.isfinite(moved[0])):
        return ""
    numeric = (moved[0] - at[0]) / STEP
    if abs(numeric) < 1e-4:  # (y changes nothing here: nothing to lose)
        return ""
    _, outs, y = at
    tracked = [o for o in outs if o.requires_grad]
    if not tracked:
        return f"the result does not require grad (d/dy = {numeric:.4g})"
    (g,) = agrad.autograd.grad(sum(o.sum() for o in tracked), [y], allow_unused=True)
    claimed = 0.0 if g is None else float(g)
    if abs(claimed - numeric) > 1e-3 * max(1.0, abs(numeric)):
        return f"d/dy is {claimed:.6g}, finite differences give {numeric:.6g}"
    return ""


def _cases():
    for label, f in audit._callables():
        if label in audit.EXEMPT or label in EXEMPT:
            continue
        for pattern, call in PATTERNS.items():
            yield f"{label}{pattern}", lambda x, y, f=f, call=call: call(f, x, y)
        try:
            parameters = list(inspect.signature(f).parameters.values())[1:]
        except (TypeError, ValueError):
            continue
        for p in parameters:
            number = isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
            if number and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                yield f"{label}({p.name}=y)", lambda x, y, f=f, n=p.name: f(x, **{n: y})


def test_no_public_function_loses_a_gradient_in_silence():
    lost = {label: why for label, call in _cases() if (why := _lost(call))}
    assert lost == {}


def test_the_audit_finds_a_lost_gradient():
    def scaled(x, y):  # y read as a number: what the audit must catch
        return x * float(y._array)

    assert _lost(scaled).startswith("d/dy is 0")
    assert _lost(lambda x, y: x * y) == ""


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda T, x, y: T.nn.functional.hardtanh(x, y), "min_val"),
        (lambda T, x, y: T.nn.functional.softshrink(x, y), "lambd"),
        (lambda T, x, y: T.norm(x, y), "must be"),
        (lambda T, x, y: T.full_like(x, y), "fill_value"),
    ],
)
def test_where_pytorch_refuses_a_tensor_agrad_refuses_one_that_requires_grad(call, message):
    torch = pytest.importorskip("torch")
    for T in (torch, agrad):
        x = T.tensor(X, dtype=T.float64, requires_grad=True)
        y = T.tensor(Y, dtype=T.float64, requires_grad=True)
        with pytest.raises(TypeError, match=message):
            call(T, x, y)


def test_cross_entropy_weights_as_pytorch_has_them():
    # with probabilities PyTorch differentiates the class weights; with class indices it
    # refuses weights that require grad (agrad lost their gradient in both, QA round 14)
    torch = pytest.importorskip("torch")
    z0 = np.array([[0.3, -1.2, 2.0], [0.1, 0.4, -0.5]])
    p0 = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    grads = []
    for T in (torch, agrad):
        z = T.tensor(z0, dtype=T.float64, requires_grad=True)
        w = T.tensor([1.0, 2.0, 0.5], dtype=T.float64, requires_grad=True)
        T.nn.functional.cross_entropy(z, T.tensor(p0, dtype=T.float64), weight=w).backward()
        grads.append((np.asarray(z.grad), np.asarray(w.grad)))
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
            T.nn.functional.cross_entropy(z, T.tensor([2, 0]), weight=w)
    for ours, theirs in zip(grads[1], grads[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_the_language_differentiates_cross_entropy_weights(cli):
    import json

    r = cli(["eval", "cross_entropy(z, p, weight=w)", "--set", "z=[[0.3,-1.2,2.0]]",
             "--set", "p=[[0.2,0.3,0.5]]", "--set", "w=[1,2,0.5]", "--wrt", "w",
             "--format", "json"])  # fmt: skip
    assert r.code == 0, r.err
    # -sum(w·p·log_softmax(z)) / 1 sample: d/dw = -p·log_softmax(z) (algebra)
    z = np.array([0.3, -1.2, 2.0])
    expected = -np.array([0.2, 0.3, 0.5]) * (z - np.log(np.exp(z).sum()))
    np.testing.assert_allclose(json.loads(r.out)["grads"]["w"], expected, rtol=1e-12)
