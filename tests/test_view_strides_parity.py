"""view() and contiguity as PyTorch's, for every layout a tensor can have: contiguous,
transposed, sliced, diagonal, expanded, and the results of contiguous() and clone() of
each. view() succeeds exactly when PyTorch's does (a contiguous tensor takes any shape; a
strided one the shapes its strides allow), with the same values and gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()

LAYOUTS = {
    "plain": lambda x: x,
    "t": lambda x: x.t(),
    "slice_rows": lambda x: x[::2],
    "slice_cols": lambda x: x[:, ::2],
    "narrow": lambda x: x[:, 1:3],
    "diagonal": lambda x: x.diagonal(),
    "expand": lambda x: x[:1].expand(3, 4),
    "unsqueeze_t": lambda x: x.t().unsqueeze(1),
    "permute3": lambda x: x.reshape(2, 2, 3).permute(2, 0, 1),
    "select_t": lambda x: x.t()[1],
    "t_step": lambda x: x.t()[::2],
    "expand_t": lambda x: x[:, :1].expand(3, 5).t(),
}
AFTER = {
    "as_is": lambda v: v,
    "contiguous": lambda v: v.contiguous(),
    "clone": lambda v: v.clone(),
    "contiguous_of_clone": lambda v: v.clone().contiguous(),
}
TARGETS = ((-1,), (1, -1), (-1, 1), "split_last", "merge_first_two", "unsqueeze_mid")


def _target(v, target):
    shape = tuple(v.shape)
    if target == "split_last":
        return (*shape[:-1], 1, shape[-1]) if shape else (1,)
    if target == "merge_first_two":
        return (shape[0] * shape[1], *shape[2:]) if len(shape) >= 2 else (-1,)
    if target == "unsqueeze_mid":
        return (*shape[:1], 1, *shape[1:])
    return target


def _run(lib, layout, after, target):
    x = lib.tensor(np.arange(12.0).reshape(3, 4) / 3, dtype=lib.float64, requires_grad=True)
    v = AFTER[after](LAYOUTS[layout](x * 1.0))
    facts = (bool(v.is_contiguous()), tuple(v.stride()))
    try:
        w = v.view(_target(v, target))
    except RuntimeError as exc:
        return facts, "refused", type(exc).__name__
    weights = lib.arange(w.numel(), dtype=lib.float64).reshape(w.shape) + 1
    (w.sin() * weights).sum().backward()
    return facts, w.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parametrize("target", TARGETS, ids=str)
@pytest.mark.parametrize("after", sorted(AFTER))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_view_of_every_layout_matches_pytorch(layout, after, target):
    ours, theirs = _run(agrad, layout, after, target), _run(torch, layout, after, target)
    assert ours[0] == theirs[0], f"is_contiguous, stride: agrad {ours[0]}, PyTorch {theirs[0]}"
    refused = isinstance(theirs[1], str)
    assert isinstance(ours[1], str) == refused, (ours[1:], theirs[1:])
    if not refused:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_contiguous_is_itself_or_a_recorded_copy_as_pytorch(layout):
    for lib in (agrad, torch):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), dtype=lib.float64, requires_grad=True)
        v = LAYOUTS[layout](x * 1.0)
        c = v.contiguous()
        assert c.is_contiguous()
        if v.is_contiguous():
            assert c is v, lib.__name__
        else:
            assert type(c.grad_fn).__name__ == "CloneBackward0", lib.__name__
