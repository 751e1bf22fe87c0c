"""The op table's machinery: `Op` entries, `apply`, and shape-rule helpers.

Every primitive is one `Op`: its NumPy forward, its vector-Jacobian product
(written against a namespace so the same rule runs on arrays or, under
``create_graph=True``, on tensors), its shape rule, its PyTorch grad_fn name and
the input domain its generated tests draw from. Tensor methods, `agrad.*`
functions and the language all reach ops through `apply`.

Broadcasting is undone once, in the backward loop (`agrad.engine.autograd`):
a VJP returns each input's gradient in the output's (broadcast) shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from ..grad_mode import STATE
from ..node import Node, named, node_class
from ..tensor import WRITES, Tensor, wrap

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Case:
    """One generated-test configuration: input shapes and op parameters."""

    shapes: tuple[Shape, ...]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Op:
    """One primitive: forward, VJP, shape rule, grad_fn name, test domain."""

    name: str
    grad_fn: str | Callable[[Node], str]
    forward: Callable[..., Any]
    vjp: Callable[..., tuple] | None  # None: not differentiable (outputs never require grad)
    shape: Callable[..., Shape]
    arity: int = 1  # number of tensor operands; -1 means a variable number
    saves: bool = True  # the VJP reads saved inputs or output (so freeing them matters)
    domain: tuple[float, float] | tuple[tuple[float, float], ...] = (-2.0, 2.0)
    cases: tuple[Case, ...] = ()
    kink: bool = False  # has points of non-differentiability (tests avoid them)
    needs_mask: bool = False  # the VJP takes ``needs`` (which inputs want a gradient)
    mutates: bool = False  # the forward writes into its first input (indexed assignment)
    reads_inputs: bool = True  # False: the VJP reads only the saved output (exp, tanh, ...)
    reads_output: bool = False  # the VJP reads the output's values (exp: g * out)
    # The checker's complex step (f'(x) = Im f(x + ih)/h) runs the forward on complex arrays:
    # every differentiable op without kinks is holomorphic there, and `forward` serves unless
    # it is not (sigmoid's two-branch kernel, var's modulus): then this one does.
    complex_forward: Callable[..., Any] | None = None
    # Whether a node must hold its inputs' values (else only their shapes, so the memory
    # of intermediates is released as soon as nothing else needs it). Derived.
    keeps_inputs: bool = field(init=False, default=True)
    node_class: type | None = field(init=False, default=None)  # set when grad_fn is fixed

    def __post_init__(self) -> None:
        object.__setattr__(self, "keeps_inputs", self.saves and self.reads_inputs)
        fixed = isinstance(self.grad_fn, str) and self.vjp is not None
        object.__setattr__(self, "node_class", node_class(self.grad_fn) if fixed else None)

    @property
    def holomorphic(self) -> bool:
        """Differentiable, without kinks: the complex step is exact through it."""
        return self.vjp is not None and not self.kink

    def for_complex(self) -> Op:
        """This entry with the forward that is holomorphic on complex arrays."""
        if self.complex_forward is None:
            return self
        return dataclasses.replace(self, forward=self.complex_forward)

    def domain_of(self, i: int) -> tuple[float, float]:
        """Input ``i``'s sampling range for generated tests."""
        if isinstance(self.domain[0], tuple):
            return self.domain[i]  # type: ignore[return-value]
        return self.domain  # type: ignore[return-value]


TABLE: dict[str, Op] = {}
# Arrays smaller than this are kept even when unneeded: a stand-in would cost more than it frees.
SMALL = 4096


def register(*ops: Op) -> None:
    """Add entries to the op table (names are unique)."""
    for op in ops:
        if op.name in TABLE:
            raise ValueError(f"duplicate op {op.name!r}")
        TABLE[op.name] = op


