"""What the commands print for scripts: one CSV convention (column names, index tuples) in
every command, empty derivatives, non-finite numbers in JSON (strings, or null), and the
output budget. Stdout, stderr and the exit status asserted separately."""

from __future__ import annotations

import json

import pytest
from test_cli_boundary import bad, ok_json

# ---- CSV: one set of column names, one index style --------------------------------------


def csv_rows(result) -> list[dict]:
    import csv
    import io

    assert result.code == 0, result.err
    assert result.err == ""
    return list(csv.DictReader(io.StringIO(result.out)))


def test_csv_columns_and_index_style_agree_across_commands(cli):
    import ast

    args = ["sum(A**3) + A[1, 0]*x[0]", "--set", "A=[[1,2],[3,4]]", "--set", "x=[5]"]
    args += ["--wrt", "A,x", "--format", "csv"]
    tables = {c: csv_rows(cli([c, *args])) for c in ("eval", "jacobian", "hessian", "check")}
    for command, rows in tables.items():
        assert list(rows[0])[0] == "variable", command
        for row in rows:
            for column in ("index", "output_index", "input_index"):
                if column in row:  # every index is a Python tuple: (), (1,), (0, 1)
                    value = ast.literal_eval(row[column])
                    assert isinstance(value, tuple) and row[column] == str(value), row
    assert {c: list(tables[c][0])[:3] for c in ("jacobian", "hessian", "check")} == {
        c: ["variable", "output_index", "input_index"] for c in ("jacobian", "hessian", "check")
    }
    # the same element has the same label: d/dA[1,0] = 3 A[1,0]^2 + x[0] = 27 + 5
    grads = {
        (r["variable"], r["index"]): float(r["gradient"])
        for r in tables["eval"]
        if r["variable"] != "output"  # the output row has a value, no gradient
    }
    jac = {(r["variable"], r["input_index"]): float(r["value"]) for r in tables["jacobian"]}
    assert grads[("A", "(1, 0)")] == jac[("A", "(1, 0)")] == 32
    assert grads[("x", "(0,)")] == jac[("x", "(0,)")] == 3
    hess = {(r["variable"], r["output_index"], r["input_index"]): float(r["value"])
            for r in tables["hessian"]}  # fmt: skip
    assert hess[("A", "(1, 0)", "(1, 0)")] == 6 * 3  # d2/dA10^2 = 6 A10
    assert hess[("A,x", "(1, 0)", "(0,)")] == 1


@pytest.mark.parametrize("shape", ["0", "0, 3"])
@pytest.mark.parametrize("command", ["jacobian", "hessian"])
def test_empty_jacobian_and_hessian(cli, command, shape):
    args = [command, "sum(x)", "--set", f"x=zeros({shape})", "--wrt", "x"]
    header = "variable,output_index,input_index,value\n"
    result = cli([*args, "--format", "csv"])
    assert result.code == 0 and result.err == "" and result.out == header
    table = cli(args)
    assert table.code == 0 and table.err == "" and "no elements" in table.out
    assert ok_json(cli([*args, "--format", "json"]))[command]["x"] == []  # JSON has no (0, 3)


# ---- non-finite numbers in JSON -----------------------------------------------------------


@pytest.mark.parametrize("command", ["eval", "jacobian", "check", "fit"])
def test_nonfinite_numbers_are_strings_or_null(cli, command):
    argv = [command, "sum(log(x))", "--set", "x=[0, 1]", "--wrt", "x", "--format", "json"]
    if command == "fit":
        argv += ["--steps", "0"]
    strings, nulls = cli(argv), cli([*argv, "--nonfinite", "null"])
    assert strings.err == nulls.err == ""
    assert strings.code == nulls.code
    assert any(f'"{v}"' in strings.out for v in ("nan", "inf", "-inf")), strings.out
    assert not any(f'"{v}"' in nulls.out for v in ("nan", "inf", "-inf")), nulls.out
    assert "null" in nulls.out
    assert json.loads(nulls.out) is not None  # valid JSON either way
    if command == "eval":  # log(0) = -inf, d log(x)/dx at 0 = inf
        assert json.loads(strings.out)["value"] == "-inf"
        assert json.loads(strings.out)["grads"]["x"] == ["inf", 1]
        assert json.loads(nulls.out)["grads"]["x"] == [None, 1]


def test_output_budget(cli):
    argv = ["jacobian", "x*2", "--set", "x=arange(2000)", "--wrt", "x", "--format", "json"]
    refused = cli([*argv, "--max-output", "1000000"])
    bad(refused, "4,002,000 numbers", "--max-output")  # 2000 x 2000 + the value
    assert refused.seconds < 5  # refused before the output is built
    assert cli([*argv, "--max-output", "5000000"]).code == 0
    assert cli(argv[:-2]).code == 0  # a table summarises: no budget
