"""The agrad grammar and its lowering to the flat IR (agrad.lang.parser / ir).

Precedence is checked against Python itself: the same arithmetic strings are
evaluated by Python's eval and by a tiny loop over the IR (`run`, below).
"""

from __future__ import annotations

import operator
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agrad.lang import ir
from agrad.lang.ir import Instr, ParsedProgram, Slice, operand_slots
from agrad.lang.parser import grammar_text, parse

BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
UNARY = {"-": operator.neg, "+": operator.pos}


def run(program: ParsedProgram, env: dict[str, float] | None = None) -> object:
    """A reference interpreter over Python floats: one loop, no recursion."""
    variables = dict(env or {})
    slots: list[object] = []
    for instr in program.instrs:
        args = [slots[i] for i in instr.args]
        if instr.kind == ir.CONST:
            value = instr.value
        elif instr.kind == ir.NAME:
            value = variables[instr.name]
        elif instr.kind == ir.UNARY:
            value = UNARY[instr.op](*args)
        elif instr.kind == ir.BINARY:
            value = BINARY[instr.op](*args)
        elif instr.kind == ir.STORE:
            value = variables[instr.name] = args[0]
        elif instr.kind == ir.CALL and instr.name == "max":
            value = max(args)
        else:
            raise NotImplementedError(instr.kind)
        slots.append(value)
    return slots[program.output]


PRECEDENCE = [
    "-2**2",
    "2**-1",
    "2**3**2",
    "-2**-2",
    "2**-2**-1",
    "1-2-3",
    "8/4/2",
    "10/2*5",
    "2*3+4",
    "2+3*4",
    "(1+2)*3",
    "1-(2-3)",
    "-3--3",
    "+1-+2",
    "--2",
    "4*-+-2",
    "2*-3",
    "2*3**2",
    "(2*3)**2",
    "-(2)**2",
    "(-2)**2",
    "7-3*2**2/4",
    "1.5e1-.5",
    "1e-3*1e3",
    "3.+.25",
    "1<2",
    "2<1",
    "1+2<3*4",
    "3>=3",
    "2<=1+1",
    "2!=2.",
    "1==1.0",
    "-1>-2",
    "2**2>3",
]


@pytest.mark.parametrize("source", PRECEDENCE)
def test_precedence_and_associativity_match_python(source: str) -> None:
    expected = eval(source)  # noqa: S307 - fixed literal strings, test only
    assert run(parse(source)) == float(expected)


def _kinds(source: str) -> list[str]:
    return [instr.kind for instr in parse(source).instrs]


def test_instructions_read_only_earlier_slots_and_output_is_last_statement() -> None:
    program = parse("a = 1\nb = a * 2 + 3\n-b**2")
    for slot, instr in enumerate(program.instrs):
        assert all(0 <= operand < slot for operand in operand_slots(instr))
    assert program.output == len(program.instrs) - 1
    assert run(program) == -25.0


def test_numbers_are_floats_and_booleans_constants() -> None:
    program = parse("[1, 1.5, 1e-3, .5, 2., true, false, True, False]")
    values = [instr.value for instr in program.instrs if instr.kind == ir.CONST]
    assert values == [1.0, 1.5, 1e-3, 0.5, 2.0, True, False, True, False]
    assert all(type(v) is float for v in values[:5]) and all(type(v) is bool for v in values[5:])


def test_constants_pi_e_inf_are_names_for_the_runtime() -> None:
    assert [i.name for i in parse("pi + e * inf").instrs if i.kind == ir.NAME] == ["pi", "e", "inf"]


def test_call_with_positional_and_keyword_arguments() -> None:
    program = parse("sum(x, axis=0, keepdims=true)")
    call = program.instrs[-1]
    assert call.kind == ir.CALL and call.name == "sum"
    assert [program.instrs[i].name for i in call.args] == ["x"]
    assert [(k, program.instrs[i].value) for k, i in call.kwargs] == [
        ("axis", 0.0),
        ("keepdims", True),
    ]
    assert (call.line, call.column, call.end_column) == (1, 1, 4)
    assert parse("f()").instrs[-1].args == () and parse("f(a, b,)").instrs[-1].args == (0, 1)


