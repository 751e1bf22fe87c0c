"""The CLI's one definition: commands and their options, written without importing Typer.

A command is a plain function registered with `command`; each parameter is annotated
``Annotated[T, Option(...)]`` or ``Annotated[T, Argument(...)]``, where `Option` and
`Argument` take exactly what ``typer.Option`` and ``typer.Argument`` take and only keep
it. Typer's app is generated from these (`agrad.cli.app.typer_app`: the help, usage
errors and shell completion are Typer's); `agrad.cli.direct` reads the same
definitions to run the common command lines without importing Typer and Click, which
cost about a quarter of a small command's start-up.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin


class Param:
    """A ``typer.Option(*decls, **settings)`` (or ``typer.Argument``) still to be made.
    (A plain class: a dataclass costs a millisecond of every command's start-up.)"""

    __slots__ = ("kind", "decls", "settings")

    def __init__(self, kind: str, decls: tuple[str, ...], settings: dict[str, Any]) -> None:
        self.kind = kind  # "option" or "argument"
        self.decls = decls
        self.settings = settings

    def typer(self) -> Any:
        import typer

        make = typer.Option if self.kind == "option" else typer.Argument
        return make(*self.decls, **self.settings)


def Option(*decls: str, **settings: Any) -> Param:  # noqa: N802 - typer.Option's name
    return Param("option", decls, settings)


def Argument(**settings: Any) -> Param:  # noqa: N802 - typer.Argument's name
    return Param("argument", (), settings)


# name -> the command's function, in registration order (the order --help lists them in)
COMMANDS: dict[str, Callable[..., Any]] = {}


def command(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as ``agrad NAME``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        COMMANDS[name] = fn
        return fn

    return register


class Spec:
    """One parameter of a command: its name, type, default and `Param`."""

    __slots__ = ("name", "annotation", "default", "param")

    def __init__(self, name: str, annotation: Any, default: Any, param: Param) -> None:
        self.name = name
        self.annotation = annotation  # the type without the Annotated metadata
        self.default = default
        self.param = param


def specs(fn: Callable[..., Any]) -> list[Spec]:
    """The parameters of a registered command, as declared."""
    out = []
    for p in inspect.signature(fn, eval_str=True).parameters.values():
        if get_origin(p.annotation) is not Annotated:
            raise TypeError(f"{fn.__name__}: parameter {p.name!r} needs Option() or Argument()")
        annotation, *meta = get_args(p.annotation)
        (param,) = [m for m in meta if isinstance(m, Param)]
        out.append(Spec(p.name, annotation, p.default, param))
    return out


def typer_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``fn``'s signature with each `Param` made into Typer's own, for Typer to read."""
    signature = inspect.signature(fn, eval_str=True)
    by_name = {s.name: s for s in specs(fn)}
    return signature.replace(
        parameters=[
            p.replace(
                annotation=Annotated[by_name[p.name].annotation, by_name[p.name].param.typer()]
            )
            for p in signature.parameters.values()
        ]
    )
