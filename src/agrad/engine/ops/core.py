"""The op table's machinery: `Op` entries, `apply`, and what a recorded node keeps.

Every primitive is one `Op`, and everything about it lives in that entry: its NumPy
forward, its vector-Jacobian product (written against a namespace so the same rule runs
on arrays or, under ``create_graph=True``, on tensors), its shape rule, its PyTorch
grad_fn name, what its VJP reads of the values it was applied to, its explain text, its
batching rule, its test domain and special sample values, and its public face (the
``agrad.*`` function, the Tensor method and the language function, generated from its
family or written by hand for a custom entry). Everything else reads the table.

Broadcasting is undone once, in the backward loop (`agrad.engine.autograd`):
a VJP returns each input's gradient in the output's (broadcast) shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import AgradAutogradError
from ...records import field, record, replace
from .. import batching, limits, views
from ..escapes import read_values
from ..grad_mode import STATE
from ..limits import LIMIT
from ..node import Node, named, node_class
from ..shape_rules import (  # noqa: F401 - re-exported for the entries
    Shape,
    along_axis_shape,
    batch_of,
    broadcast_shape,
    kept_shape,
    normalize_axis,
    reduce_shape,
    reduced_shape,
    same_shape,
)
from ..tensor import COMPLEX_GRAD_ERROR, WRITES, Tensor, wrap
from .failures import explain_failure, tracked_parameter
from .limit_check import check_limit

# Families: how an entry's public functions are made. The first four are generated from the
# entry (`agrad.engine.public`); a custom entry's are written by hand and name it.
UNARY, BINARY, REDUCTION, ALONG_AXIS, CUSTOM = (
    "unary", "binary", "reduction", "along_axis", "custom",
)  # fmt: skip
FAMILIES = (UNARY, BINARY, REDUCTION, ALONG_AXIS, CUSTOM)


@record(frozen=True)
class Saves:
    """What an op's VJP reads of one recorded application: which inputs' values (None:
    all of them) and whether the output's. A node keeps only the shapes of the rest, and
    an in-place write into a value it reads makes backward refuse, as PyTorch's saved
    variables do. Declared per entry; generated tests check the declaration both ways."""

    inputs: tuple[int, ...] | None = None
    output: bool = False
    # Inputs read only for the other operands' gradients (mul's a, for b's): a write into
    # one is harmless when no other operand wants a gradient (PyTorch saves it only then).
    for_others: tuple[int, ...] = ()
    anything: bool = field(init=False, default=True)  # derived: (read on every backward step)

    def __post_init__(self) -> None:
        object.__setattr__(self, "anything", self.output or self.inputs != ())

    def reads_input(self, i: int) -> bool:
        return self.inputs is None or i in self.inputs

    def reads_for(self, i: int, next_: tuple) -> bool:
        """Whether input ``i`` is read, given which operands want a gradient (``next_``)."""
        if i in self.for_others:
            return any(n is not None for j, n in enumerate(next_) if j != i)
        return self.reads_input(i)


NOTHING = Saves((), False)
PRODUCT = Saves(None, False, for_others=(0, 1))  # a*b, a@b: each read for the other's grad
INPUTS = Saves(None, False)
OUTPUT = Saves((), True)
INPUTS_AND_OUTPUT = Saves(None, True)


@record(frozen=True)
class Case:
    """One generated-test configuration: input shapes and op parameters, and for a special
    sample (zeros, ties, poles) the input values themselves."""

    shapes: tuple[Shape, ...]
    params: dict[str, Any] = field(default_factory=dict)
    values: tuple[Any, ...] | None = None  # fixed inputs; None: drawn from the domain
    at_kink: bool = False  # the values sit on a kink: no finite differences there


def special(*values: Any, at_kink: bool = False, **params: Any) -> Case:
    """A sample at chosen values (``special([0., 2., 0.], axis=0)``)."""
    arrays = tuple(np.asarray(v, dtype=np.float64) for v in values)
    return Case(tuple(a.shape for a in arrays), params, arrays, at_kink)


UNARY_CASES = (Case(((),)), Case(((3,),)), Case(((2, 3),)))
BINARY_CASES = (
    Case(((2, 3), (2, 3))),
    Case(((2, 3), (3,))),
    Case(((1, 3), (2, 1))),
    Case(((), (2, 3))),
    Case(((3,), ())),
)


@record(frozen=True)
class Op:
    """One primitive and every fact about it (see the module docstring)."""

    name: str
    grad_fn: str | Callable[[Node], str]
    forward: Callable[..., Any]
    vjp: Callable[..., tuple] | None  # None: not differentiable (outputs never require grad)
    shape_rule: Callable[..., Shape]
    saves: Saves = INPUTS
    explain: str = ""  # the rule in words, for --explain (required when differentiable)
    arity: int = 1  # number of tensor operands; -1 means a variable number
    nondiff: tuple[int, ...] = ()  # operands that never get a gradient (where's condition)
    # The public face.
    family: str = CUSTOM
    public: str | bool = True  # the agrad.* name (True: the op's name; False: internal)
    aliases: tuple[str, ...] = ()  # more agrad.* (and Tensor method) names of it
    method: str | bool = True  # a Tensor method of that name (True: the public name)
    language: str | bool = False  # a language function (True: the public name)
    doc: str = ""  # one line for `agrad functions` and the docstring
    # Dtypes (`agrad.engine.promotion`): operands are promoted as torch.result_type does;
    # ``floating``: integer and bool operands compute in the default float dtype (sqrt,
    # ``/``); ``same_dtype``: two dtypes are PyTorch's RuntimeError, not promoted (matmul).
    floating: bool = False
    same_dtype: bool = False
    # Batching (None: the default for the shape rule; see `batching.DEFAULTS`), and whether
    # the output can hold more elements than the largest input (then the element limit is
    # checked first; None: only broadcasting does).
    batch: Callable[..., Any] | None = None
    grows: bool | None = None
    # The output never has more elements than the product of the operands' sizes when none
    # is empty (broadcasting: each output dimension is one operand's; matmul): under a limit
    # that product is checked first, and the shape rule only when it is over (None: True for
    # broadcasting). Generated tests check the declaration on every case of the entry.
    within_operands: bool | None = None
    # Parameters computed from the operands when the op is applied, as PyTorch saves extra
    # outputs (max's indices): ``prepare(*operands, **params) -> params``.
    prepare: Callable[..., dict] | None = None
    # Generated tests: input domain, configurations, and samples at special values.
    domain: tuple[float, float] | tuple[tuple[float, float], ...] = (-2.0, 2.0)
    cases: tuple[Case, ...] = ()
    special: tuple[Case, ...] = ()
    kink: bool = False  # has points of non-differentiability (tests avoid them)
    jumps: bool = False  # its value jumps (floor, sign): `check.program_runs` looks for it
    needs_mask: bool = False  # the VJP takes ``needs`` (which inputs want a gradient)
    mutates: bool = False  # the forward writes into its first input (indexed assignment)
    view: bool = False  # the forward may return a view of its first input (`engine.views`)
    # The checker's complex step (f'(x) = Im f(x + ih)/h) runs the forward on complex arrays:
    # every differentiable op without kinks is holomorphic there, and `forward` serves unless
    # it is not (sigmoid's two-branch kernel, var's modulus): then this one does.
    complex_forward: Callable[..., Any] | None = None
    # Derived.
    node_class: type | None = field(init=False, default=None)  # set when grad_fn is fixed
    read_inputs: tuple[int, ...] | None = field(init=False, default=None)  # saves.inputs
    keeps_output: bool = field(init=False, default=False)  # saves.output
    api_name: str | None = field(init=False, default=None)
    method_name: str | None = field(init=False, default=None)
    language_name: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"op {self.name}: unknown family {self.family!r}")
        if self.vjp is not None and not self.explain:
            raise ValueError(f"op {self.name}: a differentiable op needs its explain text")
        fixed = isinstance(self.grad_fn, str) and self.vjp is not None
        name = self.grad_fn if isinstance(self.grad_fn, str) else ""
        derived: dict[str, Any] = {"node_class": node_class(name) if fixed else None}
        api = self.name if self.public is True else self.public or None
        derived["api_name"] = api
        derived["method_name"] = api if self.method is True else self.method or None
        derived["language_name"] = api if self.language is True else self.language or None
        if self.batch is None:
            derived["batch"] = batching.DEFAULTS.get(self.shape_rule)
        if self.grows is None:
            derived["grows"] = self.shape_rule is broadcast_shape
        if self.within_operands is None:
            derived["within_operands"] = self.shape_rule is broadcast_shape
        derived["read_inputs"], derived["keeps_output"] = self.saves.inputs, self.saves.output
        if not self.cases:
            derived["cases"] = {UNARY: UNARY_CASES, BINARY: BINARY_CASES}.get(self.family, ())
        for key, value in derived.items():
            object.__setattr__(self, key, value)

    @property
    def holomorphic(self) -> bool:
        """Differentiable, without kinks: the complex step is exact through it."""
        return self.vjp is not None and not self.kink

    def for_complex(self) -> Op:
        """This entry with the forward that is holomorphic on complex arrays."""
        if self.complex_forward is None:
            return self
        return replace(self, forward=self.complex_forward)

    def domain_of(self, i: int) -> tuple[float, float]:
        """Input ``i``'s sampling range for generated tests."""
        if isinstance(self.domain[0], tuple):
            return self.domain[i]
        return self.domain

    def differentiable_inputs(self, n: int) -> list[int]:
        """Which of ``n`` operands can receive a gradient."""
        return [i for i in range(n) if i not in self.nondiff]