def test_tensor_literal_elements_are_expressions() -> None:
    program = parse("[x[0]**2 + 3*x[1], x[1]**2 + 2*x[0]]")
    literal = program.instrs[-1]
    assert literal.kind == ir.LIST and len(literal.args) == 2
    for element in literal.args:
        assert program.instrs[element].kind == ir.BINARY and program.instrs[element].op == "+"
    nested = parse("[[1, 2], [3, 4],]")
    assert [nested.instrs[i].kind for i in nested.instrs[-1].args] == [ir.LIST, ir.LIST]
    assert parse("[]").instrs[-1].args == ()


def _index_items(source: str) -> tuple:
    program = parse(source)
    instr = program.instrs[-1]
    assert instr.kind in (ir.INDEX, ir.STORE_INDEX)

    def value(slot: int | None) -> object:
        return None if slot is None else run_slot(program, slot)

    items = []
    for item in instr.items:
        if isinstance(item, Slice):
            items.append(slice(value(item.start), value(item.stop), value(item.step)))
        else:
            items.append(item if item is None or item is Ellipsis else value(item))
    return tuple(items)


def run_slot(program: ParsedProgram, slot: int) -> object:
    return run(ParsedProgram(program.instrs[: slot + 1], slot, program.source, ()))


@pytest.mark.parametrize(
    ("source", "items"),
    [
        ("x[0]", (0.0,)),
        ("x[-1]", (-1.0,)),
        ("x[:, 1]", (slice(None), 1.0)),
        ("x[1:3]", (slice(1.0, 3.0),)),
        ("x[::2]", (slice(None, None, 2.0),)),
        ("x[1:2:3]", (slice(1.0, 2.0, 3.0),)),
        ("x[:]", (slice(None),)),
        ("x[::-1, :2,]", (slice(None, None, -1.0), slice(None, 2.0))),
        ("x[..., 0]", (Ellipsis, 0.0)),
        ("x[:, None]", (slice(None), None)),
        ("y[0, 1] = 5", (0.0, 1.0)),
    ],
)
def test_index_and_slice_forms(source: str, items: tuple) -> None:
    assert _index_items(source) == items


def test_indexing_chains_and_transpose() -> None:
    assert _kinds("x[1][2]") == [ir.CONST, ir.NAME, ir.INDEX, ir.CONST, ir.INDEX]
    assert _kinds("x.T") == [ir.NAME, ir.TRANSPOSE]
    assert _kinds("(a @ b).T[0]") == [ir.NAME, ir.NAME, ir.BINARY, ir.TRANSPOSE, ir.CONST, ir.INDEX]
    assert _kinds("f(x)[0].T") == [ir.NAME, ir.CALL, ir.CONST, ir.INDEX, ir.TRANSPOSE]
    transpose = parse("w . T").instrs[-1]
    assert (transpose.kind, transpose.column) == (ir.TRANSPOSE, 3)


def test_matmul_has_multiplication_precedence_and_positions_point_at_operators() -> None:
    program = parse("a + b @ c * d")
    top = program.instrs[-1]
    assert (top.op, top.column) == ("+", 3)
    mul = program.instrs[top.args[1]]
    assert (mul.op, mul.column, program.instrs[mul.args[0]].op) == ("*", 11, "@")
    power = parse("x ** 2").instrs[-1]
    assert (power.op, power.column, power.end_column) == ("**", 3, 5)


def test_statements_separators_comments_and_blank_lines() -> None:
    source = "# weights\n\nx = [1., 2.]  # leaf\ny = 3;z = x*y;\n\n  z ;\n\n"
    program = parse(source)
    assert [(s.target, s.line, s.column) for s in program.statements] == [
        ("x", 3, 1),
        ("y", 4, 1),
        ("z", 4, 7),
        (None, 6, 3),
    ]
    assert program.output == program.statements[-1].slot == len(program.instrs) - 1
    assert program.source == source and isinstance(program.instrs, tuple)
    last = parse("a = 1; b = a").instrs
    assert last[-1].kind == ir.STORE and last[-1].name == "b"


