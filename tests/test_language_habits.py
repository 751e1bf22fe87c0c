"""PyTorch's habits the language accepts where they are unambiguous: method calls for every
function whose first argument is a tensor, dim=/keepdim=, cat, clamp, pow; and suggestions
for unknown names that do not mislead (issue 13)."""

from __future__ import annotations

import json
import keyword

import numpy as np
import pytest

from agrad.errors import AgradNameError, AgradValueError
from agrad.lang import ir
from agrad.lang.functions import TABLE
from agrad.lang.naming import _distance
from agrad.lang.parser import parse
from agrad.lang.program import Program

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def _run(program, **values):
    values = values or {"x": X}
    run = Program.compile(program).run(values, wrt=list(values))
    out = run.output
    grads = {}
    if out.requires_grad:
        out.sum().backward()
        grads = {k: run.wrt[k].grad.data for k in values}
    return out.data, grads


PAIRS = [  # method form, function form
    ("x.sum()", "sum(x)"),
    ("(2 * x).exp().sum()", "sum(exp(2 * x))"),
    ("x.sum(axis=0)", "sum(x, axis=0)"),
    ("x.sum(dim=1, keepdim=true)", "sum(x, axis=1, keepdims=true)"),
    ("x.reshape([3, 2])", "reshape(x, [3, 2])"),
    ("x.reshape(3, 2)", "reshape(x, [3, 2])"),
    ("reshape(x, -1)", "reshape(x, [6])"),
    ("x.reshape(1, 3, 2).sum(dim=0)", "reshape(x, [3, 2])"),
    ("x.T.tanh().mean()", "mean(tanh(transpose(x)))"),
    ("x.softmax(axis=1).log()", "log(softmax(x, axis=1))"),
    ("x.clamp(min=0).pow(2)", "clip(x, min=0) ** 2"),
    ("x.max(dim=0)", "max(x, axis=0)"),
    ("(x @ x.T).det()", "det(x @ transpose(x))"),
    ("x.norm()", "norm(x)"),
    ("cat([x, x], dim=0)", "concat([x, x], axis=0)"),
    ("clamp(x, -0.5, 0.5)", "clip(x, -0.5, 0.5)"),
    ("pow(x, 3)", "x ** 3"),
    ("pow(2, x)", "2 ** x"),
    ("x.pow(x)", "x ** x * 1"),
]


@pytest.mark.parametrize("method, function", PAIRS, ids=[p[0] for p in PAIRS])
def test_pytorch_spelling_gives_the_same_values_and_gradients(method, function):
    if "x.pow(x)" in method:
        values = {"x": np.abs(X) + 0.5}
        a, b = _run(method, **values), _run(function, **values)
    else:
        a, b = _run(method), _run(function)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-14)
    for name in b[1]:
        np.testing.assert_allclose(a[1][name], b[1][name], rtol=1e-14)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_function_with_a_tensor_first_is_a_method(name):
    """x.f() lowers to the same CALL as f(x), with x first; the others refuse, saying why."""
    fn = TABLE[name]
    call = parse(f"x.{name}()").instrs[-1]
    assert (call.kind, call.name, call.op, len(call.args)) == (ir.CALL, name, ir.METHOD, 1)
    if fn.params and fn.params[0].kind in ("tensor", "value"):
        return
    with pytest.raises(AgradValueError, match=rf"'\.{name}\(\)' cannot be a method"):
        Program.compile(f"x.{name}()").run({"x": X})


@pytest.mark.parametrize(
    "name", sorted(n for n, f in TABLE.items() if "axis" in {p.name for p in f.params})
)
def test_dim_is_axis_for_every_function_with_an_axis(name):
    fn = TABLE[name]
    args = "x" if fn.params[0].kind == "tensor" else "[x, x]"
    keep = ", keepdim=true" if "keepdims" in {p.name for p in fn.params} else ""
    keeps = ", keepdims=true" if keep else ""
    a = _run(f"{name}({args}, dim=1{keep})")[0]
    b = _run(f"{name}({args}, axis=1{keeps})")[0]
    np.testing.assert_allclose(a, b)


def test_dim_and_axis_together_is_an_error():
    with pytest.raises(AgradValueError, match="both 'dim' and 'axis'"):
        _run("sum(x, dim=0, axis=0)")


def test_a_bare_method_name_is_not_an_attribute():
    with pytest.raises(Exception, match=r"only '\.T'.*x\.sum\(\)"):
        parse("x.sum")


# ---- suggestions ----------------------------------------------------------------------------


def _message(program):
    with pytest.raises(AgradNameError) as info:
        Program.compile(program).run({"x": X})
    return str(info.value)


@pytest.mark.parametrize(
    "typo, expected",
    [("inverse", "use inv"), ("mm", "use matmul"), ("asin", "use arcsin"), ("view", "use reshape"),
     ("exq", "did you mean 'exp'"), ("stak", "did you mean 'stack'"),
     ("sigmiod", "did you mean 'sigmoid'"), ("logsum", "did you mean 'logsumexp'"),
     ("tarce", "did you mean 'trace'"), ("svd", "no such decomposition")],
)  # fmt: skip
def test_suggestions_name_the_real_function(typo, expected):
    assert expected in _message(f"{typo}(x)")


@pytest.mark.parametrize("unknown", ["foo", "frob", "quux", "hello", "invert"])
def test_far_names_get_no_suggestion(unknown):
    """The class of trace -> 'stack' and inv -> 'sin': nothing but an honest 'unknown'."""
    assert "did you mean" not in _message(f"{unknown}(x)")


def test_every_suggestion_is_one_typo_away():
    """Drop, double or swap a letter of every function name: the suggestion is a function
    within the typo's distance of what was typed (it need not be the original)."""
    for name in TABLE:
        if len(name) < 4:
            continue
        for typo in (name[1:], name + name[-1], name[1] + name[0] + name[2:]):
            if typo in TABLE or typo in keyword.kwlist:
                continue
            message = _message(f"{typo}(x)")
            suggested = message.split("did you mean '")[1].split("'")[0]
            assert _distance(typo, suggested) <= (1 if len(typo) <= 4 else 2), message


def test_method_call_through_the_cli(cli):
    sets = ["--set", "x=[1,2]", "--set", "y=[5,7]", "--set", "w=1", "--set", "b=0"]
    result = cli(["eval", "(w*x + b - y).pow(2).sum()", "--wrt", "w,b", *sets, "--format", "json"])
    assert (result.code, result.err) == (0, "")
    assert json.loads(result.out)["grads"] == {"w": -28, "b": -18}


def test_method_on_a_constructor_is_refused_through_the_cli(cli):
    result = cli(["eval", "x.zeros()", "--set", "x=[1,2]"])
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: line 1, column 3: '.zeros()' cannot be a method")
    assert "zeros(size, ...)" in result.err.splitlines()[0]