def apply(op: Op, *inputs: Any, **params: Any) -> Tensor:
    """Run ``op`` forward on tensors (or raw constants) and record a node if needed."""
    datas = [x.data if isinstance(x, Tensor) else x for x in inputs]
    try:
        out = op.forward(*datas, **params)
    except (ValueError, IndexError, TypeError) as exc:
        raise _explain_failure(op, datas, params, exc) from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if not STATE.enabled or op.vjp is None:
        return wrap(out)
    next_ = tuple([(x.grad_fn or x) if isinstance(x, Tensor) and x._rg else None for x in inputs])
    for producer in next_:  # (not next_.count(None): that would call Tensor.__eq__)
        if producer is not None:
            break
    else:
        return wrap(out)
    if not op.keeps_inputs:  # tracked inputs are reached through next_: keep only shapes
        inputs = tuple(
            [
                x if n is None or x.data.size < SMALL else ShapeOnly(x.data)
                for x, n in zip(inputs, next_, strict=True)
            ]
        )
        datas = [x.data if isinstance(x, (Tensor, ShapeOnly)) else x for x in inputs]
    cls = op.node_class
    if cls is not None:
        node = cls(op, inputs, datas, params, out, next_, WRITES[0])
    else:
        node = named(Node(op, inputs, datas, params, out, next_, WRITES[0]))
    return wrap(out, True, node)


class ShapeOnly:
    """What a node keeps of a value whose contents its VJP never reads: shape facts."""

    __slots__ = ("shape", "ndim", "dtype")

    def __init__(self, array: Any) -> None:
        self.shape, self.ndim, self.dtype = array.shape, array.ndim, array.dtype

    @property
    def data(self) -> ShapeOnly:
        return self


def raw(x: Any) -> np.ndarray:
    """The array behind a tensor or constant (masks in VJPs are built from data, not graph)."""
    return x.data if isinstance(x, Tensor) else np.asarray(x)


def _explain_failure(op: Op, datas: list, params: dict, exc: Exception) -> Exception:
    shapes = [np.shape(d) for d in datas]
    try:
        op.shape(*shapes, **params)
    except (AgradShapeError, AgradValueError) as err:
        return err
    return AgradValueError(f"{op.name}: {exc} (operand shapes {_fmt_shapes(shapes)})")


def _fmt_shapes(shapes: list) -> str:
    return ", ".join(str(tuple(s)) for s in shapes)


# ---- shape rules shared by many entries -------------------------------------------------


def same_shape(shape: Shape, **_: Any) -> Shape:
    return tuple(shape)


def broadcast_shape(*shapes: Shape, **_: Any) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        text = " and ".join(str(tuple(s)) for s in shapes)
        raise AgradShapeError(
            f"shapes {text} cannot be broadcast together: trailing dimensions must be "
            "equal or 1 (reshape or transpose an operand)"
        ) from None


def normalize_axis(axis: int, ndim: int, op: str = "") -> int:
    """A non-negative axis, or an error naming the op and the valid range."""
    if not -ndim <= axis < max(ndim, 1):
        raise AgradShapeError(
            f"{op}: axis {axis} is out of range for a tensor with {ndim} dimension(s) "
            f"(valid: {-ndim}..{ndim - 1})"
        )
    return axis % ndim if ndim else 0


def reduced_shape(shape: Shape, axis: Any = None, keepdims: bool = False, op: str = "") -> Shape:
    if axis is None:
        axes = set(range(len(shape)))
    else:
        axes = {normalize_axis(a, len(shape), op) for a in _as_tuple(axis)}
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def kept_shape(shape: Shape, axis: Any) -> Shape:
    """``shape`` with the reduced axes kept as size 1 (to re-expand a reduction's grad)."""
    return reduced_shape(shape, axis, keepdims=True)


def _as_tuple(axis: Any) -> tuple:
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def batch_of(g: Any, out_ndim: int) -> Shape:
    """Leading batch dimensions a cotangent carries beyond the op's output (jacobian rows)."""
    return tuple(g.shape[: g.ndim - out_ndim])
