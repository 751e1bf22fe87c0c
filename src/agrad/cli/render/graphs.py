"""Rendering of the computation graph: a rich tree, Graphviz DOT, Mermaid, JSON."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .common import console, emit_json, number, to_json, value_text

TREE_LIMIT = 300  # nodes drawn in the terminal tree before it is cut short
PRECISION = 4


def _compact(array: Any) -> str:
    """A value for a node's label: the tensor on one line, or its range when large."""
    a = np.asarray(array, dtype=np.float64)
    if a.size <= 6:
        return value_text(a, PRECISION).replace("\n", "")
    finite = a[np.isfinite(a)]
    if not finite.size:
        return f"{a.size} values, none finite"
    low, high = number(finite.min(), PRECISION), number(finite.max(), PRECISION)
    return f"{a.size} values in [{low}, {high}]"


def _numbers(node: Any) -> list[str]:
    """'value ...' and 'grad ...' when the graph carries them (--values)."""
    parts = []
    if node.value is not None:
        parts.append(f"value {_compact(node.value)}")
    if node.grad is not None:
        parts.append(f"grad {_compact(node.grad)}")
    return parts


def _label(node: Any) -> str:
    name = f"{node.variable} = " if node.variable and node.kind == "op" else ""
    head = node.variable if node.kind != "op" and node.variable else node.label
    if node.kind == "op":
        head = f"{name}{node.label}"
    elif node.kind == "leaf":
        head = f"{node.variable or 'leaf'} (AccumulateGrad)"
    else:
        head = f"{node.variable or 'constant'} (constant)"
    return ", ".join([f"{head} {_shape(node)}", *_numbers(node)])


STYLE = {
    "op": 'shape=box, style="rounded,filled", fillcolor="#dde8ff"',
    "leaf": 'shape=ellipse, style=filled, fillcolor="#d8f5d0"',
    "constant": "shape=ellipse, style=dashed",
}
# What the shapes and colours mean, drawn beside the graph in every picture.
LEGEND = (
    ("legend_op", "an operation: its grad_fn (the backward function)", STYLE["op"]),
    ("legend_leaf", "a leaf that requires grad: AccumulateGrad stores its .grad", STYLE["leaf"]),
    ("legend_constant", "a constant (dashed): it gets no gradient", STYLE["constant"]),
    ("legend_output", "the output (thick border); arrows: data flow", f"{STYLE['op']}, penwidth=2"),
)


def dot(graph: Any) -> str:
    lines = ["digraph agrad {", "  rankdir=BT;", '  node [fontname="Helvetica"];']
    style = STYLE
    for n in graph.nodes:
        extra = ", penwidth=2" if n.output else ""
        if n.kind == "op":
            text = f"{n.variable + ' = ' if n.variable else ''}{n.label}\\n{_shape(n)}"
        elif n.kind == "leaf":
            text = f"{n.variable or 'leaf'}\\nAccumulateGrad\\n{_shape(n)}"
        else:
            text = f"{n.variable or 'constant'}\\n{_shape(n)}"
        text = "\\n".join([text, *_numbers(n)])
        lines.append(f'  {n.id} [label="{_escape(text)}", {style[n.kind]}{extra}];')
    for source, target in graph.edges:
        lines.append(f"  {source} -> {target};")
    lines += [
        "  subgraph cluster_legend {",
        '    label="legend"; style=dashed; fontname="Helvetica";',
    ]
    for key, text, look in LEGEND:
        lines.append(f'    {key} [label="{_escape(text)}", {look}, fontsize=10];')
    chain = " -> ".join(key for key, _, _ in reversed(LEGEND))  # (bottom to top: op first)
    lines.append(f"    {chain} [style=invis];")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace('"', '\\"')


def _shape(node: Any) -> str:
    return f"shape {tuple(node.shape)}"


def mermaid(graph: Any) -> str:
    lines = ["flowchart BT"]
    for n in graph.nodes:
        text = _label(n).replace('"', "'")
        opener, closer = {"op": ("[", "]"), "leaf": ("([", "])"), "constant": ("[/", "/]")}[n.kind]
        lines.append(f'    {n.id}{opener}"{text}"{closer}')
    for source, target in graph.edges:
        lines.append(f"    {source} --> {target}")
    lines += [
        "    subgraph legend",
        '        legend_op["an operation: its grad_fn"]',
        '        legend_leaf(["a leaf that requires grad: AccumulateGrad"])',
        '        legend_constant[/"a constant: it gets no gradient"/]',
        "    end",
    ]
    return "\n".join(lines) + "\n"


def as_json(graph: Any) -> dict[str, Any]:
    nodes = []
    for n in graph.nodes:
        node = {"id": n.id, "label": n.label, "kind": n.kind, "shape": list(n.shape),
                "requires_grad": n.requires_grad, "is_leaf": n.is_leaf, "variable": n.variable,
                "output": n.output}  # fmt: skip
        if n.value is not None:
            node["value"] = to_json(n.value)
            node["grad"] = None if n.grad is None else to_json(n.grad)
        nodes.append(node)
    payload = {"nodes": nodes, "edges": [{"source": s, "target": t} for s, t in graph.edges]}
    if graph.note:
        payload["note"] = graph.note
    return payload


def tree(graph: Any) -> None:
    """The graph from the output down to its leaves, as PyTorch's next_functions walk it.
    A node reached twice is drawn once and then referred to."""
    from rich.tree import Tree

    inputs: dict[str, list[str]] = {}
    for source, target in graph.edges:
        inputs.setdefault(target, []).append(source)
    by_id = {n.id: n for n in graph.nodes}
    root_node = next(n for n in graph.nodes if n.output)
    root = Tree(_label(root_node))
    out = console()
    max_depth = max(4, (out.width - 40) // 4)  # each level indents 4 columns
    seen, drawn, cut = {root_node.id}, 1, False
    stack = [(root, root_node.id, 0)]
    while stack:  # iterative: graphs can be deep
        branch, node_id, depth = stack.pop()
        children = inputs.get(node_id, [])
        if children and (drawn >= TREE_LIMIT or depth >= max_depth):
            cut = True
            continue
        expand = []
        for child_id in children:
            child = by_id[child_id]
            if child_id in seen:
                branch.add(f"{_label(child)} (shared: drawn in full once in this tree)")
                continue
            seen.add(child_id)
            drawn += 1
            expand.append((branch.add(_label(child)), child_id, depth + 1))
        stack.extend(reversed(expand))
    if cut:
        root.add(
            f"… {len(graph.nodes) - drawn} more nodes (too many or too deep to draw "
            "here): use --format json, dot or mermaid"
        )
    out.print(root)


def graph(graph_data: Any, fmt: str) -> None:
    if fmt == "json":
        emit_json(as_json(graph_data))
    elif fmt == "dot":
        console().file.write(dot(graph_data))
    elif fmt == "mermaid":
        console().file.write(mermaid(graph_data))
    else:
        tree(graph_data)
    if graph_data.note and fmt != "json":  # (JSON carries it)
        sys.stderr.write(f"note: {graph_data.note}\n")