TABLE: dict[str, Op] = {}
# Arrays smaller than this are kept even when unneeded: a stand-in would cost more than it
# frees. (Generated tests set it to 0, so every value an entry says it never reads is one.)
SMALL = 4096


def register(*ops: Op) -> None:
    """Add entries to the op table (names are unique)."""
    for op in ops:
        if op.name in TABLE:
            raise ValueError(f"duplicate op {op.name!r}")
        TABLE[op.name] = op


# Set while the profiler, inference mode or saved-tensor hooks are in use (by
# `agrad.engine.graph_hooks`): every application then goes through it, and it calls `record`.
INTERCEPT: list[Callable[..., Tensor] | None] = [None]


def _applier(intercepted: bool) -> Callable[..., Tensor]:
    """`apply` (intercepted) or `record` (not): one body made twice, so that applying an op
    costs one Python call rather than two (it runs for every op of every graph)."""

    def run(op: Op, *inputs: Any, **params: Any) -> Tensor:
        if intercepted:
            intercept = INTERCEPT[0]
            if intercept is not None:
                return intercept(op, inputs, params)
        arity = len(inputs)
        datas: Any
        if arity == 1:  # (no list comprehension for the common cases: it costs a frame)
            x0 = inputs[0]
            datas = (x0._array if isinstance(x0, Tensor) else x0,)
        elif arity == 2:
            x0, x1 = inputs
            datas = (
                x0._array if isinstance(x0, Tensor) else x0,
                x1._array if isinstance(x1, Tensor) else x1,
            )
        else:
            datas = [x._array if isinstance(x, Tensor) else x for x in inputs]
        if params:  # a number parameter given a tensor the gradient flows through
            for key, value in params.items():
                if value.__class__ is Tensor and value._rg:
                    raise tracked_parameter(op, key)
        if LIMIT.elements is not None and op.grows:  # (the language sets a limit)
            check_limit(op, datas, params)
        if op.prepare is not None:  # parameters found from the operands
            params = op.prepare(*datas, **params)
        try:
            out = op.forward(*datas, **params)
        except (ValueError, IndexError, TypeError) as exc:
            raise explain_failure(op, datas, params, exc) from None
        except MemoryError:
            raise limits.out_of_memory(op.name) from None
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if not STATE.enabled or op.vjp is None:
            if op.vjp is None:  # a comparison's mask, argmax's indices: a value read
                read_values(*inputs)
            return _untracked(op, inputs[0] if inputs else None, out, params)
        if arity == 1 or arity == 2:  # (nearly every op): its operands in the node's own slots
            n0 = (x0.grad_fn or x0) if isinstance(x0, Tensor) and x0._rg else None
            if arity == 2:
                n1 = (x1.grad_fn or x1) if isinstance(x1, Tensor) and x1._rg else None
                if n0 is None and n1 is None:
                    return _untracked(op, x0, out, params)
            elif n0 is None:
                return _untracked(op, x0, out, params)
            source = x0  # (before a stand-in replaces it: a view's base)
            reads = op.read_inputs  # tracked inputs the VJP never reads: reached through n0/n1
            a0 = datas[0]
            if reads is not None and n0 is not None and 0 not in reads and a0.size >= SMALL:
                x0 = a0 = ShapeOnly(a0, x0._output_nr)
            # Made a plain Node and given its named class last: the slots are then written on
            # one class at every application (Python specialises those stores; on a different
            # class per op they cost twice as much), and the class is set once.
            node: Node = _new(Node)
            node.op, node.arity, node.x0, node.a0, node.n0 = op, arity, x0, a0, n0
            if arity == 2:
                a1 = datas[1]
                if reads is not None and n1 is not None and 1 not in reads and a1.size >= SMALL:
                    x1 = a1 = ShapeOnly(a1, x1._output_nr)
                node.x1, node.a1, node.n1 = x1, a1, n1
            node.params = params
            node.freed = False
            node.out = ShapeOnly(out) if not op.keeps_output and out.size >= SMALL else out
            node.stamp = WRITES[0]
            cls = op.node_class
            if cls is None:
                named(node)
            else:
                node.__class__ = cls
        else:
            many = _record_many(op, inputs, datas, params, out)
            if many is None:
                return _untracked(op, inputs[0] if inputs else None, out, params)
            node, source = many, inputs[0]
        dtype = out.dtype  # (float64 first: an identity test, on every recorded op)
        if dtype is not _FLOAT64 and dtype.kind == "c":  # never a silent wrong gradient
            raise AgradAutogradError(
                COMPLEX_GRAD_ERROR.format(what=f"the complex result of {op.name}")
            )
        result = _new(Tensor)  # (`wrap`'s work, without its call)
        producer: Any = node  # (Tensor declares grad_fn None until set)
        result._array, result._rg, result.grad_fn = out, True, producer
        if op.view:
            return _view(op, source, result, params)
        return result

    return run


