"""The two array namespaces VJP rules are written against, as the backward loop passes them.

``NUMPY`` (`kernels`) when the backward pass runs on arrays, ``GRAPH``
(`graph_namespace`) under ``create_graph=True``. Besides the names both modules define,
every op of the table is reachable by its name — its NumPy forward, or that forward
recorded as a node — so a new op's VJP may call any op, itself included, with nothing
added here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from . import graph_namespace, kernels
from .args import first
from .ops.core import TABLE, Op, apply


def namespace(module: ModuleType, from_op: Callable[[Op], Callable[..., Any]]) -> ModuleType:
    """A module's functions, then the op table's (looked up once, then cached).

    A module object rather than a class with ``__getattr__``: a module's attributes are
    read as plain dictionary lookups (a class's ``__getattr__`` slows every read, found or
    not), and the VJP rules read one or more on every step of every backward pass."""
    ns = ModuleType(f"{module.__name__}.namespace")
    ns.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})

    def __getattr__(name: str) -> Any:  # (a module's: only for names not yet defined)
        op = TABLE.get(name)
        if op is None:
            raise AttributeError(f"no array function {name!r} (nor an op of that name)")
        value = from_op(op)
        setattr(ns, name, value)  # later lookups are plain attribute reads
        return value

    ns.__dict__["__getattr__"] = __getattr__
    return ns


def recorded(op: Op) -> Callable[..., Any]:
    """``op`` called with its forward's NumPy signature, recording a node."""
    signature = None if isinstance(op.forward, np.ufunc) else inspect.signature(op.forward)
    tensors = op.arity if op.arity >= 0 else None

    def fn(*args: Any, **kwargs: Any) -> Any:
        if tensors is None or signature is None:  # operands, then keyword parameters
            return apply(op, *(first(a) for a in args), **kwargs)
        bound = signature.bind(*args, **kwargs).arguments
        values = list(bound.values())
        params = dict(list(bound.items())[tensors:])
        return apply(op, *(first(a) for a in values[:tensors]), **params)

    fn.__name__ = fn.__qualname__ = op.name
    if signature is not None:
        fn.__signature__ = signature  # type: ignore[attr-defined]
    return fn


NUMPY = namespace(kernels, lambda op: op.forward)
GRAPH = namespace(graph_namespace, recorded)
