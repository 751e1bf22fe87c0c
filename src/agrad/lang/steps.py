"""One compiled step per instruction: what `Executor.execute` calls, in order.

A program runs many times (``agrad fit`` ten thousand times) and its long forms are
long (a 100,000-term sum), so what an instruction does is decided once, when the
program is first run, not at every execution: each step is a small function of
``(slots, env, executor)`` with its operands' slot numbers, its operator's engine
function and (for a call) its checked function bound in. The common cases run
straight through (a float tensor OP a float tensor or a literal number, a name, a
number, a call of tensors only); everything else takes the executor's general
path, which is the definition of what the language means (`Executor.binary`,
`Executor.call`, `Executor.step`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine import functions as F
from ..engine.public import API
from ..engine.tensor import Tensor
from ..errors import AgradError, AgradValueError
from . import ir
from .functions import CONSTANTS

if TYPE_CHECKING:
    from .executor import Executor

Step = Callable[[list, dict, "Executor"], Any]

# The engine function of each binary operator when both operands are float tensors, or the
# left one is and the right one is a number (the same functions `Executor.binary` calls).
ARITH = {"+": F.add, "-": F.sub, "*": API["mul"], "/": F.div, "**": F.pow, "@": API["matmul"]}
COMPARE = {"<": F.lt, "<=": F.le, ">": F.gt, ">=": F.ge, "==": F.eq, "!=": F.ne}
# number OP tensor: the tensor's reflected operator, as `Executor.binary` calls it.
REFLECTED = {
    "+": Tensor.__radd__,
    "-": Tensor.__rsub__,
    "*": Tensor.__rmul__,
    "/": Tensor.__rtruediv__,
    "**": Tensor.__rpow__,
}


def compile_steps(instrs: tuple[ir.Instr, ...]) -> tuple[Step, ...]:
    """The steps of a program's instructions, one each, in order."""
    return tuple(_compile(instr) for instr in instrs)


def _compile(instr: ir.Instr) -> Step:
    kind = instr.kind
    if kind == ir.BINARY:
        return _binary(instr.op, *instr.args)
    if kind == ir.NAME:
        return _name(instr.name)
    if kind == ir.CONST:
        return _const(instr.value)
    if kind == ir.CALL:
        return CallStep(instr)
    return _general(instr)


def _binary(op: str, lhs: int, rhs: int) -> Step:
    both = ARITH.get(op) or COMPARE[op]  # two float tensors
    with_number = None if op == "@" else both  # a float tensor OP a number
    reflected = REFLECTED.get(op)  # a number OP a float tensor

    def binary(slots: list, env: dict, executor: Executor) -> Any:
        a, b = slots[lhs], slots[rhs]
        if type(a) is Tensor and a._array.dtype.kind != "b":
            kind = type(b)
            if kind is Tensor and b._array.dtype.kind != "b":
                return both(a, b)
            if kind is float and with_number is not None:
                return with_number(a, b)
        elif (
            type(a) is float
            and reflected is not None
            and type(b) is Tensor
            and b._array.dtype.kind != "b"
        ):
            return reflected(b, a)
        return executor.binary(op, a, b)  # lists, masks, strings, int...: the general rules

    return binary


def _name(name: str) -> Step:
    def read(slots: list, env: dict, executor: Executor) -> Any:
        value = env.get(name)  # (env holds tensors only: None is "not assigned")
        return CONSTANTS[name] if value is None else value

    return read


def _const(value: Any) -> Step:
    def const(slots: list, env: dict, executor: Executor) -> Any:
        return value

    return const


def _general(instr: ir.Instr) -> Step:
    def general(slots: list, env: dict, executor: Executor) -> Any:
        return executor.step(instr, slots)

    return general


class CallStep:
    """A call: checked against its function's signature the first time it runs (by
    `Executor.call`, which raises what is wrong with it where it stands in the program);
    after that, a call of positional arguments only converts and calls directly."""

    __slots__ = ("instr", "direct")

    def __init__(self, instr: ir.Instr) -> None:
        self.instr = instr
        # (implementation, [(convert, param name)], function name), once checked
        self.direct: tuple[Callable[..., Any], list, Any] | None = None

    def __call__(self, slots: list, env: dict, executor: Executor) -> Any:
        direct = self.direct
        if direct is None:
            return executor.call(self.instr, [slots[j] for j in self.instr.args], slots, self)
        impl, converters, fn = direct
        name = fn.name
        args = [
            convert(slots[j], name, param)
            for (convert, param), j in zip(converters, self.instr.args, strict=True)
        ]
        try:
            return impl(*args)
        except AgradError:
            raise
        except (ValueError, TypeError, IndexError, OverflowError) as exc:  # from NumPy
            raise AgradValueError(f"{fn.name}(): {exc}; usage: {fn.signature()}") from None

    def checked(self, fn: Any) -> None:
        """Called by `Executor.call` once the call passed its checks: a call of positional
        arguments that `Function.convert` maps one to one onto the first parameters (no
        keywords, no *sizes, no sizes gathered into a shape) goes direct from now on."""
        nargs = len(self.instr.args)
        if self.instr.kwargs or fn.variadic is not None or nargs > len(fn.params):
            return
        self.direct = (fn.impl, [(p.convert, p.name) for p in fn.params[:nargs]], fn)
