"""The node a custom autograd Function records (see `agrad.engine.function`), and its ctx.

``Exp.apply(x)`` runs ``Exp.forward(ctx, x)`` without recording, then gives its tensor
outputs a grad_fn of class ``ExpBackward`` whose backward calls ``Exp.backward(ctx, g)``.
The backward loop (`agrad.engine.autograd`) treats that node as any other, except that it
hands it the arriving gradients through `FunctionNode.vjp` and, for a Function of several
outputs, one gradient per output (``Tensor._output_nr`` says which).

As in PyTorch: ``ctx.saved_tensors`` are freed after backward (and checked against in-place
writes), ``needs_input_grad``, ``mark_dirty``, ``mark_non_differentiable``,
``set_materialize_grads``, non-tensor arguments and outputs, the newer ``setup_context``
form, ``once_differentiable``, and double backward when ``backward`` is written with
differentiable operations (it then runs recorded, under ``create_graph=True``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradAutogradError
from .backward_step import FREED_ERROR
from .node import Node
from .ops.core import NOTHING, Op, same_shape
from .tensor import Tensor, wrap


def _not_replayable(*args: Any, **kwargs: Any) -> Any:
    raise AgradAutogradError("a custom autograd Function's node cannot be re-run on arrays")


def _never(*args: Any, **kwargs: Any) -> tuple:  # FunctionNode.vjp runs instead
    raise AssertionError("a custom Function's backward runs through FunctionNode.vjp")


# What a custom Function's node says about itself to code that reads node.op (graph drawing,
# --explain); it saves nothing the engine manages: the ctx holds what the user saved.
FUNCTION_OP = Op(
    "custom_function", lambda node: type(node).__name__, _not_replayable, _never, same_shape,
    saves=NOTHING, explain="a custom autograd Function: its backward is the user's own code",
    public=False, method=False, kink=True,
)  # fmt: skip


class FunctionCtx:
    """What ``forward`` and ``backward`` share (PyTorch's ``ctx``); any attribute may be set."""

    # Defaults at the class (immutable values, replaced on the instance when set): a ctx is
    # made on every call of a Function, gradcheck's many evaluations too.
    to_save: tuple = ()
    _versions: tuple[int, ...] = ()
    _freed = False
    _node_name = "Function"
    needs_input_grad: tuple[bool, ...] = ()
    non_differentiable: tuple = ()
    dirty_tensors: tuple = ()
    materialize_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``backward`` (read them back as ``ctx.saved_tensors``)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of "
                    f"type {type(t).__name__}"
                )
        self.to_save = tensors
        self._versions = tuple(t._version if t is not None else 0 for t in tensors)

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        raise NotImplementedError("agrad has no forward-mode AD for custom Functions (jvp)")

    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise AgradAutogradError(FREED_ERROR)
        for t, version in zip(self.to_save, self._versions, strict=True):
            if t is not None and t._version != version:
                raise AgradAutogradError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: a tensor of shape {t.shape} saved by "
                    f"{self._node_name} was written after it was saved. Hint: compute on a "
                    ".clone() instead of modifying it in place."
                )
        return tuple(self.to_save)

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Say which inputs ``forward`` modified in place (they are returned as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Say which outputs have no gradient (indices, masks)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: ``backward`` gets None (not zeros) for outputs no gradient reached."""
        self.materialize_grads = bool(value)


class FunctionNode(Node):
    """The grad_fn of a custom Function's outputs (class ``<Name>Backward``). Attributes it
    does not have are read from the ctx, so ``y.grad_fn.saved_tensors`` works as in
    PyTorch (whose ctx *is* the grad_fn)."""

    __slots__ = ()
    custom = True
    plain = False
    function: Any = None  # the Function subclass (set on each <Name>Backward class)

    def __getattr__(self, name: str) -> Any:
        ctx = self.__dict__.get("ctx")
        if ctx is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(ctx, name)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """Per tensor argument (non-tensor arguments have no edge, as in PyTorch)."""
        edges = super().next_functions
        return tuple(e for x, e in zip(self.inputs, edges, strict=True) if isinstance(x, Tensor))

    @property
    def freed(self) -> bool:
        return self.__dict__.get("_freed", False)

    @freed.setter
    def freed(self, value: bool) -> None:
        # Freeing drops what the user saved, as PyTorch frees a Function's saved tensors.
        self.__dict__["_freed"] = value
        if value:
            self.ctx._freed = True
            self.ctx.to_save = ()

    # Several outputs: per-output hooks and retained tensors (one output's are keyed by
    # its position, as the arriving gradients are).
    def add_output_hook(self, tensor: Tensor, hook: Any) -> Any:
        if self.outputs == 1:
            return super().add_output_hook(tensor, hook)
        from .node import RemovableHandle

        hooks = self.__dict__.setdefault("output_hooks", {}).setdefault(tensor._output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def retain_output(self, tensor: Tensor) -> None:
        if self.outputs == 1:
            super().retain_output(tensor)
        else:
            self.__dict__.setdefault("retained_outputs", {})[tensor._output_nr] = tensor

    def vjp(self, g: Any, ns: Any, create_graph: bool, batch: int) -> tuple[list, Any]:
        """The user's backward on the arriving gradient(s); per input, its gradient (summed
        to the input's shape) or None. ``batch`` leading axes are independent rows."""
        arriving = list(g) if self.outputs != 1 else [g]
        if not batch:
            grads = self._backward(arriving, ns, create_graph)
            return grads, grads
        lead = next(a.shape[:batch] for a in arriving if a is not None)
        count = int(np.prod(lead))
        rows = []
        for r in range(count):
            row = [None if a is None else _row(a, lead, r) for a in arriving]
            rows.append(self._backward(row, ns, create_graph))
        grads = []
        for i, x in enumerate(self.inputs):
            column = [row[i] for row in rows]
            if all(c is None for c in column):
                grads.append(None)
                continue
            column = [_zeros_like_input(x, create_graph) if c is None else c for c in column]
            stacked = ns.stack(*column, axis=0)
            if len(lead) > 1:
                stacked = stacked.reshape(lead + tuple(x.shape))
            grads.append(stacked)
        return grads, grads

    def _backward(self, arriving: list, ns: Any, create_graph: bool) -> list:
        ctx = self.ctx
        grad_outputs: list = []
        for meta, a in zip(self.output_meta, arriving, strict=True):
            if meta is None:  # a non-tensor output: never a gradient
                grad_outputs.append(None)
            elif a is None:
                grad_outputs.append(
                    wrap(np.zeros(meta[0], meta[1])) if ctx.materialize_grads else None
                )
            else:
                grad_outputs.append(a if isinstance(a, Tensor) else wrap(a))
        function = self.function
        result = function._user_backward()(ctx, *grad_outputs)
        results = result if isinstance(result, tuple) else (result,)
        n = len(self.inputs)
        name = type(self).__name__
        if len(results) < n or any(r is not None for r in results[n:]):
            raise AgradAutogradError(
                f"function {name} returned an incorrect number of gradients (expected {n}, "
                f"got {len(results)})"
            )
        grads: list = []
        for i, (x, child, gi) in enumerate(zip(self.inputs, self.next, results, strict=False)):
            if gi is None:
                grads.append(None)
                continue
            if not isinstance(x, Tensor):
                raise AgradAutogradError(
                    f"function {name} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
            if not isinstance(gi, Tensor):
                raise AgradAutogradError(
                    f"function {name} returned a {type(gi).__name__} as the gradient at "
                    f"position {i + 1}: a backward returns Tensors (or None)"
                )
            if child is None:  # the input does not require grad: its gradient is dropped
                grads.append(None)
                continue
            grads.append(_fit(gi, x, name, i, ns, create_graph))
        return grads


def _row(a: Any, lead: tuple, r: int) -> Any:
    flat = a.reshape((-1, *a.shape[len(lead) :]))
    return flat[r]


def _zeros_like_input(x: Tensor, create_graph: bool) -> Any:
    zeros = np.zeros(x.shape, x.dtype)
    return wrap(zeros) if create_graph else zeros


def _fit(gi: Tensor, x: Tensor, name: str, i: int, ns: Any, create_graph: bool) -> Any:
    """``gi`` as input ``i``'s gradient: summed over broadcast axes, in its dtype. PyTorch
    accepts a gradient of a shape the input broadcasts to, and nothing else."""
    shape = tuple(x.shape)
    if tuple(gi.shape) != shape and not _broadcasts_to(shape, tuple(gi.shape)):
        got = list(gi.shape)
        raise AgradAutogradError(
            f"Function {name} returned an invalid gradient at index {i} - got {got} but "
            f"expected shape compatible with {list(shape)}"
        )
    value = gi if create_graph else gi._array
    if tuple(gi.shape) != shape:
        value = ns.sum_to(value, shape)
    if value.dtype != x.dtype:  # a float32 input gets a float32 gradient
        value = ns.astype(value, x.dtype)
    return value


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