def test_indexed_assignment() -> None:
    program = parse("y = zeros(2, 2)\ny[0, 1] = x[0]**2\ny")
    store = program.instrs[program.statements[1].slot]
    assert (store.kind, store.name, store.line, store.column) == (ir.STORE_INDEX, "y", 2, 1)
    assert program.instrs[store.args[0]].op == "**"
    assert program.statements[1].target == "y"


def test_newlines_inside_brackets_continue_the_line() -> None:
    program = parse("loss = sum(\n    (w*x + b - y)**2,  # squared error\n    axis=0,\n)\nloss")
    assert [s.target for s in program.statements] == ["loss", None]
    assert _kinds("[1,\n 2\n]") == [ir.CONST, ir.CONST, ir.LIST]
    assert run(parse("a = (1 +\r\n 2)\r\na * 2")) == 6.0


def test_ir_is_immutable() -> None:
    program = parse("1")
    with pytest.raises(AttributeError):
        program.output = 3  # type: ignore[misc]
    assert operand_slots(Instr(ir.INDEX, 1, 1, 2, args=(0,), items=(1, Slice(2, None, 3)))) == (
        0,
        1,
        2,
        3,
    )


def test_grammar_file_is_the_repository_copy_and_conflict_free() -> None:
    from lark import Lark
    from lark.exceptions import LexError

    repo_grammar = Path(__file__).resolve().parents[1] / "grammar" / "agrad.lark"
    assert grammar_text() == repo_grammar.read_text(encoding="utf-8")
    # strict=True fails on any shift/reduce conflict before it needs interegular
    # (not a dependency) for its regex-collision check.
    try:
        Lark(grammar_text(), parser="lalr", strict=True)
    except LexError as exc:
        assert "interegular" in str(exc)


# ---- scale: the inline transformer never recurses, and time grows linearly


def _timed_parse(source: str) -> tuple[ParsedProgram, float]:
    start = time.perf_counter()
    program = parse(source)
    return program, time.perf_counter() - start


def test_flat_sum_of_100000_terms_in_linear_time() -> None:
    parse("1")  # build the parser outside the timing
    small, small_time = _timed_parse("+".join(["1"] * 10_000))
    large, large_time = _timed_parse("+".join(["1"] * 100_000))
    assert len(small.instrs) == 19_999 and len(large.instrs) == 199_999
    assert run(large) == 100_000.0
    assert large_time < 30 * small_time  # 10x the input; quadratic would be ~100x


def test_parentheses_10000_deep_do_not_recurse() -> None:
    program = parse(
        "(" * 10_000 + "x" + ")" * 10_000 + " + [" * 1 + "[" * 5_000 + "1" + "]" * 5_001
    )
    assert len(program.instrs) == 5_004
    assert run(parse("-" * 10_000 + "2")) == 2.0
    assert len(parse("2" + "**1" * 10_000).instrs) == 20_001


# ---- property: random arithmetic agrees with Python's own parser


_NUMBERS = st.sampled_from(["2.0", "3.", ".5", "1.5", "1e1", "0.25", "7.0"])


def _arithmetic(depth: int = 3) -> st.SearchStrategy[str]:
    atom = _NUMBERS
    if depth:
        atom = st.one_of(_NUMBERS, _arithmetic(depth - 1).map(lambda inner: f"({inner})"))
    unary = st.tuples(st.sampled_from(["", "-", "+", "--", "-+"]), atom).map("".join)
    operators = st.sampled_from(["+", "-", "*", "/", "**"])
    tail = st.lists(st.tuples(operators, unary).map("".join), max_size=4).map("".join)
    expr = st.tuples(unary, tail).map("".join)
    if depth == 3:
        comparison = st.sampled_from(["", "<", "<=", ">", ">=", "==", "!="])
        expr = st.tuples(expr, comparison, expr).map(lambda t: t[0] if not t[1] else "".join(t))
    return expr


@settings(max_examples=300, deadline=None)
@given(_arithmetic())
def test_random_arithmetic_matches_python(source: str) -> None:
    try:
        expected: object = eval(source)  # noqa: S307 - generated from digits and operators
    except (ZeroDivisionError, OverflowError, TypeError) as exc:  # TypeError: complex < float
        with pytest.raises(type(exc)):
            run(parse(source))
        return
    actual = run(parse(source))
    assert actual == expected or (actual != actual and expected != expected)  # NaN == NaN
