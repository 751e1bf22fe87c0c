"""Rendering of the computation graph: a rich tree, Graphviz DOT, Mermaid, JSON."""

from __future__ import annotations

from typing import Any

from .common import console, emit_json

TREE_LIMIT = 300  # nodes drawn in the terminal tree before it is cut short


def _label(node: Any) -> str:
    name = f"{node.variable} = " if node.variable and node.kind == "op" else ""
    head = node.variable if node.kind != "op" and node.variable else node.label
    if node.kind == "op":
        head = f"{name}{node.label}"
    elif node.kind == "leaf":
        head = f"{node.variable or 'leaf'} (AccumulateGrad)"
    else:
        head = f"{node.variable or 'constant'} (constant)"
    return f"{head} {list(node.shape) if node.shape else 'scalar'}"


def dot(graph: Any) -> str:
    lines = ["digraph agrad {", "  rankdir=BT;", '  node [fontname="Helvetica"];']
    style = {
        "op": 'shape=box, style="rounded,filled", fillcolor="#dde8ff"',
        "leaf": 'shape=ellipse, style=filled, fillcolor="#d8f5d0"',
        "constant": "shape=ellipse, style=dashed",
    }
    for n in graph.nodes:
        extra = ", penwidth=2" if n.output else ""
        if n.kind == "op":
            text = f"{n.variable + ' = ' if n.variable else ''}{n.label}\\n{_shape(n)}"
        elif n.kind == "leaf":
            text = f"{n.variable or 'leaf'}\\nAccumulateGrad\\n{_shape(n)}"
        else:
            text = f"{n.variable or 'constant'}\\n{_shape(n)}"
        lines.append(f'  {n.id} [label="{_escape(text)}", {style[n.kind]}{extra}];')
    for source, target in graph.edges:
        lines.append(f"  {source} -> {target};")
    lines.append("}")
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
    return "\n".join(lines) + "\n"


def as_json(graph: Any) -> dict[str, Any]:
    return {
        "nodes": [
            {
                "id": n.id,
                "label": n.label,
                "kind": n.kind,
                "shape": list(n.shape),
                "requires_grad": n.requires_grad,
                "is_leaf": n.is_leaf,
                "variable": n.variable,
                "output": n.output,
            }
            for n in graph.nodes
        ],
        "edges": [{"source": s, "target": t} for s, t in graph.edges],
    }


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
