"""Setting ``requires_grad`` on a non-leaf tensor, against PyTorch.

QA round 20: ``nonleaf.requires_grad = True`` was accepted in silence where PyTorch raises
"you can only change requires_grad flags of leaf variables." (``requires_grad_()`` on the
same tensor is a no-op in PyTorch, and stays one). Outcomes and messages come from PyTorch
running the same statements."""

from __future__ import annotations

import pytest
from conftest import require_torch

import agrad

STATEMENTS = {
    "attribute True": lambda y: setattr(y, "requires_grad", True),
    "attribute False": lambda y: setattr(y, "requires_grad", False),
    "method True": lambda y: y.requires_grad_(True),
    "method default": lambda y: y.requires_grad_(),
    "method False": lambda y: y.requires_grad_(False),
}


def _outcome(lib, statement):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    try:
        STATEMENTS[statement](y)
    except RuntimeError as e:
        return ("RuntimeError", str(e), y.requires_grad, y.is_leaf)
    return ("ok", y.requires_grad, y.is_leaf)


@pytest.mark.parametrize("statement", STATEMENTS)
def test_non_leaf_requires_grad_matches_pytorch(statement):
    torch = require_torch()
    assert _outcome(agrad, statement) == _outcome(torch, statement)


def test_the_refusal_leaves_the_graph_usable():
    x = agrad.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad = True
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_leaves_and_results_without_history_still_accept_it():
    """A result of ops on tensors that do not require grad is a leaf: the flag may be set
    (as PyTorch's); a leaf's flag may be set and cleared."""
    torch = require_torch()
    seen = []
    for lib in (agrad, torch):
        c = lib.ones(2) * 2
        c.requires_grad = True
        leaf = lib.ones(2, requires_grad=True)
        leaf.requires_grad = False
        seen.append((c.is_leaf, c.requires_grad, leaf.requires_grad))
    assert seen[0] == seen[1] == (True, True, False)
