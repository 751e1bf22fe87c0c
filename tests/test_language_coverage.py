"""Every language function maps to op-table entries with a VJP (so its gradient flows),
or is a constructor that takes no tensor input. The op table's entries with a language
face get their function generated; the hand-written ones must be listed here."""

from __future__ import annotations

import pytest
from opinfo import INFO

from agrad.engine.autograd import _topological
from agrad.engine.ops import TABLE as OPS
from agrad.lang.functions import TABLE
from agrad.lang.program import Program

# One call per hand-written differentiable function, on x = [0.3, 0.6, 0.9] (or m, its 2-D
# reshape). A generated function runs its op's program from the op-info table.
HAND_WRITTEN = {
    "tensor": "tensor(x)", "square": "square(x)", "dot": "dot(x, x)", "outer": "outer(x, x)",
    "transpose": "transpose(m)", "reshape": "reshape(x, [3, 1])", "concat": "concat([x, x])",
    "stack": "stack([x, x])",
}  # fmt: skip
CONSTRUCTORS = {"zeros", "ones", "eye", "full", "arange", "linspace", "randn", "rand"}
GENERATED = {op.language_name: op for op in OPS.values() if op.language_name}


def test_every_function_is_generated_or_written_by_hand_and_listed():
    assert set(TABLE) == set(GENERATED) | set(HAND_WRITTEN) | CONSTRUCTORS
    assert not set(GENERATED) & (set(HAND_WRITTEN) | CONSTRUCTORS)


def sample(name: str) -> tuple[str, dict]:
    if name in HAND_WRITTEN:
        return f"m = reshape(x, [1, 3]); {HAND_WRITTEN[name]}", {"x": [0.3, 0.6, 0.9]}
    program, sets = INFO[GENERATED[name].name].program
    return program, {k: Program.compile(v).run().output for k, v in sets.items()}


@pytest.mark.parametrize("name", sorted(set(TABLE) - CONSTRUCTORS))
def test_function_records_differentiable_ops(name):
    program, values = sample(name)
    run = Program.compile(program).run(values, wrt=list(values))
    out = run.output
    if name == "tensor":  # tensor(x) makes a new leaf: the one function that cuts the graph
        assert out.grad_fn is None
        return
    assert out.requires_grad and out.grad_fn is not None
    recorded = {node.op.name for node in _topological([out.grad_fn])}
    for node in _topological([out.grad_fn]):
        assert node.op.vjp is not None, f"{name} records {node.op.name} without a VJP"
    if name in GENERATED:
        assert GENERATED[name].name in recorded


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_constructors_take_no_tensor_input(name):
    args = {"full": "[2], 1.5", "eye": "2", "linspace": "0, 1, 3"}.get(name, "2")
    run = Program.compile(f"{name}({args})").run()
    assert not run.output.requires_grad and run.output.grad_fn is None


@pytest.mark.parametrize("name", sorted(TABLE))
def test_keyword_arguments_bind_by_the_signature(name):
    """Every parameter can be given by keyword, under the name the usage line shows
    (`maximum(a=x, b=1)` and `concat(tensors=[...])` once ended in internal errors)."""
    fn = TABLE[name]
    if fn.variadic is not None:
        return  # zeros(2, 3): sizes are positional only
    values = {"tensor": "x", "tensors": "[x, x]", "int": "0", "float": "1", "bool": "false",
              "axis": "0", "shape": "[3]", "value": "x"}  # fmt: skip
    if name == "full":
        values["shape"] = "[2]"
    keywords = ", ".join(f"{p.name}={values[p.kind]}" for p in fn.params)
    program = Program.compile(f"{name}({keywords})")
    run = program.run({"x": [0.3, 0.6, 0.9]} if program.free else {})
    assert run.output is not None