apply = _applier(True)
apply.__name__ = apply.__qualname__ = "apply"
apply.__doc__ = "Run ``op`` forward on tensors (or raw constants) and record a node if needed."
record = _applier(False)
record.__name__ = record.__qualname__ = "record"
record.__doc__ = """`apply`'s work without the intercept: the forward, and the node when a graph is
being recorded."""


_new = object.__new__
_FLOAT64 = np.dtype(np.float64)


def _untracked(op: Op, x: Any, out: np.ndarray, params: dict) -> Tensor:
    """The result of an application no graph records."""
    if op.view:
        return _view(op, x, wrap(out), params)
    return wrap(out)


def _record_many(op: Op, inputs: tuple, datas: list, params: dict, out: Any) -> Node | None:
    """The node of an op with other than one or two operands (cat, einsum, ...), or None
    when none of them is tracked."""
    next_ = tuple([(x.grad_fn or x) if isinstance(x, Tensor) and x._rg else None for x in inputs])
    for producer in next_:  # (not next_.count(None): that would call Tensor.__eq__)
        if producer is not None:
            break
    else:
        return None
    reads = op.read_inputs
    if reads is not None:  # tracked inputs the VJP never reads: reached through next_
        inputs = tuple(
            [
                x
                if n is None or i in reads or x._array.size < SMALL
                else ShapeOnly(x._array, x._output_nr)
                for i, (x, n) in enumerate(zip(inputs, next_, strict=True))
            ]
        )
        datas = [x._array if isinstance(x, (Tensor, ShapeOnly)) else x for x in inputs]
    kept = ShapeOnly(out) if not op.keeps_output and out.size >= SMALL else out
    cls = op.node_class
    if cls is not None:
        return cls(op, inputs, datas, params, kept, next_, WRITES[0])
    return named(Node(op, inputs, datas, params, kept, next_, WRITES[0]))


def _view(op: Op, x: Any, out: Tensor, params: dict) -> Tensor:
    views.register(op, x, out, params)
    return out


class ShapeOnly:
    """What a node keeps of a value whose contents its VJP never reads: shape facts."""

    __slots__ = ("shape", "ndim", "dtype", "size", "_output_nr")

    def __init__(self, array: Any, output_nr: int = 0) -> None:
        self.shape, self.ndim, self.dtype = array.shape, array.ndim, array.dtype
        self.size = array.size
        self._output_nr = output_nr  # of the tensor it stands for (see Tensor._output_nr)

    @property
    def _array(self) -> ShapeOnly:
        return self


def raw(x: Any) -> np.ndarray:
    """The array behind a tensor or constant (masks in VJPs are built from data, not graph)."""
    return x._array if isinstance(x, Tensor) else np.asarray(x)
