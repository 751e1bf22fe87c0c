"""Execution of a compiled program: one loop over the parser's flat IR, on the engine.

`Program.prepare` checks the names and converts the ``--set`` values once; each
`Prepared.run` then only makes the --wrt leaves and runs the instructions (``agrad fit``
runs a program ten thousand times). A call's function, keyword names and signature
check are resolved the first time its instruction runs and reused after: they depend
only on the program's text, not on the values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine import functions as F
from ..engine.tensor import Tensor, wrap
from ..errors import AgradError, AgradLimitError, AgradNameError, AgradValueError
from ..records import field, record
from . import ir
from .functions import CONSTANTS, TABLE, Function, LangList, as_int, constant, to_tensor
from .naming import check_method, keyword_aliases, suggest, trailing_sizes
from .steps import ARITH as _ARITH
from .steps import COMPARE as _COMPARE
from .steps import CallStep

if TYPE_CHECKING:
    from .program import Program

MAX_DIMS = 32  # nested tensor literal depth


@record
class Run:
    """One execution: the output, every variable's final value, and the leaves made."""

    output: Tensor
    env: dict[str, Tensor]
    wrt: dict[str, Tensor] = field(default_factory=dict)  # --wrt name -> its tensor
    names: dict[int, str] = field(default_factory=dict)  # id(tensor) -> variable name
    slots: list = field(default_factory=list)  # each instruction's value (see lang.anomaly)


def bound_value(value: Any, dtype: Any, copy: bool) -> Tensor:
    """A --set value (or a fitted parameter) as the tensor a run reads."""
    if type(value) is np.ndarray:  # a fitted parameter, each step: as as_tensor takes it
        return wrap(value.astype(dtype, copy=copy))
    t = value if isinstance(value, Tensor) else F.as_tensor(np.asarray(value))
    return wrap(t._array.astype(dtype, copy=copy))


