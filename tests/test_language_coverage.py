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
    # matrix functions (agrad.lang.functions), on a well-conditioned matrix
    "diag": "diag(x)", "logdet": "logdet(diag(x) + 1)", "solve": "solve(diag(x) + 1, x)",
    "einsum": 'einsum("ij,j->i", diag(x) + 1, x)',
    # PyTorch's names for the language's functions
    "cat": "cat([x, x])", "clamp": "clamp(x, min=0.5)", "pow": "pow(x, 3)",
    # the neural-network functions (agrad.lang.nn_functions)
    "conv2d": "conv2d(reshape(concat([x, x, x]), [1, 1, 3, 3]), reshape(x[1:], [1, 1, 1, 2]))",
    "max_pool2d": "max_pool2d(reshape(concat([x, 2 * x, 3 * x]), [1, 3, 3]), 2, stride=1)",
    "avg_pool2d": "avg_pool2d(reshape(concat([x, 2 * x, 3 * x]), [1, 3, 3]), 2, stride=1)",
    "adaptive_avg_pool2d": "adaptive_avg_pool2d(reshape(concat([x, 2 * x, 3 * x]), [1, 3, 3]), 2)",
    "batch_norm": "batch_norm(reshape(concat([x, x * x]), [2, 3]))",
    "layer_norm": "layer_norm(m, [3])", "cross_entropy": "cross_entropy(m, [2])",
    "mse_loss": "mse_loss(x, [1, 2, 3])", "gelu": "gelu(x)",
}  # fmt: skip
CONSTRUCTORS = {"zeros", "ones", "eye", "full", "arange", "linspace", "randn", "rand"}
NOT_DIFFERENTIABLE = {"one_hot": "one_hot(x, 3)"}  # classes in, 0/1 rows out: no gradient
GENERATED = {op.language_name: op for op in OPS.values() if op.language_name}


def test_every_function_is_generated_or_written_by_hand_and_listed():
    assert set(TABLE) == set(GENERATED) | set(HAND_WRITTEN) | CONSTRUCTORS | set(NOT_DIFFERENTIABLE)
    assert not set(GENERATED) & (set(HAND_WRITTEN) | CONSTRUCTORS | set(NOT_DIFFERENTIABLE))


def sample(name: str) -> tuple[str, dict]:
    if name in HAND_WRITTEN:
        return f"m = reshape(x, [1, 3]); {HAND_WRITTEN[name]}", {"x": [0.3, 0.6, 0.9]}
    program, sets = INFO[GENERATED[name].name].program
    return program, {k: Program.compile(v).run().output for k, v in sets.items()}


@pytest.mark.parametrize("name", sorted(set(TABLE) - CONSTRUCTORS - set(NOT_DIFFERENTIABLE)))
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


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_non_differentiable_functions_give_no_gradient(name):
    run = Program.compile(NOT_DIFFERENTIABLE[name]).run({"x": [0.0, 2.0, 1.0]}, wrt=["x"])
    assert not run.output.requires_grad and run.output.grad_fn is None


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_constructors_take_no_tensor_input(name):
    args = {"full": "[2], 1.5", "eye": "2", "linspace": "0, 1, 3"}.get(name, "2")
    run = Program.compile(f"{name}({args})").run()
    assert not run.output.requires_grad and run.output.grad_fn is None


# Arguments for the functions that need inputs of particular shapes or values (the rest of
# each call takes the defaults below, by kind).
IMAGE = {"x": "ones(1, 1, 3, 3)", "padding": "1", "dilation": "1", "groups": "1"}
SHAPED_KEYWORDS = {
    "conv2d": {**IMAGE, "weight": "ones(1, 1, 2, 2)", "bias": "ones(1)", "padding": "[3]",
               "dilation": "[3]"},
    "max_pool2d": IMAGE, "avg_pool2d": IMAGE, "adaptive_avg_pool2d": IMAGE,
    "batch_norm": {"x": "ones(2, 3)"},
    "one_hot": {"x": "[0, 1]", "num_classes": "2"},
    **{name: {"x": "[[2, 0.5], [0.5, 1]]"} for name in
       ("trace", "det", "inv", "cholesky", "logdet", "diagonal", "tril", "triu")},
    "solve": {"a": "[[2, 0.5], [0.5, 1]]", "b": "[1, 2]"},
    "diagonal": {"x": "[[2, 0.5], [0.5, 1]]", "dim2": "1"},
}  # fmt: skip


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
    chosen = SHAPED_KEYWORDS.get(name, {})
    keywords = ", ".join(f"{p.name}={chosen.get(p.name, values[p.kind])}" for p in fn.params)
    program = Program.compile(f"{name}({keywords})")
    run = program.run({"x": [0.3, 0.6, 0.9]} if program.free else {})
    assert run.output is not None
