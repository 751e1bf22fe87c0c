"""The op table's faces and structure, checked from the table itself.

- every op is reachable from the engine API (``agrad.*``), from a Tensor method and from
  the language, or its entry declares that face absent (and `opinfo` says why);
- every differentiable entry explains its rule in words (for --explain);
- the NumPy and the graph namespaces of the VJP rules define the same functions, with
  the same (NumPy's) signatures;
- the engine has no import cycle, and no module of agrad is over 400 lines;
- the allocation-free shape rule of advanced indexing agrees with NumPy.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opinfo import INFO, VALUES

import agrad
from agrad.engine import graph_namespace, kernels
from agrad.engine.ops import TABLE
from agrad.engine.ops.core import ALONG_AXIS, BINARY, REDUCTION, UNARY
from agrad.engine.ops.indexing import _advanced_shape, normalize_index
from agrad.lang.functions import TABLE as LANGUAGE
from agrad.lang.program import Program

SRC = Path(agrad.__file__).parent

# ---- reachability -------------------------------------------------------------------------


def _names():
    """The tensors reach expressions see (see opinfo)."""
    x = agrad.tensor([0.3, -1.2, 0.7, 1.6], requires_grad=True)
    return {
        "agrad": agrad,
        "x": x,
        "y": agrad.tensor([1.1, 0.4, -0.8, 0.5], requires_grad=True),
        "p": agrad.tensor([0.4, 1.3, 0.8, 2.1], requires_grad=True),
        "s": agrad.tensor([0.3, -0.6, 0.45, -0.2], requires_grad=True),
        "m": agrad.tensor([[0.5, -1.0, 0.25, 0.8], [1.5, 0.2, -0.7, 0.1]], requires_grad=True),
        "mask": agrad.tensor([1.0, 0.0, 0.0, 1.0]),
        "q": agrad.tensor(_matrix(VALUES["q"]), requires_grad=True),
        "S": agrad.tensor(_matrix(VALUES["S"]), requires_grad=True),
    }


def _matrix(text):
    return Program.compile(text).run().output.data


_API = {UNARY: "agrad.{}(x)", BINARY: "agrad.{}(x, y)", REDUCTION: "agrad.{}(m, 1)",
        ALONG_AXIS: "agrad.{}(m, 1)"}  # fmt: skip
_METHOD = {UNARY: "x.{}()", BINARY: "x.{}(y)", REDUCTION: "m.{}(dim=1)", ALONG_AXIS: "m.{}(1)"}


@contextlib.contextmanager
def _spy(op):
    """Count the calls of ``op``'s forward (every face ends in it, through apply)."""
    # The language's table makes an entry from the forward's signature on first lookup:
    # make them all now, from the real forwards, not from this spy's (*args, **kwargs).
    dict(LANGUAGE)
    calls = []
    original = op.forward

    def forward(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    object.__setattr__(op, "forward", forward)
    try:
        yield calls
    finally:
        object.__setattr__(op, "forward", original)


def _reaches(op, expression: str) -> bool:
    with _spy(op) as calls:
        eval(expression, _names())  # noqa: S307 - test expressions from opinfo, not input
    return bool(calls)


def _program_reaches(op, program: str, sets: dict) -> bool:
    values = {k: Program.compile(v).run().output for k, v in sets.items()}
    with _spy(op) as calls:
        Program.compile(program).run(values, wrt=list(values))
    return bool(calls)


def test_every_op_has_one_opinfo_entry():
    assert set(INFO) == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_op_is_reachable_from_the_api_tensor_and_language_or_declares_it(name):
    op, info = TABLE[name], INFO[name]
    if op.api_name is not None:  # else declared internal: no agrad.* function
        assert callable(getattr(agrad, op.api_name, None)), f"agrad.{op.api_name} is missing"
        for alias in op.aliases:
            assert getattr(agrad, alias) is getattr(agrad, op.api_name)
        sample = info.api or _API.get(op.family, "").format(op.api_name)
        assert sample, f"{name}: a custom entry needs an `api` sample in opinfo"
        assert _reaches(op, sample), f"{sample} does not reach {name}"
    if op.method_name is not None:
        assert callable(getattr(agrad.Tensor, op.method_name, None))
        sample = info.method or _METHOD.get(op.family, "").format(op.method_name)
        assert sample, f"{name}: a custom entry needs a `method` sample in opinfo"
        assert _reaches(op, sample), f"{sample} does not reach {name}"
    elif info.method:  # an operator or a method of another name ([], ~, .float())
        assert _reaches(op, info.method), f"{info.method} does not reach {name}"
    if op.language_name is not None:
        assert op.language_name in LANGUAGE
    program = info.program or (f"{op.language_name}(x)", {"x": "[0.3, 0.6]"})
    if info.program is None and op.language_name is None:
        assert info.not_in_language, f"{name}: give a program that reaches it, or a reason"
    else:
        assert _program_reaches(op, *program), f"{program[0]} does not reach {name}"


def test_generated_language_functions_call_their_public_function_by_keyword():
    """A generated language function passes its forward's parameters by name to the
    entry's agrad.* function, which must accept them (NumPy's names are also PyTorch's
    keyword aliases there)."""
    for op in TABLE.values():
        if op.language_name is None:
            continue
        public = inspect.signature(getattr(agrad, op.api_name))
        fn = LANGUAGE[op.language_name]
        tensors = [p for p in fn.params if p.kind == "tensor"]
        keywords = {p.name: None for p in fn.params if p.kind != "tensor"}
        public.bind(*[None] * len(tensors), **keywords)  # raises TypeError if not


def test_non_differentiable_operands_get_no_gradient():
    """An entry's ``nondiff`` operands (where's condition): its VJP returns None for them,
    even when such an operand is a float tensor that requires grad."""
    from test_ops_generated import make_inputs

    for op in TABLE.values():
        if not op.nondiff or op.vjp is None:
            continue
        for case in op.cases:
            ts = [agrad.tensor(a, requires_grad=True) for a in make_inputs(op, case)]
            out = agrad.engine.ops.apply(op, *ts, **case.params)
            grads = agrad.autograd.grad(out.sum(), ts, allow_unused=True)
            assert all(grads[i] is None for i in op.nondiff), op.name


def test_every_differentiable_op_explains_its_rule():
    for op in TABLE.values():
        if op.vjp is not None:
            assert op.explain and "vector-Jacobian" not in op.explain, op.name


# ---- the two array namespaces of VJP rules ------------------------------------------------


def _parameters(fn):
    """Names, kinds and defaults; a NumPy ufunc's are its operands (up to ``out``)."""
    params = list(inspect.signature(fn).parameters.values())
    if isinstance(fn, np.ufunc):
        params = params[: fn.nin]
    return [(p.name, p.kind, p.default) for p in params]


def test_numpy_and_graph_namespaces_have_the_same_functions_and_signatures():
    defined = {
        name
        for name, value in vars(graph_namespace).items()
        if inspect.isfunction(value) and value.__module__ == graph_namespace.__name__
    }
    assert defined == set(kernels.NAMESPACE)
    for name in kernels.NAMESPACE:
        numpy_side, graph_side = getattr(kernels, name), getattr(graph_namespace, name)
        assert _parameters(numpy_side) == _parameters(graph_side), name


# ---- structure ----------------------------------------------------------------------------


def _engine_imports() -> dict[str, set[str]]:
    """Module -> the agrad.engine modules it imports (anywhere in it, at any depth), a
    submodule import counting as an import of its subpackage too (unless the importer is
    inside that subpackage: it is being imported already)."""
    root = SRC / "engine"
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in node.names] + [base]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                while name.startswith("agrad.engine.") and not module.startswith(name + "."):
                    targets.add(name)
                    name = name.rsplit(".", 1)[0]
        graph[module] = targets
    return {m: {t for t in ts if t in graph and t != m} for m, ts in graph.items()}


