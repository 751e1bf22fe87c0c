"""One compiled step per instruction: what `Executor.execute` calls, in order.

A program runs many times (``agrad fit`` ten thousand times) and its long forms are
long (a 100,000-term sum), so what an instruction does is decided once, when the
program is first run, not at every execution: each step is a function of
``(slots, env, executor, operand)``, shared by every instruction of its kind (and, for a
binary operator, of its operator), and its operand is what the instruction already holds:
a binary operator's slot pair, a name, a number, a call's `CallStep`. Compiling a program
so allocates nothing per instruction (a closure per instruction cost more than running
the instruction once: issue 15). The common cases run straight through (a float tensor OP
a float tensor or a literal number, a name, a number, a call of tensors only); everything
else takes the executor's general path, which is the definition of what the language
means (`Executor.binary`, `Executor.call`, `Executor.step`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..engine import functions as F
from ..engine.public import API
from ..engine.tensor import Tensor
from ..errors import AgradError, AgradValueError
from . import ir
from .functions import CONSTANTS

if TYPE_CHECKING:
    from .executor import Executor

# A step's function: (slots, env, executor, operand) -> the instruction's value.
StepFunction = Callable[[list, dict, "Executor", Any], Any]

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


class Steps(NamedTuple):
    """A program's steps: instruction *i* runs ``functions[i](slots, env, executor,
    operands[i])`` (two parallel tuples, so that compiling makes no object per step)."""

    functions: tuple[StepFunction, ...]
    operands: tuple[Any, ...]


def compile_steps(instrs: tuple[ir.Instr, ...]) -> Steps:
    """The steps of a program's instructions, one each, in order."""
    functions: list[StepFunction] = []
    operands: list[Any] = []
    function, operand = functions.append, operands.append
    binary = BINARY_STEPS
    checked: dict[tuple, Any] = {}  # calls checked so far, by what their check depends on
    for instr in instrs:  # (a loop, not a helper per instruction: programs are long)
        kind = instr.kind
        if kind == ir.BINARY:
            function(binary[instr.op])
            operand(instr.args)
        elif kind == ir.NAME:
            function(read_name)
            operand(instr.name)
        elif kind == ir.CONST:
            function(constant)
            operand(instr.value)
        elif kind == ir.CALL:
            function(call)
            operand(CallStep(instr, checked))
        else:
            function(general)
            operand(instr)
    return Steps(tuple(functions), tuple(operands))


def _binary(op: str) -> StepFunction:
    both = ARITH.get(op) or COMPARE[op]  # two float tensors
    with_number = None if op == "@" else both  # a float tensor OP a number
    reflected = REFLECTED.get(op)  # a number OP a float tensor

    def binary(slots: list, env: dict, executor: Executor, args: tuple[int, int]) -> Any:
        lhs, rhs = args
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

    binary.__name__ = binary.__qualname__ = f"binary {op}"
    return binary


BINARY_STEPS: dict[str, StepFunction] = {op: _binary(op) for op in ir.BINARY_OPS}


def read_name(slots: list, env: dict, executor: Executor, name: str) -> Any:
    value = env.get(name)  # (env holds tensors only: None is "not assigned")
    return CONSTANTS[name] if value is None else value


def constant(slots: list, env: dict, executor: Executor, value: Any) -> Any:
    return value


def call(slots: list, env: dict, executor: Executor, step: CallStep) -> Any:
    direct = step.direct
    instr = step.instr
    if direct is None:
        direct = step.shared.get(step.key)  # the same call written before: checked already
        if direct is None:
            return executor.call(instr, [slots[j] for j in instr.args], slots, step)
        step.direct = direct
    impl, converters, fn = direct
    name = fn.name
    if len(converters) == 1:  # (the commonest call, one operand: no comprehension's frame)
        ((convert, param),) = converters
        args = [convert(slots[instr.args[0]], name, param)]
    else:
        args = [
            convert(slots[j], name, param)
            for (convert, param), j in zip(converters, instr.args, strict=True)
        ]
    try:
        return impl(*args)
    except AgradError:
        raise
    except (ValueError, TypeError, IndexError, OverflowError) as exc:  # from NumPy
        raise AgradValueError(f"{fn.name}(): {exc}; usage: {fn.signature()}") from None


def general(slots: list, env: dict, executor: Executor, instr: ir.Instr) -> Any:
    return executor.step(instr, slots)


class CallStep:
    """A call (the operand of its step, `call`): checked against its function's signature
    the first time it runs (by `Executor.call`, which raises what is wrong with it where it
    stands in the program); after that, a call of positional arguments only converts and
    calls directly. What the check finds depends only on the function's name, whether it
    is a method call and how many positional arguments it has (when it has no keywords),
    so a call of the same function written again (a long sum of sin(...) terms) is
    checked once: ``shared`` holds the direct form of each such call checked so far."""

    __slots__ = ("instr", "direct", "shared", "key")

    def __init__(self, instr: ir.Instr, shared: dict[tuple, Any]) -> None:
        self.instr = instr
        # (implementation, [(convert, param name)], function name), once checked
        self.direct: tuple[Callable[..., Any], list, Any] | None = None
        self.shared = shared
        self.key = None if instr.kwargs else (instr.name, instr.op, len(instr.args))

    def checked(self, fn: Any) -> None:
        """Called by `Executor.call` once the call passed its checks: a call of positional
        arguments that `Function.convert` maps one to one onto the first parameters (no
        keywords, no *sizes, no sizes gathered into a shape) goes direct from now on."""
        nargs = len(self.instr.args)
        if self.instr.kwargs or fn.variadic is not None or nargs > len(fn.params):
            return
        self.direct = (fn.impl, [(p.convert, p.name) for p in fn.params[:nargs]], fn)
        if self.key is not None:
            self.shared[self.key] = self.direct
