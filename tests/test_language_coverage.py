"""Every language function maps to op-table entries with a VJP (so its gradient flows),
or is a constructor that takes no tensor input. A new function must be added here."""

from __future__ import annotations

import pytest

from agrad.engine.autograd import _topological
from agrad.lang.functions import TABLE
from agrad.lang.program import Program

# One call per differentiable function, on x = [0.3, 0.6, 0.9] (or its 2-D reshape m).
SAMPLES = {
    "tensor": "tensor(x)", "exp": "exp(x)", "log": "log(x)", "log1p": "log1p(x)",
    "expm1": "expm1(x)", "sqrt": "sqrt(x)", "abs": "abs(x)", "sign": "sign(x)", "sin": "sin(x)",
    "cos": "cos(x)", "tan": "tan(x)", "arcsin": "arcsin(x)", "arccos": "arccos(x)",
    "arctan": "arctan(x)", "sinh": "sinh(x)", "cosh": "cosh(x)", "tanh": "tanh(x)",
    "sigmoid": "sigmoid(x)", "relu": "relu(x)", "softplus": "softplus(x)",
    "square": "square(x)", "reciprocal": "reciprocal(x)", "maximum": "maximum(x, 0.5)",
    "minimum": "minimum(x, 0.5)", "clip": "clip(x, 0.4, 0.8)", "where": "where(x > 0.5, x, 0)",
    "sum": "sum(x)", "mean": "mean(x)", "prod": "prod(x)", "max": "max(x)", "min": "min(x)",
    "logsumexp": "logsumexp(x)", "softmax": "softmax(x)", "log_softmax": "log_softmax(x)",
    "norm": "norm(x)", "dot": "dot(x, x)", "matmul": "matmul(m, x)", "outer": "outer(x, x)",
    "transpose": "transpose(m)", "reshape": "reshape(x, [3, 1])", "concat": "concat([x, x])",
    "stack": "stack([x, x])", "var": "var(x)", "std": "std(x)", "cumsum": "cumsum(x)",
}  # fmt: skip
CONSTRUCTORS = {"zeros", "ones", "eye", "full", "arange", "linspace", "randn", "rand"}


def test_every_function_is_covered():
    assert set(TABLE) == set(SAMPLES) | CONSTRUCTORS


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_function_records_differentiable_ops(name):
    program = Program.compile(f"m = reshape(x, [1, 3]); {SAMPLES[name]}")
    run = program.run({"x": [0.3, 0.6, 0.9]}, wrt=["x"])
    out = run.output
    if name == "tensor":  # tensor(x) makes a new leaf: the one function that cuts the graph
        assert out.grad_fn is None
        return
    assert out.requires_grad and out.grad_fn is not None
    for node in _topological([out.grad_fn]):
        assert node.op.vjp is not None, f"{name} records {node.op.name} without a VJP"


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_constructors_take_no_tensor_input(name):
    args = {"full": "[2], 1.5", "eye": "2", "linspace": "0, 1, 3"}.get(name, "2")
    run = Program.compile(f"{name}({args})").run()
    assert not run.output.requires_grad and run.output.grad_fn is None
