"""The compiled steps (`agrad.lang.steps`) take shortcuts for the common instructions; what
the language means is the executor's general path (`Executor.binary`, `Executor.call`).
Every shortcut must give what the general path gives, for every kind of operand (float
tensors of both dtypes, masks, numbers, booleans, strings, list literals) and for calls run
a second time (checked once, then called directly) with values of other shapes, including
values the second time round that make the call fail."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agrad.engine.tensor import Tensor, wrap
from agrad.errors import AgradError
from agrad.lang import ir
from agrad.lang.executor import Executor
from agrad.lang.functions import LangList
from agrad.lang.program import Program
from agrad.lang.steps import compile_steps


def _operands():
    return {
        "float64 tensor": wrap(np.array([1.5, -2.0]), True),
        "float32 tensor": wrap(np.array([0.5, 4.0], dtype=np.float32)),
        "0-d tensor": wrap(np.array(3.0)),
        "mask": wrap(np.array([True, False])),
        "number": 2.0,
        "zero": 0.0,
        "boolean": True,
        "string": "ij",
        "list literal": LangList([1.0, 2.0]),
        "int": 3,  # not a literal of the language, but a value a function may return
    }


def _outcome(compute):
    try:
        with np.errstate(all="ignore"):
            out = compute()
    except AgradError as exc:
        return ("error", type(exc).__name__, str(exc))
    except Exception as exc:  # noqa: BLE001 - the same failure either way is what counts
        return ("exception", type(exc).__name__, str(exc))
    if isinstance(out, Tensor):
        grad_fn = out.grad_fn.name() if out.grad_fn is not None else None
        values = repr(out._array.tolist())  # (repr: nan compares equal to nan)
        return ("tensor", out._array.dtype, values, out.requires_grad, grad_fn)
    return ("value", repr(out))


def _executor() -> Executor:
    return Executor(Program.compile("1"), {}, [])


@pytest.mark.parametrize("op", sorted(ir.BINARY_OPS))
def test_binary_steps_agree_with_the_general_rules(op):
    operands = _operands()
    ((step,), (args,)) = compile_steps((ir.Instr(ir.BINARY, 1, 1, 2, op=op, args=(0, 1)),))
    for (na, a), (nb, b) in itertools.product(operands.items(), repeat=2):
        fast = _outcome(lambda a=a, b=b: step([a, b], {}, _executor(), args))
        general = _outcome(lambda a=a, b=b: _executor().binary(op, a, b))
        assert fast == general, f"{na} {op} {nb}"


def test_name_and_const_steps():
    steps = compile_steps(
        (
            ir.Instr(ir.NAME, 1, 1, 2, name="x"),
            ir.Instr(ir.NAME, 1, 1, 2, name="pi"),
            ir.Instr(ir.CONST, 1, 1, 2, value=1.5),
        )
    )
    x = wrap(np.array(2.0))

    def run(i: int, env: dict) -> object:
        return steps.functions[i]([], env, None, steps.operands[i])

    assert run(0, {"x": x}) is x
    assert run(1, {}) == np.pi
    assert run(1, {"pi": x}) is x  # an assigned name shadows the constant
    assert run(2, {}) == 1.5


CALLS = [
    # (program, first value of x, second value of x)
    ("sum(x)", [1, 2], [[1, 2], [3, 4]]),  # direct: operands only
    ("x.sum()", [1, 2], [[1, 2], [3, 4]]),  # a method call: direct too
    ("maximum(x, 2*x - 3)", [1, 5], [[0, 9]]),
    ("mean(x, 0)", [[1, 2], [3, 4]], [5, 6, 7]),  # a non-operand positional argument
    ("sum(x, axis=0)", [[1, 2], [3, 4]], [5, 6, 7]),  # keywords: the general path
    ("reshape(x, 2, 2)", [1, 2, 3, 4], [5, 6, 7, 8]),  # sizes gathered into a shape
    ("reshape(x, [2, 2])", [1, 2, 3, 4], [1, 2, 3]),  # the second run fails in NumPy
    ("mean(x, 1)", [[1, 2], [3, 4]], [1, 2]),  # the second run's axis is out of range
    ("sum(zeros(2, 3)) + sum(x)", [1], [2, 3]),  # *sizes: the general path
    ("log(x)", [1, 2], [0, -1]),  # -inf and nan, not an error
    ("concat([x, x])", [1, 2], [[1], [2]]),
]


@pytest.mark.parametrize("program,first,second", CALLS)
def test_a_call_run_again_gives_what_a_first_run_gives(program, first, second):
    compiled = Program.compile(program)
    for value in (first, second, first):
        again = _outcome(lambda v=value: compiled.run({"x": v}, ["x"]).output)
        fresh = _outcome(lambda v=value: Program.compile(program).run({"x": v}, ["x"]).output)
        assert again == fresh, (program, value)


def test_a_call_run_again_differentiates_as_a_first_run():
    compiled = Program.compile("sum(tanh(x) * maximum(x, 0.5))")
    for value in ([0.1, 0.9], [[2.0, -1.0], [0.0, 3.0]]):
        runs = [compiled.run({"x": value}, ["x"]), Program.compile(compiled.source).run(
            {"x": value}, ["x"])]  # fmt: skip
        grads = []
        for run in runs:
            run.output.backward()
            grads.append(run.wrt["x"].grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


SAME_FUNCTION_AGAIN = [
    # (program, what the second call's check finds): checked once per function name,
    # method or not, and number of positional arguments; any other call is checked anew
    ("sin(x) + sin(x*2)", None),
    ("sin(x) + sin(x, 2)", "line 1, column 10: sin() takes at most 1 argument(s), got 2"),
    ("sum(x) + x.sum() + x.sum(0)", None),
    ("sum(x) + sum(eye(2)) + sum(x.eye())", "'.eye()' cannot be a method"),
    ("mean(x) + mean(x, axis=0) + mean(x, dim=0, axis=0)", "got both 'dim' and 'axis'"),
]


@pytest.mark.parametrize("program,error", SAME_FUNCTION_AGAIN)
def test_a_function_called_again_is_checked_as_a_first_call(program, error):
    """The check a call passed is reused by the calls of the same function written later in
    the program; what a call gives, or the error it raises, is what it gives when it is the
    program's only call (its own program, run on its own)."""
    compiled = Program.compile(program)
    if error is None:
        run = compiled.run({"x": [0.5, 2.0]}, ["x"])
        alone = []
        for part in program.split(" + "):  # each term in a program of its own
            alone.append(Program.compile(part).run({"x": [0.5, 2.0]}, ["x"]).output)
        np.testing.assert_array_equal(run.output._array, sum(t._array for t in alone))
    else:
        with pytest.raises(AgradError, match=error.replace("(", r"\(").replace(")", r"\)")):
            compiled.run({"x": [0.5, 2.0]}, ["x"])
