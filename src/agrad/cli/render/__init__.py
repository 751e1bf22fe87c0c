"""All of agrad's output, in one place: rich tables for people, JSON and CSV for scripts.

JSON carries full precision; non-finite numbers become the strings "nan", "inf"
and "-inf" so the output stays valid JSON. Tables show ``--precision``
significant digits and summarise tensors too large to show whole.
"""

from .check import check_json, check_report
from .common import console, emit_json, number, to_json
from .explain import explain
from .graph import dot as graph_dot
from .graph import graph
from .suite import suite_report
from .values import evaluation, functions, hessian, jacobian

__all__ = [
    "check_json", "check_report", "console", "emit_json", "evaluation", "explain",
    "functions", "graph", "graph_dot", "hessian", "jacobian", "number", "suite_report",
    "to_json",
]  # fmt: skip
