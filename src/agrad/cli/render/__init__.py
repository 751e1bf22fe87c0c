"""All of agrad's output, in one place: rich tables for people, JSON and CSV for scripts.

JSON carries full precision; non-finite numbers become the strings "nan", "inf"
and "-inf" so the output stays valid JSON. Tables show ``--precision``
significant digits and summarise tensors too large to show whole.

Each renderer loads with its module on first use (``render.evaluation`` imports
`render.values` only): a command imports the renderer it needs and no other.
"""

import importlib

# name -> (module, attribute): the public renderers. No module is named after a function
# in it (explanation.explain, graphs.graph): importing a submodule sets the package's
# attribute of its name, which would then hide the function.
_WHERE = {
    "check_json": ("check", "check_json"),
    "check_report": ("check", "check_report"),
    "console": ("common", "console"),
    "emit_json": ("common", "emit_json"),
    "number": ("common", "number"),
    "to_json": ("common", "to_json"),
    "explain": ("explanation", "explain"),
    "graph": ("graphs", "graph"),
    "graph_dot": ("graphs", "dot"),
    "suite_report": ("suite", "suite_report"),
    "evaluation": ("values", "evaluation"),
    "functions": ("values", "functions"),
    "hessian": ("values", "hessian"),
    "jacobian": ("values", "jacobian"),
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    if name in _WHERE:
        module, attribute = _WHERE[name]
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
