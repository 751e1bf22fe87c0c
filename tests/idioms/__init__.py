"""Idioms of real third-party PyTorch autograd code, rewritten as our own snippets.

Each module gathers the idioms of one source (PyTorch's tutorials and docstrings, d2l, karpathy's
micrograd and makemore lectures, other teaching code). No third-party code is copied: every
snippet is written for this project to exercise the same API calls and semantics, and its
``@idiom(...)`` text names what it mirrors. ``tests/test_pytorch_idioms.py`` runs each snippet on
PyTorch (the oracle) and on agrad and compares the results.
"""

from __future__ import annotations

from . import (  # noqa: F401 (imported to register their snippets)
    basics,
    blitz,
    custom_function,
    d2l,
    examples,
    functional,
    grad_mode,
    grads,
    graph_api,
    makemore,
    mechanics,
    micrograd,
    optim,
    stevens,
    teaching,
    tensor_api,
    tensor_hooks,
)
from ._registry import SNIPPETS, Snippet

__all__ = ["SNIPPETS", "Snippet"]
