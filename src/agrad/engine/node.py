"""Graph nodes: a `Node` is PyTorch's grad_fn, one per recorded operation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Node:
    """The backward function of one op application (PyTorch's ``grad_fn``).

    ``inputs`` are the op's operands (tensors or raw constants) as saved for the
    vector-Jacobian product; ``arrays`` their arrays (or shape stand-ins), as the VJP takes
    them; ``next`` holds, per operand, the producer to send its gradient to: a Node, a
    leaf Tensor that requires grad, or None.

    A node of one or two operands (nearly all) keeps them in its own slots (``x0, a0, n0``
    per operand), not in tuples: each container would be one more object for Python's
    cyclic collector to track per recorded node, and the collector's passes grow with
    them (issue 15). ``arity`` is then 1 or 2; it is 0 when ``x0, a0, n0`` hold the
    tuples of a node with any other number of operands.
    """

    __slots__ = (
        "op", "arity", "x0", "x1", "a0", "a1", "n0", "n1", "params", "out", "stamp", "freed",
        "__dict__", "__weakref__",
    )  # fmt: skip
    # Rarely set: class-level defaults until first written.
    retained: Any = None  # the output Tensor, once retain_grad() was called on it
    hooks: list | None = None
    out_written = False  # the output's array was changed in place after this node made it
    out_box: list | None = None  # the output's version box, once shared with a detach()
    outputs = 1  # a custom Function's node may have several (then gradients arrive per output)
    custom = False  # a custom Function's node: its backward is `FunctionNode.vjp`
    # None of the above (one output, no tensor hooks, no retained .grad, not custom): the
    # backward loop reads this one flag per node instead of four (whoever sets them clears it).
    plain = True

    def __init__(
        self, op: Any, inputs: tuple, arrays: Sequence, params: dict, out: Any, next_: tuple,
        stamp: int,
    ) -> None:  # fmt: skip
        self.op = op
        self.params = params
        self.out = out
        self.stamp = stamp  # the in-place write counter when made (see tensor.WRITES)
        self.freed = False  # (a slot: set on every node after backward, it needs no __dict__)
        self._set_edges(tuple(inputs), tuple(arrays), tuple(next_))

    def _set_edges(self, inputs: tuple, arrays: tuple, next_: tuple) -> None:
        n = len(inputs)
        if len(arrays) != n:  # a custom Function's node: its ctx keeps what backward reads
            arrays = (None,) * n
        if n == 1:
            self.arity = 1
            (self.x0,), (self.a0,), (self.n0,) = inputs, arrays, next_
        elif n == 2:
            self.arity = 2
            (self.x0, self.x1), (self.a0, self.a1), (self.n0, self.n1) = inputs, arrays, next_
        else:
            self.arity = 0
            self.x0, self.a0, self.n0 = inputs, arrays, next_

    @property
    def inputs(self) -> tuple:
        arity = self.arity
        if arity == 1:
            return (self.x0,)
        return (self.x0, self.x1) if arity == 2 else self.x0

    @inputs.setter
    def inputs(self, value: Sequence) -> None:  # (saved-tensor hooks swap them for a step)
        self._set_edges(tuple(value), self.arrays, self.next)

    @property
    def arrays(self) -> tuple:
        arity = self.arity
        if arity == 1:
            return (self.a0,)
        return (self.a0, self.a1) if arity == 2 else tuple(self.a0)

    @arrays.setter
    def arrays(self, value: Sequence) -> None:
        self._set_edges(self.inputs, tuple(value), self.next)

    @property
    def next(self) -> tuple:
        arity = self.arity
        if arity == 1:
            return (self.n0,)
        return (self.n0, self.n1) if arity == 2 else self.n0

    def name(self) -> str:
        """PyTorch's class name for this backward function, e.g. 'MulBackward0'."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """Per input: (Node, 0), (AccumulateGrad, 0) for a leaf, or (None, 0) for a constant;
        an operand that never gets a gradient (where's condition) is not listed, as PyTorch's."""
        result: list[tuple[Any, int]] = []
        skip = getattr(self.op, "nondiff", ())
        for k, (x, target) in enumerate(zip(self.inputs, self.next, strict=True)):
            if k in skip:
                continue
            if target is None:
                result.append((None, 0))
            elif isinstance(target, Node):
                result.append((target, getattr(x, "_output_nr", 0)))
            else:
                result.append((AccumulateGrad.of(target), 0))
        return tuple(result)

    def add_output_hook(self, tensor: Any, fn: Any) -> RemovableHandle:
        """``tensor.register_hook(fn)`` for a non-leaf ``tensor`` this node produced."""
        return self.register_tensor_hook(fn)

    def retain_output(self, tensor: Any) -> None:
        """``tensor.retain_grad()`` for a non-leaf ``tensor`` this node produced."""
        self.retained = tensor
        self.plain = False

    def register_tensor_hook(self, fn: Any) -> RemovableHandle:
        """Call ``fn(grad)`` on the gradient arriving at this node; a returned value replaces it.
        (Tensor.register_hook of its output; PyTorch's Node.register_hook, with its
        (grad_inputs, grad_outputs) signature, is installed by `agrad.engine.graph_hooks`.)"""
        if self.hooks is None:
            self.hooks = []
            self.plain = False
        self.hooks.append(fn)
        return RemovableHandle(self.hooks, fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


_CLASSES: dict[str, type[Node]] = {}


def node_class(name: str) -> type[Node]:
    """The Node subclass named as PyTorch names the backward function (MulBackward0, ...),
    so ``type(t.grad_fn).__name__`` reads as it does in PyTorch."""
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (Node,), {"__slots__": ()})
    return cls


def named(node: Node) -> Node:
    """Give a node of an op whose backward name depends on its inputs (sum with or without
    an axis, matmul by rank, indexing by kind) the class of that name."""
    name = node.op.grad_fn(node)
    cls = _CLASSES.get(name)  # (`node_class`'s lookup, without its call: on every such node)
    node.__class__ = cls if cls is not None else node_class(name)
    return node


class _OfSelfOnly(Node):
    """fill_ with a number, zero_: recorded as where(False, self, value), listed as PyTorch's
    FillBackward2 and ZeroBackward0 list their edges: self's alone (a number has none)."""

    __slots__ = ()

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return super().next_functions[:1]


class _CopySlices(Node):
    """The base's node after an in-place write through a view. PyTorch's CopySlices wraps the
    write's own node and lists the base's edge, then that node's edges but the view's old
    value's (which the base's edge stands for). agrad records the write's node as the
    second operand; `wraps` (set by `agrad.engine.inplace.write_view`) says which of its
    edges was the view's (-1: none, as for copy_), and they are listed the same way."""

    __slots__ = ()
    wraps: int | None = None  # None: not set (the write recorded no node of its own)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        edges = super().next_functions
        skip, written = self.wraps, self.next[1]
        if skip is None or not isinstance(written, Node):
            return edges
        inner = written.next_functions
        return (edges[0], *(e for k, e in enumerate(inner) if k != skip))


for _cls, _names in ((_OfSelfOnly, ("FillBackward2", "ZeroBackward0")),
                     (_CopySlices, ("CopySlices",))):  # fmt: skip
    for _name in _names:
        _CLASSES[_name] = type(_name, (_cls,), {"__slots__": ()})


class AccumulateGrad:
    """The sink that adds a gradient into a leaf's ``.grad`` (shown in next_functions)."""

    __slots__ = ("variable", "__weakref__")

    def __init__(self, variable: Any) -> None:
        self.variable = variable

    @classmethod
    def of(cls, leaf: Any) -> AccumulateGrad:
        # One per leaf, so identity comparisons in user code behave as in PyTorch.
        acc = leaf._acc
        if acc is None:
            acc = leaf._acc = cls(leaf)
        return acc

    next_functions: tuple = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's name() (its class is AccumulateGrad)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


class RemovableHandle:
    """What register_hook returns: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("hooks", "hook")

    def __init__(self, hooks: list, hook: Any) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)
