"""`agrad graph` as a student reads it (issue 13): a legend in every picture, values and
gradients on the nodes (--values), and one way of writing shapes in tree, dot and tables.
Expected numbers are the tutorial's hand derivation: w·x = [1, 2], w·x + b − y = [−4, −5],
its square [16, 25], sum 41; gradients 1, [1, 1], 2·[−4, −5] = [−8, −10] down to the
leaves, w ← Σ[−8, −10]·[1, 2] = −28, b ← −18."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

TUTORIAL = ["sum((w*x+b-y)**2)", "--wrt", "w,b", "--set", "x=[1,2]", "--set", "y=[5,7]",
            "--set", "w=1", "--set", "b=0"]  # fmt: skip


def _graph(cli, *extra):
    result = cli(["graph", *TUTORIAL, *extra])
    assert result.code == 0, result.err
    return result


def test_values_on_the_tree(cli):
    result = _graph(cli, "--values")
    assert result.err == ""
    out = result.out
    for line in [
        "SumBackward0 shape (), value 41, grad 1",
        "PowBackward0 shape (2,), value [16, 25], grad [1, 1]",
        "SubBackward0 shape (2,), value [-4, -5], grad [-8, -10]",
        "MulBackward0 shape (2,), value [1, 2], grad [-8, -10]",
        "w (AccumulateGrad) shape (), value 1, grad -28",
        "b (AccumulateGrad) shape (), value 0, grad -18",
        "x (constant) shape (2,), value [1, 2]",
    ]:
        assert line in out, out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_values_in_json_and_dot(cli):
    nodes = json.loads(_graph(cli, "--values", "--format", "json").out)["nodes"]
    by = {n["variable"] or n["label"]: n for n in nodes}
    assert (by["w"]["value"], by["w"]["grad"]) == (1, -28)
    assert (by["SubBackward0"]["value"], by["SubBackward0"]["grad"]) == ([-4, -5], [-8, -10])
    assert by["y"]["grad"] is None  # a constant gets no gradient
    dot = _graph(cli, "--values", "--format", "dot").out
    assert 'label="w\\nAccumulateGrad\\nshape ()\\nvalue 1\\ngrad -28"' in dot


def test_without_values_the_nodes_carry_none(cli):
    nodes = json.loads(_graph(cli, "--format", "json").out)["nodes"]
    assert all("value" not in n and "grad" not in n for n in nodes)


def test_values_of_a_non_scalar_output_say_why_there_are_no_gradients(cli):
    result = cli(["graph", "w*x", "--wrt", "w", "--set", "x=[1,2]", "--set", "w=3", "--values"])
    assert result.code == 0
    assert "MulBackward0 shape (2,), value [3, 6]" in result.out and "grad" not in result.out
    assert result.err == "note: gradients need a single-number output: the nodes show values only\n"


def test_large_values_are_summarised_on_one_line(cli):
    result = cli(["graph", "sum(x * x)", "--wrt", "x", "--set", "x=arange(100)", "--values"])
    assert result.code == 0
    out = " ".join(result.out.split())  # (rich wraps long tree lines)
    assert "MulBackward0 shape (100,), value 100 values in [0, 9801]" in out  # x², x = 0..99
    assert (
        "x (AccumulateGrad) shape (100,), value 100 values in [0, 99], grad 100 values in [0, 198]"
        in out
    )


def test_dot_has_a_legend(cli):
    dot = _graph(cli, "--format", "dot").out
    assert "subgraph cluster_legend" in dot
    for words in ("an operation", "a leaf that requires grad", "a constant (dashed)",
                  "the output (thick border)"):  # fmt: skip
        assert words in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_rendered_picture_shows_the_legend(cli, tmp_path):
    out = tmp_path / "graph.svg"
    _graph(cli, "--values", "--render", str(out))
    svg = out.read_text(encoding="utf-8")
    assert "legend" in svg and "a constant (dashed): it gets no gradient" in svg


def test_one_way_of_writing_shapes(cli):
    """shape (2,) and shape () everywhere: the tree, DOT, Mermaid and eval's tables."""
    outputs = [_graph(cli).out, _graph(cli, "--format", "dot").out,
               _graph(cli, "--format", "mermaid").out, cli(["eval", *TUTORIAL]).out]  # fmt: skip
    for text in outputs:
        assert re.search(r"shape \(\)", text), text
        assert "scalar" not in text and not re.search(r"\[2\](?!,)", text.replace("[2]]", ""))
    for text in outputs[:3]:
        assert "shape (2,)" in text


def test_graphviz_accepts_the_values_and_the_legend(cli):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    dot = _graph(cli, "--values", "--format", "dot").out
    proc = subprocess.run([shutil.which("dot"), "-Tsvg"], input=dot, text=True,
                          capture_output=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
