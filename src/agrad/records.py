"""`record`: dataclasses' behaviour for the classes every command imports, without its cost.

`dataclasses.dataclass` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and,
frozen, ``__setattr__``/``__hash__``) as source text and compiles it with ``exec`` when
the module is imported: 1-4 ms a class on this project's machines, about 15 ms of every
command's start-up for the twelve records on its import path (the op table's `Op`, the
session's results, ...). `record` makes the same methods as closures over the field list,
so a class costs microseconds to define; an instance is built with two dict updates.

What it keeps of dataclasses: fields from the class's own annotations, in order; defaults,
``field(default_factory=...)`` and ``field(init=False, default=...)``; ``__post_init__``;
``frozen`` (assignment raises; ``object.__setattr__`` still works, as in a dataclass's
``__post_init__``); equality and repr over the fields; hashing as dataclasses do it
(frozen: by the fields; else unhashable); `replace`. What it does not do: slots,
inheritance of fields, ``kw_only``, ``InitVar``, ordering. Modules off the start-up path
use dataclasses as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

try:
    from typing import dataclass_transform
except ImportError:  # Python 3.10: only type checkers read it

    def dataclass_transform(**kwargs: Any) -> Callable[[Any], Any]:  # type: ignore[no-redef]
        return lambda decorator: decorator


T = TypeVar("T")
_MISSING = object()


class _Field:
    __slots__ = ("default", "default_factory", "init")

    def __init__(self, default: Any, default_factory: Any, init: bool) -> None:
        self.default, self.default_factory, self.init = default, default_factory, init


def field(
    *, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, init: bool = True
) -> Any:
    """As `dataclasses.field`: a per-instance default, or a field ``__init__`` does not take."""
    return _Field(default, default_factory, init)


class FrozenError(AttributeError):
    """Assignment to a field of a frozen record (as `dataclasses.FrozenInstanceError`)."""


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, *, frozen: bool = False) -> Any:
    """Make ``cls`` a record: ``@record`` or ``@record(frozen=True)``."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def replace(obj: T, **changes: Any) -> T:
    """A copy of ``obj`` with some fields changed, built through ``__init__`` (as
    `dataclasses.replace`, so derived fields are derived again)."""
    values = {name: getattr(obj, name) for name in type(obj).__record_init__}
    values.update(changes)
    return type(obj)(**values)


def as_dict(obj: Any) -> dict[str, Any]:
    """The fields and their values (shallow, unlike `dataclasses.asdict`)."""
    return {name: getattr(obj, name) for name in type(obj).__record_fields__}


def _make(cls: type[T], frozen: bool) -> type[T]:
    own = cls.__dict__.get("__annotations__", {})
    names = tuple(
        n for n, a in own.items() if not str(a).startswith(("ClassVar", "typing.ClassVar"))
    )
    constants: dict[str, Any] = {}  # defaults shared by every instance (immutable ones)
    factories: list[tuple[str, Callable[[], Any]]] = []
    required: list[str] = []
    init_names: list[str] = []
    for name in names:
        spec = cls.__dict__.get(name, _MISSING)
        if isinstance(spec, _Field):
            if spec.default_factory is not None:
                factories.append((name, spec.default_factory))
            elif spec.default is not _MISSING:
                constants[name] = spec.default
            elif spec.init:
                required.append(name)
            if spec.init:
                init_names.append(name)
            delattr(cls, name)  # the marker must not shadow the instance's value
        else:
            if spec is _MISSING:
                if required != init_names:  # as a dataclass: no required after a default
                    raise TypeError(f"{cls.__name__}: non-default field {name!r} follows a default")
                required.append(name)
            else:
                constants[name] = spec
                delattr(cls, name)
            init_names.append(name)
    settable = frozenset(init_names)
    post_init = getattr(cls, "__post_init__", None)
    n_positional = len(init_names)
    positional = tuple(init_names)
    title = cls.__name__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        values = self.__dict__
        values.update(constants)
        for name, make in factories:
            values[name] = make()
        if args:
            if len(args) > n_positional:
                raise TypeError(
                    f"{title}() takes {n_positional} positional arguments, {len(args)} given"
                )
            given = dict(zip(positional, args, strict=False))  # (fewer args: the rest by name)
            if kwargs and not given.keys().isdisjoint(kwargs):
                twice = sorted(given.keys() & kwargs.keys())[0]
                raise TypeError(f"{title}() got multiple values for argument {twice!r}")
            values.update(given)
        if kwargs:
            unknown = kwargs.keys() - settable
            if unknown:
                raise TypeError(f"{title}() got an unexpected keyword argument {min(unknown)!r}")
            values.update(kwargs)
        for name in required:
            if name not in values:
                raise TypeError(f"{title}() missing required argument: {name!r}")
        if post_init is not None:
            post_init(self)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    cls.__init__ = __init__  # type: ignore[misc]
    cls.__repr__ = __repr__  # type: ignore[method-assign]
    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__record_fields__ = names  # type: ignore[attr-defined]
    cls.__record_init__ = positional  # type: ignore[attr-defined]
    cls.__match_args__ = positional  # type: ignore[attr-defined]
    if frozen:

        def __setattr__(self: Any, name: str, value: Any) -> None:
            raise FrozenError(f"cannot assign to field {name!r} of a frozen {title}")

        def __hash__(self: Any) -> int:
            return hash(tuple(getattr(self, n) for n in names))

        def __delattr__(self: Any, name: str) -> None:
            raise FrozenError(f"cannot delete field {name!r} of a frozen {title}")

        cls.__setattr__ = __setattr__  # type: ignore[method-assign]
        cls.__delattr__ = __delattr__  # type: ignore[method-assign]
        cls.__hash__ = __hash__  # type: ignore[method-assign]
    else:
        cls.__hash__ = None  # type: ignore[assignment]
    return cls
