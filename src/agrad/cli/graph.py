"""`agrad graph`: the computation graph the engine recorded, drawn or exported."""

from __future__ import annotations

import shutil
from enum import Enum
from pathlib import Path
from typing import Annotated

from ..errors import AgradValueError
from .app import Dtype, DtypeOpt, FileOpt, LimitOpt, ProgramArg, SeedOpt, SetOpt, WrtOpt
from .app import _session as make_session
from .options import Option, command

RENDER_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}


class GraphFormat(str, Enum):
    tree = "tree"
    dot = "dot"
    mermaid = "mermaid"
    json = "json"


@command("graph")
def graph_command(
    program: ProgramArg = None,
    file: FileOpt = None,
    set_: SetOpt = None,
    wrt: WrtOpt = None,
    format_: Annotated[
        GraphFormat,
        Option(
            "--format",
            help="tree (the terminal), dot (Graphviz), mermaid (Markdown, GitHub) or json.",
        ),
    ] = GraphFormat.tree,
    render: Annotated[
        str | None,
        Option(
            "--render",
            metavar="OUT.svg|OUT.png",
            help="Draw the graph to a file with Graphviz's dot.",
        ),
    ] = None,
    constants: Annotated[
        bool,
        Option("--constants/--no-constants", help="Show inputs that do not require grad."),
    ] = True,
    values: Annotated[
        bool,
        Option(
            "--values",
            help="Show each node's value and the output's gradient with respect to it.",
        ),
    ] = False,
    dtype: DtypeOpt = Dtype.float64,
    seed: SeedOpt = 0,
    max_elements: LimitOpt = 10**8,
) -> None:
    """Show the computation graph: every node's grad_fn, shape and variable name, and an
    AccumulateGrad for each leaf that requires grad (with --values, each node's value and
    gradient). Pictures (dot, --render) carry a legend.

    Example:

    \b
        agrad graph 'sum((w*x+b-y)**2)' --wrt w,b --set 'x=[1,2]' --set 'y=[5,7]' \\
            --set 'w=1' --set 'b=0' --format mermaid

    prints a Mermaid "flowchart" (it renders on GitHub) from "SumBackward0" down to
    "MulBackward0", with "w (AccumulateGrad)" and "b (AccumulateGrad)" for the leaves.
    """
    from ..engine.graph import describe
    from . import render as out

    session = make_session(program, file, set_, wrt, dtype, seed, max_elements)
    run = session.run()
    graph = describe(run.output, run.env, constants=constants, values=values)
    if render is not None:
        _render(out.graph_dot(graph), render)
        return
    out.graph(graph, format_.value)


def _render(source: str, target: str) -> None:
    import subprocess  # (here: every command line imports this module, few draw pictures)

    kind = RENDER_FORMATS.get(Path(target).suffix.lower())
    if kind is None:
        raise AgradValueError(f"--render {target!r}: name an .svg, .png or .pdf file")
    dot = shutil.which("dot")
    if dot is None:
        raise AgradValueError(
            "--render needs Graphviz's 'dot' program, which is not installed: install the "
            "'graphviz' package (apt-get install graphviz, brew install graphviz), or use "
            "--format dot and render it elsewhere"
        )
    result = subprocess.run(
        [dot, f"-T{kind}", "-o", target], input=source, text=True, capture_output=True, check=False
    )
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["unknown error"])[0]
        raise AgradValueError(f"--render {target!r}: dot failed: {reason}")
