"""`agrad functions`: the language's function table, with parameters."""

from __future__ import annotations

from .app import Format, FormatOpt
from .options import command


@command("functions")
def functions_command(format_: FormatOpt = Format.table) -> None:
    """List the functions the language provides, with their parameters.

    Example:

    \b
        agrad functions --format json

    prints one JSON object: "functions", each with its "signature" and "doc".
    """
    from ..lang.functions import TABLE
    from . import render

    render.functions(TABLE, format_.value)
