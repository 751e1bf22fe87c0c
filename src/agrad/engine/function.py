"""Custom autograd Functions (PyTorch's ``torch.autograd.Function``): a forward and a
backward written by hand, recorded as one node of the graph.

``Exp.apply(x)`` runs ``Exp.forward(ctx, x)`` without recording, then gives its tensor
outputs a grad_fn of class ``ExpBackward`` (`agrad.engine.function_node`) whose backward
calls ``Exp.backward(ctx, g)``. As in PyTorch: ``needs_input_grad``, ``mark_dirty``,
``mark_non_differentiable``, non-tensor arguments and outputs, several outputs, the newer
``setup_context`` form, ``once_differentiable``, and double backward when ``backward`` is
written with differentiable operations.
"""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import AgradAutogradError
from .function_node import FUNCTION_OP, FunctionCtx, FunctionNode
from .grad_mode import STATE, no_grad, set_mode
from .ops.core import ShapeOnly
from .tensor import COMPLEX_GRAD_ERROR, WRITES, Tensor, mark_written, wrap

LEGACY_ERROR = (
    "Legacy autograd function with non-static forward method is deprecated. Please use "
    "new-style autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)
# Each Function's forward signature (without ctx), read once: apply binds arguments to it.
_SIGNATURES: weakref.WeakKeyDictionary[type, inspect.Signature] = weakref.WeakKeyDictionary()
TWICE_ERROR = "trying to differentiate twice a function that was marked with @once_differentiable"


class FunctionMeta(type):
    """Gives each Function subclass its backward node class, ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, namespace: dict) -> None:
        super().__init__(name, bases, namespace)
        node_name = namespace.get("_backward_name", f"{name}Backward")
        cls._backward_cls = type(node_name, (FunctionNode,), {"__slots__": (), "function": cls})


class Function(metaclass=FunctionMeta):
    """A differentiable operation written by hand (``torch.autograd.Function``).

    >>> class Square(agrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = agrad.tensor(3.0, requires_grad=True)
    >>> Square.apply(x).backward(); x.grad
    tensor(6.)
    """

    _backward_cls: type[FunctionNode]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AgradAutogradError(LEGACY_ERROR)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it "
            "with forward mode AD (agrad has no forward mode: use the backward)."
        )

    @classmethod
    def _user_backward(cls) -> Callable[..., Any]:
        if cls.backward is not Function.backward:
            return cls.backward
        return cls.vjp

    @classmethod
    def _bind(cls, args: tuple, kwargs: dict) -> tuple:
        """The arguments as forward receives them, as PyTorch's apply: with setup_context,
        bound to forward's parameters with defaults filled in (``needs_input_grad`` and
        the gradients count every parameter); with ``forward(ctx, ...)``, the arguments
        given (a defaulted parameter not passed is not counted), keywords in place."""
        signature = _SIGNATURES.get(cls)
        if signature is None:
            signature = inspect.signature(cls.forward)
            if not cls._uses_setup_context():  # forward(ctx, ...): ctx is not an argument
                params = list(signature.parameters.values())[1:]
                signature = signature.replace(parameters=params)
            _SIGNATURES[cls] = signature
        declared = signature.parameters.values()
        if not kwargs and (
            len(args) == len(declared)
            or any(p.kind is p.VAR_POSITIONAL for p in declared)
            or not cls._uses_setup_context()
        ):
            return args  # nothing to bind or fill in: the common call, without bind's cost
        bound = signature.bind(*args, **kwargs)
        if cls._uses_setup_context():
            bound.apply_defaults()
        names = [p.name for p in declared if p.kind is p.POSITIONAL_OR_KEYWORD]
        count = next((i for i, n in enumerate(names) if n not in bound.arguments), len(names))
        if any(n in bound.arguments for n in names[count:]):  # a keyword after a gap
            raise TypeError(
                f"forward() missing required argument: '{names[count]}' (position {count})"
            )
        if bound.kwargs:
            raise TypeError(
                f"{cls.__name__}.apply: keyword-only parameters of forward "
                f"({', '.join(bound.kwargs)}) are not supported; pass them positionally"
            )
        return tuple(bound.args)

    @classmethod
    def _uses_setup_context(cls) -> bool:
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward and record it: the tensor outputs get a ``<Name>Backward`` grad_fn."""
        setup = cls._uses_setup_context()
        if kwargs or setup:  # (forward(ctx, ...) without keywords: nothing to bind)
            args = cls._bind(args, kwargs)
        ctx = FunctionCtx()
        ctx._node_name = cls._backward_cls.__name__
        needs: tuple[bool, ...]
        if STATE.enabled:  # (a loop, not a generator: this runs on every call, gradcheck's too)
            wanted = []
            for a in args:
                wanted.append(isinstance(a, Tensor) and a._rg)
            ctx.needs_input_grad = needs = tuple(wanted)
        else:
            ctx.needs_input_grad = needs = (False,) * len(args)
        recorded = True in needs
        if recorded:  # (the producers as they are before forward runs)
            next_ = tuple(
                [(a.grad_fn or a) if n else None for a, n in zip(args, needs, strict=True)]
            )
        enabled = set_mode(False)  # (no_grad's work, without its object; restored below)
        try:
            if setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            STATE.enabled = enabled
        outputs = output if isinstance(output, tuple) else (output,)
        for t in ctx.dirty_tensors:  # written by forward (perhaps through .numpy()): as PyTorch,
            mark_written(t)  # a node that saved it refuses to use it
        if recorded:
            results = _record(cls, ctx, args, next_, outputs)
        else:
            results = [_fresh(o, args, ctx.dirty_tensors) for o in outputs]
        return tuple(results) if isinstance(output, tuple) else results[0]


def _fresh(o: Any, args: tuple, dirty: tuple) -> Any:
    """An output as returned when nothing is recorded: an input returned as it is (and not
    marked dirty) becomes a new tensor sharing its data (as PyTorch's view of it)."""
    if isinstance(o, Tensor):
        for a in args:  # (loops, not generators: on every call of an unrecorded Function)
            if o is a:
                for d in dirty:
                    if o is d:
                        return o
                return wrap(o._array)
    return o


def _record(cls: type[Function], ctx: FunctionCtx, args: tuple, next_: tuple, outputs: tuple):
    node = cls._backward_cls(FUNCTION_OP, args, [], {}, None, next_, WRITES[0])
    node.ctx = ctx
    node.outputs = len(outputs)
    dirty = ctx.dirty_tensors
    non_diff = ctx.non_differentiable
    meta: list = []
    results: list = []
    for k, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            meta.append(None)
            results.append(o)
            continue
        meta.append((o.shape, o.dtype))
        if any(o is d for d in dirty):
            if o.grad_fn is None and o._rg:
                raise AgradAutogradError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            t = o
        elif any(o is a for a in args):
            t = wrap(o._array)  # returned as it is: a new tensor sharing the input's data
        else:
            t = o
        if any(o is d for d in non_diff) or o.dtype.kind not in "fc":
            results.append(t)
            continue
        if o.dtype.kind == "c":
            what = f"the complex output {k} of {cls.__name__}"
            raise AgradAutogradError(COMPLEX_GRAD_ERROR.format(what=what))
        t._rg = True
        t.grad_fn = node
        if node.outputs != 1:
            t._output_nr = k
        results.append(t)
    node.output_meta = meta
    first = next((o for o in outputs if isinstance(o, Tensor)), None)
    node.out = ShapeOnly(first._array) if first is not None else None
    # Versions of what was saved, taken now: an input marked dirty was written by forward.
    ctx._versions = tuple(t._version if t is not None else 0 for t in ctx.to_save)
    return results


class _DelayedError(Function):
    """What ``once_differentiable`` puts on a backward's outputs under create_graph: a node
    that refuses to be differentiated."""

    _backward_name = "DelayedError"

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        raise AgradAutogradError(TWICE_ERROR)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a backward that is not itself differentiable: it runs without recording, and a
    second differentiation through it raises (PyTorch's decorator of that name)."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not STATE.enabled or not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        many = isinstance(outputs, tuple)
        # Each output passes through a node that raises when reached: detached and made to
        # require grad first, so that the node is recorded (as PyTorch does).
        wrapped = [
            _DelayedError.apply(wrap(o._array, True)) if isinstance(o, Tensor) else o
            for o in (outputs if many else (outputs,))
        ]
        return tuple(wrapped) if many else wrapped[0]

    return wrapper