def test_the_engine_has_no_import_cycle():
    graph = _engine_imports()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in graph:
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            module, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[module] = 2
            elif state.get(child) == 1:
                cycle = path[path.index(child) :] + [child]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            elif child not in state:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(graph[child]))))
    assert "agrad.engine.tensor" in graph and not graph["agrad.engine.tensor"] & {
        "agrad.engine.functions", "agrad.engine.autograd", "agrad.engine.ops"
    }  # fmt: skip


def test_no_module_is_over_400_lines():
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}


# ---- the shape rule of advanced indexing ----------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_advanced_index_shape_agrees_with_numpy(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    items = []
    for n in shape[: data.draw(st.integers(1, len(shape)))]:
        kind = data.draw(st.sampled_from(["array", "int", "slice", "none"]))
        if kind == "array":
            dims = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
            items.append(np.asarray(data.draw(st.integers(-n, n - 1))) + np.zeros(dims, int))
        elif kind == "int":
            items.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(slice(data.draw(st.integers(0, n)), None))
        else:
            items.append(None)
    full, advanced = normalize_index(tuple(items), len(shape))
    try:
        expected = np.zeros(shape)[full].shape
    except (IndexError, ValueError):
        return  # arrays that do not broadcast: the rule raises its own error for them
    if advanced:
        assert _advanced_shape(shape, full) == expected
