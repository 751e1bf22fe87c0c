"""`Tensor.data` as PyTorch's: a detached tensor sharing storage, with its own version counter.

Each scenario runs on PyTorch and on agrad (float64) and the observable results are compared:
values, gradients, flags and whether backward raised. They mirror how real code uses
`.data`: the old-style update `W.data += -lr * W.grad`, `p.grad.data.zero_()`, reading
`y.data.norm()`, re-pointing with `x.data = y`, and the difference between writes through
`.data` (unseen by autograd) and through `detach()` (seen).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")


def _plain(value: Any) -> Any:
    if hasattr(value, "detach"):
        return np.asarray(value.detach().numpy() if hasattr(value, "numpy") else value).tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _raises(fn: Any) -> bool:
    try:
        fn()
    except RuntimeError:
        return True
    return False


def update_through_data(t: Any) -> dict:
    w = t.tensor([1.0, -2.0, 3.0], requires_grad=True)
    for _ in range(3):
        loss = (w * w * w).sum()
        w.grad = None
        loss.backward()
        w.data += -0.05 * w.grad
    return {"w": w, "rg": w.requires_grad, "leaf": w.is_leaf, "version_error": False}


def zero_grad_through_data(t: Any) -> dict:
    p = t.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        if p.grad is not None:
            p.grad.data.zero_()
        (p**2).sum().backward()
        p.data.add_(p.grad.data, alpha=-0.1)
    return {"p": p, "grad": p.grad}


def data_is_detached(t: Any) -> dict:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.data
    return {
        "rg": d.requires_grad,
        "leaf": d.is_leaf,
        "grad_fn": d.grad_fn is None,
        "norm": y.data.norm().item(),
        "type": type(d).__name__,
    }


def write_through_data_is_unseen(t: Any) -> dict:
    # PyTorch's autograd-mechanics note: .data writes escape the version check (a silently
    # different gradient); detach() writes are caught.
    a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = a.sigmoid()
    out.data.zero_()
    out.sum().backward()
    first = a.grad.clone()
    out2 = a.sigmoid()
    out2.detach().zero_()
    caught = _raises(lambda: out2.sum().backward())
    return {"grad": first, "detach_caught": caught, "out": out}


def write_through_data_of_saved_input(t: Any) -> dict:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    z = (y * y).sum()
    y.data.mul_(10)  # the saved input changes; no version bump, so no error (as PyTorch)
    z.backward()
    x2 = t.tensor([1.0, 2.0], requires_grad=True)
    y2 = x2.clone()
    z2 = (y2 * y2).sum()
    y2.detach().mul_(10)
    return {"grad": x.grad, "detach_caught": _raises(lambda: z2.backward())}


def repoint_data(t: Any) -> dict:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    x.data = t.tensor([5.0, 6.0, 7.0])
    (x * x).sum().backward()
    return {"x": x, "grad": x.grad, "shape": list(x.shape), "rg": x.requires_grad}


def repoint_a_view(t: Any) -> dict:
    base = t.zeros(2, 3)
    row = base[0]
    row.data = t.tensor([1.0, 2.0])
    row.add_(1)
    base.add_(10)
    return {"row": row, "base": base}


def data_of_a_view_shares(t: Any) -> dict:
    base = t.arange(6.0).reshape(2, 3)
    base.requires_grad_()
    col = base[:, 1]
    col.data.fill_(-1)
    (base * base).sum().backward()
    return {"base": base, "grad": base.grad}


def data_then_numpy(t: Any) -> dict:
    w = t.tensor([1.0, 2.0], requires_grad=True)
    arr = w.data.numpy()
    arr[0] = 9.0  # numpy() of .data shares storage with w
    return {"w": w, "copied": np.array(w.detach()).tolist()}


SCENARIOS = [
    update_through_data,
    zero_grad_through_data,
    data_is_detached,
    write_through_data_is_unseen,
    write_through_data_of_saved_input,
    repoint_data,
    repoint_a_view,
    data_of_a_view_shares,
    data_then_numpy,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_data_attribute_as_pytorch(scenario: Any) -> None:
    torch.set_default_dtype(torch.float64)
    try:
        expected = _plain(scenario(torch))
    finally:
        torch.set_default_dtype(torch.float32)
    _assert_same(expected, _plain(scenario(agrad)), scenario.__name__)


def _assert_same(expected: Any, actual: Any, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), where
        for k in expected:
            _assert_same(expected[k], actual[k], f"{where}.{k}")
    elif isinstance(expected, list):
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14, err_msg=where)
    else:
        assert type(actual) is type(expected) and actual == expected, (where, expected, actual)


def test_assigning_a_non_tensor_to_data_is_pytorchs_type_error() -> None:
    for value in (np.ones(2), 1.5, [1.0, 2.0]):
        with pytest.raises(TypeError) as ours:
            agrad.ones(2).data = value
        with pytest.raises(TypeError) as theirs:
            torch.ones(2).data = value
        assert str(ours.value) == str(theirs.value)


def test_repointing_a_tensor_with_live_views_is_refused_not_desynchronised() -> None:
    # PyTorch lets the view keep the old storage while still calling itself a view of the
    # base; agrad refuses rather than let writes through the view land in the new storage.
    base = agrad.zeros(4)
    view = base[:2]
    with pytest.raises(RuntimeError, match="live views"):
        base.data = agrad.ones(6)
    assert view.tolist() == [0.0, 0.0] and base.tolist() == [0.0] * 4
    del view
    base.data = agrad.ones(6)  # no live view left: allowed
    assert base.tolist() == [1.0] * 6


def test_np_array_copies_and_asarray_shares() -> None:
    t = agrad.tensor([1.0, 2.0])
    copy, shared = np.array(t), np.asarray(t)
    copy[0], shared[1] = 7.0, 8.0
    assert t.tolist() == [1.0, 8.0]
    assert np.array(t, dtype=np.float32).dtype == np.float32
