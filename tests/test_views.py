"""Views as PyTorch's: shared storage and version counter, writes through views that rebase
the autograd history (CopySlices on the base, AsStridedBackward0 on its views), and
PyTorch's refusals — against PyTorch itself, as named cases and as random view chains.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agrad

torch = pytest.importorskip("torch")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agrad", *args], capture_output=True, text=True, check=False
    )


# ---- the reproducers --------------------------------------------------------------


def test_write_through_a_view_of_a_constant_reaches_it_in_the_language():
    out = _cli("eval", "t = x[:]; t[0] = 5; sum(x)", "--set", "x=[1,2]", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["value"] == 7  # PyTorch: x is [5, 2]


def test_write_through_a_view_of_a_leaf_that_requires_grad_is_refused_in_the_language():
    out = _cli("eval", "t = x[:]; t[0] = 5; sum(x)", "--set", "x=[1,2]", "--wrt", "x")
    assert out.returncode == 2
    assert "a view of a leaf Variable that requires grad" in out.stderr
    assert "Traceback" not in out.stderr


def test_write_through_a_view_rebases_the_gradient_in_the_language():
    program = "t0 = x*1; t1 = t0[:]; t1[0] = 5; sum(t0*t0)"
    out = _cli("eval", program, "--set", "x=[1,2]", "--wrt", "x", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["value"] == 29 and result["grads"]["x"] == [0, 4]  # PyTorch's numbers


def test_a_program_that_writes_through_views_runs_the_same_twice():
    # The checker re-runs a program: the inputs each run sees must be the --set values.
    program = "t = x[:]; t[0] = t[0] * 2 + w; sum(x * x)"
    out = _cli("check", program, "--set", "x=[1,2]", "--set", "w=0.5", "--wrt", "w")
    assert out.returncode == 0, out.stdout + out.stderr


# ---- named cases, both libraries ------------------------------------------------------------


def _leaf(lib, values, dtype=None):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _run(case, lib):
    """(value of the loss, gradients of the leaves, grad_fn names) or the error's text."""
    try:
        loss, leaves, probes = case(lib)
        loss.backward()
    except RuntimeError as exc:
        return ("error", str(exc).split("\n")[0])
    grads = [None if t.grad is None else np.asarray(t.grad.detach().numpy()) for t in leaves]
    names = [None if p.grad_fn is None else type(p.grad_fn).__name__ for p in probes]
    return (float(loss.detach().numpy()), grads, names)


def _slice_write(lib):
    x = _leaf(lib, [1.0, 2.0])
    t0 = x * 1
    t1 = t0[:]
    t1[0] = 5
    return (t0 * t0).sum(), [x], [t0, t1]


def _mul_into_view(lib):
    x = _leaf(lib, [1.0, 2.0, 3.0])
    y = x * 1
    v, w = y[1:], y[0]
    v.mul_(2)
    return w * 3 + v.sum() * y.sum(), [x], [y, v, w]


def _write_base_then_use_view(lib):
    x = _leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
    y = x.exp()
    v = y.t()
    y.add_(1)  # exp's saved output was written: backward must refuse (as PyTorch)
    return (v * v).sum(), [x], [v]


def _write_base_then_use_view_ok(lib):
    x = _leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 2
    v = y.t()
    r = y[1]
    y.mul_(x)
    return (v * v).sum() + r.sum(), [x], [v, r, y]


def _setitem_with_grad_into_view(lib):
    x = _leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = _leaf(lib, [0.5, -1.5])
    y = x * 1
    col = y[:, 1]
    col[:] = w * w
    return (y**3).sum() + col.sum(), [x, w], [y, col]


def _view_of_view_chain(lib):
    x = _leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = _leaf(lib, 2.0)
    y = x + 0
    v = y.t()[1:].unsqueeze(0)
    v.mul_(w)
    return (y * x).sum() + v.sum(), [x, w], [y, v]