class Executor:
    """One run's state: slots, the environment, and the leaves made for --wrt."""

    def __init__(self, program: Program, bound: dict[str, Tensor], wrt: list[str]) -> None:
        self.program = program
        self.wrt = wrt
        self.bound = bound
        self.env: dict[str, Tensor] = {}
        for name in program.free:  # inputs named in --wrt become leaves that require grad
            value = bound[name]
            self.env[name] = wrap(value._array, True) if name in wrt else value

    def execute(self) -> Run:
        slots: list[Any] = []
        append, env = slots.append, self.env
        functions, operands = self.program.steps  # (see agrad.lang.steps)
        try:  # one try for the loop (entered once, not once per instruction)
            for function, operand in zip(functions, operands):  # noqa: B905 - same length
                append(function(slots, env, self, operand))
        except (AgradError, MemoryError) as failure:
            self._failed(self.program.parsed.instrs[len(slots)], failure)
        return self._finish(slots)

    def _failed(self, instr: ir.Instr, failure: BaseException) -> None:
        """Raise ``failure`` at the instruction that raised it."""
        if isinstance(failure, MemoryError):
            failure = AgradLimitError("out of memory computing this value; use smaller inputs")
        raise self.program._located(
            failure,  # type: ignore[arg-type]
            instr.line,
            instr.column,
            instr.end_column,
        ) from None

    def _finish(self, slots: list) -> Run:
        last = self.program.parsed.instrs[self.program.parsed.output]
        try:  # the output may be a list literal still to become a tensor
            output = to_tensor(slots[self.program.parsed.output])
        except AgradError as exc:
            raise self.program._located(exc, last.line, last.column, last.end_column) from None
        wrt = {}
        for name in self.wrt:
            t = self.env[name]
            if t.grad_fn is not None:
                t.retain_grad()
            elif not t.requires_grad:
                t = self.env[name] = wrap(t._array, True)
            wrt[name] = t
        names = {id(t): n for n, t in self.env.items()}
        return Run(output, self.env, wrt, names, slots)

    def step(self, instr: ir.Instr, slots: list) -> Any:
        kind = instr.kind
        if kind == ir.BINARY:  # the commonest kinds first
            lhs, rhs = instr.args
            return self.binary(instr.op, slots[lhs], slots[rhs])
        if kind == ir.NAME:
            if instr.name in self.env:
                return self.env[instr.name]
            return CONSTANTS[instr.name]
        if kind == ir.CONST:
            return instr.value
        args = [slots[j] for j in instr.args]
        if kind == ir.UNARY:
            x = to_tensor(args[0])
            return F.neg(x) if instr.op == "-" else x
        if kind == ir.CALL:
            return self.call(instr, args, slots)
        if kind == ir.LIST:
            items = LangList(args)
            depth = sum(1 for _ in _nested(items))
            if depth > MAX_DIMS:
                raise AgradLimitError(
                    f"tensor literal nests {depth} levels deep; at most "
                    f"{MAX_DIMS} dimensions are supported"
                )
            return items
        if kind == ir.INDEX:
            return F.index(to_tensor(args[0]), self.key(instr.items, slots))
        if kind == ir.TRANSPOSE:
            return F.transpose(to_tensor(args[0]))
        if kind == ir.STORE:
            return self.store(instr.name, to_tensor(args[0]))
        if kind == ir.STORE_INDEX:
            return self.store_index(instr, to_tensor(args[0]), slots)
        raise AgradValueError(f"unknown instruction {kind}")

    def binary(self, op: str, a: Any, b: Any) -> Tensor:
        # Lists become tensors; masks from comparisons take part as 0/1 floats. (A float
        # tensor, the common case, is taken as it is.)
        if type(a) is not Tensor or a._array.dtype.kind == "b":
            a = to_tensor(a) if isinstance(a, (LangList, Tensor)) else a
        if type(b) is not Tensor or b._array.dtype.kind == "b":
            b = to_tensor(b) if isinstance(b, (LangList, Tensor)) else b
        if op == "@":
            return F.matmul(to_tensor(a), to_tensor(b))
        if op in _COMPARE:
            return _COMPARE[op](to_tensor(a), b)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = to_tensor(a)
        if not isinstance(a, Tensor):  # scalar OP tensor: the reflected operator
            return {
                "+": b.__radd__,
                "-": b.__rsub__,
                "*": b.__rmul__,
                "/": b.__rtruediv__,
                "**": b.__rpow__,
            }[op](a)
        return _ARITH[op](a, b)

    def call(self, instr: ir.Instr, args: list, slots: list, step: CallStep | None = None) -> Any:
        checked = self.program.checked_calls.get(id(instr))
        if checked is None:
            fn = TABLE.get(instr.name)
            if fn is None:
                raise AgradNameError(
                    f"unknown function {instr.name!r}"
                    f"{suggest(instr.name, TABLE, alternatives=True)}; 'agrad functions' lists "
                    "them"
                )
            if instr.op == ir.METHOD:
                check_method(fn)
            kwargs = keyword_aliases(fn, {k: slots[j] for k, j in instr.kwargs})
            args = trailing_sizes(fn, args, LangList)
            _bind(fn, args, kwargs)
            # All three depend on the call as written only: the same for every run.
            self.program.checked_calls[id(instr)] = (fn, tuple(kwargs))
            if step is not None:
                step.checked(fn)
        else:
            fn, keywords_as_named = checked
            kwargs = {
                k: slots[j] for k, (_, j) in zip(keywords_as_named, instr.kwargs, strict=True)
            }
            args = trailing_sizes(fn, args, LangList)
        positional, keywords = fn.convert(args, kwargs)
        try:
            return fn.impl(*positional, **keywords)
        except AgradError:
            raise
        except (ValueError, TypeError, IndexError, OverflowError) as exc:  # from NumPy
            raise AgradValueError(f"{fn.name}(): {exc}; usage: {fn.signature()}") from None

    def key(self, items: tuple, slots: list) -> tuple:
        key = []
        for item in items:
            if isinstance(item, ir.Slice):
                part = slice(
                    *(None if p is None else as_int(slots[p], "index", "slice") for p in item)
                )
                if part.step == 0:
                    raise AgradValueError("index: a slice step must not be zero")
                key.append(part)
            elif item is None or item is Ellipsis:
                key.append(item)
            else:
                value = to_tensor(slots[item], keep_bool=True)
                if value.ndim == 0:
                    key.append(as_int(value, "index", "index"))
                else:  # positions: constants of the graph, as a number is
                    key.append(np.asarray(constant(value, "index", "index")._array))
        return tuple(key)

    def store(self, name: str, value: Tensor) -> Tensor:
        if name in self.bound and name in self.program.constant:
            bound = self.bound[name]
            value = wrap(bound._array, value.requires_grad and value.is_leaf)
        if name in self.wrt and value.grad_fn is None and not value.requires_grad:
            value = wrap(value._array, True)
        self.env[name] = value
        return value

    def store_index(self, instr: ir.Instr, value: Tensor, slots: list) -> Tensor:
        if instr.name not in self.env:
            raise AgradNameError(f"{instr.name!r} must be assigned before '{instr.name}[...] ='")
        target = self.env[instr.name]
        if target.grad_fn is None and target.requires_grad:
            raise AgradValueError(
                f"{instr.name!r} is a leaf that requires grad (a variable you differentiate "
                f"with respect to), so it cannot be assigned into; assign into a copy, e.g. "
                f"y = {instr.name} * 1; y[...] = ..."
            )
        F.setitem(target, self.key(instr.items, slots), value)
        self.env[instr.name] = target
        return target


def _nested(items: Any):
    """Yield once per nesting level of a list literal (its first element's chain)."""
    while isinstance(items, LangList):
        yield items
        items = items[0] if items else None


def _bind(fn: Function, args: list, kwargs: dict) -> None:
    """Check a call against the function's signature; errors name the usage line."""
    params = [p.name for p in fn.params]
    if fn.variadic is None and len(args) > len(params):
        raise AgradValueError(
            f"{fn.name}() takes at most {len(params)} argument(s), got "
            f"{len(args)}; usage: {fn.signature()}"
        )
    for key in kwargs:
        if key not in params:
            raise AgradValueError(
                f"{fn.name}() has no argument {key!r}"
                f"{suggest(key, params)}; usage: {fn.signature()}"
            )
        if key in params[: len(args)]:
            raise AgradValueError(f"{fn.name}() got {key!r} twice; usage: {fn.signature()}")
    given = set(params[: len(args)]) | set(kwargs)
    missing = [p.name for p in fn.params if p.name not in given and p.required]
    if missing or (fn.variadic is not None and not args):
        what = f"argument {missing[0]!r}" if missing else f"a {fn.variadic.name}"  # type: ignore[union-attr]
        raise AgradValueError(f"{fn.name}() is missing {what}; usage: {fn.signature()}")