def _reshape_view_write(lib):
    x = _leaf(lib, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = x.sin()
    m = y.view(2, 3)
    m[1] = m[0] * 2
    return (y * y).sum(), [x], [y, m]


def _iteration_views(lib):
    x = _leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    rows = list(y)
    rows[0].add_(rows[1])
    return sum(r.sum() for r in rows) + (y * y).sum(), [x], [y, rows[0], rows[1]]


def _leaf_view_refused(lib):
    x = _leaf(lib, [1.0, 2.0])
    t = x[:]
    t[0] = 5
    return t.sum(), [x], [t]


def _expanded_view_refused(lib):
    x = _leaf(lib, [1.0, 2.0, 3.0])
    v = (x * 1).unsqueeze(0).expand(2, 3)
    v.add_(1)
    return v.sum(), [x], [v]


def _saved_view_written(lib):
    x = _leaf(lib, [1.0, 2.0, 3.0])
    y = x * 1
    v = y[:2]
    z = v * v  # saves v
    y[1] = 7.0  # the storage v shares: its version moves
    return z.sum(), [x], [z]


def _detach_shares_version(lib):
    x = _leaf(lib, [1.0, 2.0])
    y = x * 1
    z = y * y  # saves y
    y.detach().mul_(2)
    return z.sum(), [x], [z]


def _no_grad_view_refused(lib):
    x = _leaf(lib, [1.0, 2.0, 3.0])
    y = x * 1
    with lib.no_grad():
        v = y[:2]
    v.mul_(2)
    return y.sum(), [x], [y]


def _constant_base_gets_history(lib):
    w = _leaf(lib, [1.5, -2.0])
    z = lib.zeros(4, dtype=lib.float64)
    v = z[1:3]
    other = z[2:]
    v.copy_(w * w)
    return (z * z).sum() + other.sum(), [w], [z, v, other]


CASES = {
    f.__name__.strip("_"): f
    for f in (
        _slice_write, _mul_into_view, _write_base_then_use_view, _write_base_then_use_view_ok,
        _setitem_with_grad_into_view, _view_of_view_chain, _reshape_view_write,
        _iteration_views, _leaf_view_refused, _expanded_view_refused, _saved_view_written,
        _detach_shares_version, _no_grad_view_refused, _constant_base_gets_history,
    )
}  # fmt: skip


def _same(ours, theirs, exact_names=True):
    if theirs[0] == "error":
        assert ours[0] == "error", f"PyTorch refuses ({theirs[1]}); agrad gave {ours}"
        return
    assert ours[0] != "error", f"agrad refused: {ours[1]}"
    assert ours[0] == pytest.approx(theirs[0], rel=1e-12, abs=1e-12)
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert ours[2] == theirs[2] if exact_names else _view_names(ours[2]) == _view_names(theirs[2])


def _view_names(names):
    """The names that say how the history was rebased (fill_'s own node is named otherwise
    in agrad: it is recorded as a product and a sum)."""
    return [n if n in ("CopySlices", "AsStridedBackward0", None) else "other" for n in names]


@pytest.mark.parametrize("name", sorted(CASES))
def test_views_and_writes_match_pytorch(name):
    ours, theirs = _run(CASES[name], agrad), _run(CASES[name], torch)
    _same(ours, theirs)
    if theirs[0] == "error":  # the same words, where PyTorch's are the reason
        assert ours[1].split(":")[0] == theirs[1].split(":")[0]


def test_views_share_storage_and_base():
    x = agrad.zeros(2, 3)
    for view in (x[0], x[:, 1], x.t(), x.view(6), x.unsqueeze(0), x[None], list(x)[1]):
        assert view._base is x
        assert np.shares_memory(view.numpy(), x.numpy())
    assert x.reshape(6)._base is x
    assert x.t().reshape(6)._base is None  # a reshape that copies is not a view (PyTorch)
    assert x[[0, 1]]._base is None  # advanced indexing copies
    x[0, 1] = 4.0
    assert x.t()[1, 0].item() == 4.0


# ---- random view chains with in-place writes ------------------------------------------------

VIEW_STEPS = ("slice", "select", "transpose", "unsqueeze", "squeeze", "flatten", "narrow_end")
WRITES = ("mul_w", "add_w", "setitem_w", "fill", "mul_const", "setitem_view_of_x")


def _view_step(step, t, k):
    if t.dim() == 0:
        return t.unsqueeze(0)
    d = k % t.dim()
    n = t.shape[d]
    if step == "slice":
        return t[(slice(None),) * d + (slice(k % n, None, 1 + k % 2),)]
    if step == "select" and t.dim() > 1:
        return t.select(d, k % n) if hasattr(t, "select") else t[(slice(None),) * d + (k % n,)]
    if step == "transpose" and t.dim() > 1:
        return t.transpose(0, 1)
    if step == "squeeze":
        return t.squeeze()
    if step == "flatten" and t.is_contiguous():
        return t.view(-1)
    if step == "narrow_end":
        return t[(slice(None),) * d + (slice(None, max(1, n - 1)),)]
    return t.unsqueeze(k % (t.dim() + 1))


def _chain_case(steps, write, target, use):
    def case(lib):
        x = _leaf(lib, np.arange(1.0, 13.0).reshape(3, 4) / 7)
        w = _leaf(lib, 0.75)
        base = x * 1.5
        made = [base]
        for step, k in steps:
            made.append(_view_step(step, made[-1], k))
        v = made[target % len(made)]
        if write == "mul_w":
            v.mul_(w)
        elif write == "add_w":
            v.add_(w * w)
        elif write == "setitem_w":
            v[(0,) * v.dim()] = w * 3
        elif write == "fill":
            v.fill_(2.5)
        elif write == "mul_const":
            v.mul_(-2)
        else:
            v[...] = v * x.sum()
        probe = made[use % len(made)]
        loss = (base * base).sum() + (probe.sin()).sum() + (v * 0.5).sum()
        return loss, [x, w], [base, v, probe]

    return case


def _steps():
    return st.lists(st.tuples(st.sampled_from(VIEW_STEPS), st.integers(0, 5)), max_size=4)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_steps(), st.sampled_from(WRITES), st.integers(0, 5), st.integers(0, 5))
def test_random_view_chains_with_writes_match_pytorch(steps, write, target, use):
    case = _chain_case(steps, write, target, use)
    _same(_run(case, agrad), _run(case, torch), exact_names=False)


@pytest.mark.parametrize(
    "shape, index, value_shape",
    [((2,), 0, (1,)), ((2, 3), 0, (1, 3)), ((2, 3), (0, 1), (1, 1)),
     ((2, 3), slice(None), (1, 2, 3)), ((2, 3), (slice(None), 1), (1, 2))],
)  # fmt: skip
def test_assigned_values_with_leading_ones_match_pytorch(shape, index, value_shape):
    # PyTorch writes a value with extra leading 1s into a selection without them (w[0] = [3]);
    # the value's gradient keeps its own shape, in a backward and in a Jacobian.
    def run(lib):
        x = _leaf(lib, np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape))
        v = _leaf(lib, np.full(value_shape, 0.5))
        y = x * 2
        y[index] = v * 3
        (y * y).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), v.grad.numpy()

    for ours, theirs in zip(run(agrad), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


BASIC_INDICES = [
    (0, slice(None, 3)), (slice(None, 3), 0), (0,), (0, 1), (None, 0), (0, None),
    (slice(1, 3), None), (Ellipsis, 0), (0, Ellipsis), (slice(None), slice(None)),
    (slice(None), slice(1, 2), 0), (slice(None), 0, slice(None)), (0, slice(None), 1),
    (slice(None), None, slice(None)), (Ellipsis, None), (slice(None, None, 2), 1, None),
]  # fmt: skip


@pytest.mark.parametrize("index", BASIC_INDICES, ids=str)
def test_basic_index_grad_fn_is_named_after_its_last_step_as_pytorch(index) -> None:
    # PyTorch applies x[a, b, ...] one step at a time: the printed grad_fn is the last step
    # that does something (makemore prints W[0, :3] and sees SliceBackward0).
    theirs = torch.zeros(4, 4, 4, requires_grad=True)[index].grad_fn.name()
    assert agrad.zeros(4, 4, 4, requires_grad=True)[index].grad_fn.name() == theirs
