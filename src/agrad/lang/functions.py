"""The language's function table: the only namespace a program's calls resolve in.

Every entry is a real Python function, and its signature is the one place its
parameters, defaults, keyword arguments, usage line and ``agrad functions`` row come
from: ``inspect.signature`` gives the names and defaults, the annotations the kind of
each argument (a tensor, a list of tensors, an int, a float, a bool, an axis, a shape),
which is how the language's values are converted before the call. The op table's
entries with a language face get their function generated from their NumPy forward's
signature; the few below are written by hand (``tensor``, ``concat``, the constructors).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..engine import functions as F
from ..engine.dtypes import get_default_dtype
from ..engine.kernels import Array, Axis, Sizes
from ..engine.limits import check_count
from ..engine.ops import TABLE as OPS
from ..engine.ops.core import ALONG_AXIS, REDUCTION, UNARY, Op
from ..engine.tensor import Tensor
from ..errors import AgradValueError
from ..records import record, replace


class LangList(list):
    """A bracket literal before it is needed: a list argument or a tensor literal."""


class Tensors(list):
    """The annotation of a parameter that takes a bracket list of tensors (``[a, b]``)."""


class Value:
    """The annotation of a parameter that takes any value as it is (tensor's data)."""


class Size(int):
    """The annotation of ``*size``: ``zeros(2, 3)`` or ``zeros([2, 3])``."""


class Operands(list):
    """The annotation of ``*operands``: any number of tensors (einsum's)."""


def to_tensor(value: Any, where: str = "", keep_bool: bool = False) -> Tensor:
    """A language value as a tensor; list literals stack (differentiably) their elements.

    A comparison's result is a boolean mask: it indexes as a mask (``x[x > 0]``) and,
    anywhere else, counts as 0/1 floats of the default dtype.
    """
    if isinstance(value, LangList):
        value = _stack_literal(value, where)
    if isinstance(value, Tensor):
        if value._array.dtype == bool and not keep_bool:
            return F.astype(value, get_default_dtype())
        return value
    if isinstance(value, bool):
        return F.as_tensor(float(value))
    if isinstance(value, str):
        raise AgradValueError(
            f"{where + ': ' if where else ''}the string {value!r} is not a tensor; strings are "
            'only an argument of functions that take one, such as einsum("ij,jk->ik", A, B)'
        )
    return F.as_tensor(value)


def _stack_literal(items: LangList, where: str) -> Tensor:
    if not items:
        return F.as_tensor(np.zeros((0,)))
    if all(isinstance(v, bool) for v in items):  # [true, false, true]: a mask
        return F.as_tensor(np.array(items, dtype=bool))
    parts = [to_tensor(v, where) for v in items]
    shapes = {tuple(p.shape) for p in parts}
    if len(shapes) > 1:
        a, b = sorted(shapes, key=len)[:2]
        raise AgradValueError(
            f"tensor literal: its elements have different shapes, {a} and {b}; every row must "
            "have the same length"
        )
    if not any(p.requires_grad for p in parts):  # constants: one array, no graph
        check_count(len(parts) * parts[0]._array.size, "tensor literal")
        return F.as_tensor(np.stack([p._array for p in parts]))
    return F.stack(parts)  # the op checks the element limit itself


def as_int(value: Any, fn: str, param: str) -> int:
    """A whole number from a scalar value (every literal is a float)."""
    number = as_float(value, fn, param)
    if not number.is_integer():
        raise AgradValueError(f"{fn}: {param} must be a whole number, got {number:g}")
    return int(number)


def as_ints(value: Any, fn: str, param: str) -> tuple[int, ...] | int:
    v = constant(to_tensor(value), fn, param)
    if v.ndim == 0:
        return as_int(v, fn, param)
    flat = v._array.reshape(-1)
    if v.ndim > 1 or not all(float(x).is_integer() for x in flat):
        # (a tensor where axes go: max(a, b) meant as PyTorch's elementwise torch.max(a, b))
        hint = {
            "max": "; for the elementwise maximum of two tensors use maximum(a, b)",
            "min": "; for the elementwise minimum of two tensors use minimum(a, b)",
        }
        raise AgradValueError(
            f"{fn}: {param} must be a whole number or a list of them, got a tensor of shape "
            f"{tuple(v.shape)}{hint.get(fn, '')}"
        )  # fmt: skip
    return tuple(as_int(x, fn, param) for x in flat)


def as_float(value: Any, fn: str, param: str) -> float:
    v = constant(to_tensor(value), fn, param)
    if v._array.size != 1:
        raise AgradValueError(
            f"{fn}: {param} must be a number, got a tensor of shape {tuple(v.shape)}"
        )
    return float(v._array.reshape(-1)[0])


def constant(v: Tensor, fn: str, param: str) -> Tensor:
    """``v``, refused if a gradient flows through it: a parameter read as a number (an
    axis, a size, a bound, a rate) is a constant of the graph, so the gradient of whatever
    it was computed from would be silently lost through it."""
    if v.requires_grad:
        raise AgradValueError(
            f"{fn}: {param} is read as a number, which carries no gradient, but this value is "
            "computed from a variable being differentiated (--wrt or requires_grad=true); "
            f"give {param} a value that does not depend on it"
        )
    return v


def as_bool(value: Any, fn: str, param: str) -> bool:
    if isinstance(value, bool):
        return value
    return bool(as_float(value, fn, param))


def _as_shape(value: Any, fn: str, param: str) -> tuple[int, ...]:
    dims = as_ints(value, fn, param)
    return dims if isinstance(dims, tuple) else (dims,)


def _as_tensors(value: Any, fn: str, param: str) -> list[Tensor]:
    if not isinstance(value, LangList):
        raise AgradValueError(f"{fn}: expects a list of tensors in brackets, e.g. {fn}([a, b])")
    return [to_tensor(v) for v in value]


def _as_axis(value: Any, fn: str, param: str) -> Any:
    return None if value is None else as_ints(value, fn, param)


def _as_sizes(values: tuple, fn: str, param: str) -> tuple[int, ...]:
    one = len(values) == 1 and isinstance(values[0], (LangList, Tensor))
    if one and to_tensor(values[0]).ndim:  # zeros([2, 3])
        return _as_shape(values[0], fn, param)
    return tuple(as_int(v, fn, param) for v in values)


def as_str(value: Any, fn: str, param: str) -> str:
    if not isinstance(value, str):
        raise AgradValueError(f'{fn}: {param} must be a string in quotes, e.g. "ij,jk->ik"')
    return value


def _optional(convert: Callable[[Any, str, str], Any]) -> Callable[[Any, str, str], Any]:
    return lambda v, fn, p: None if v is None else convert(v, fn, p)


# What each annotation means: how a value of the language becomes the argument.
KINDS: dict[Any, tuple[str, Callable[[Any, str, str], Any]]] = {
    Array: ("tensor", lambda v, fn, p: to_tensor(v)),
    Array | None: ("tensor", _optional(lambda v, fn, p: to_tensor(v))),
    Tensors: ("tensors", _as_tensors),
    Value: ("value", lambda v, fn, p: v),
    int: ("int", as_int),
    int | None: ("int", _optional(as_int)),
    float: ("float", as_float),
    float | None: ("float", _optional(as_float)),
    bool: ("bool", as_bool),
    Axis: ("axis", _as_axis),
    Sizes: ("shape", _as_shape),
    Sizes | None: ("shape", _optional(_as_shape)),
    Size: ("size", _as_sizes),  # the whole *size tuple at once
    Operands: ("tensors", lambda v, fn, p: [to_tensor(x) for x in v]),
    str: ("string", as_str),
}


@record(frozen=True)
class Param:
    name: str
    kind: str
    convert: Callable[[Any, str, str], Any]
    default: Any = inspect.Parameter.empty

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty


@record(frozen=True)
class Function:
    """One language function: its implementation, and its parameters read from it."""

    name: str
    impl: Callable[..., Any]
    params: tuple[Param, ...]
    variadic: Param | None = None  # zeros(2, 3): any number of positional sizes
    doc: str = ""

    @classmethod
    def of(cls, impl: Callable[..., Any], name: str = "", doc: str = "") -> Function:
        """The entry for ``impl``, from its signature and annotations."""
        params, variadic = [], None
        for p in inspect.signature(impl, eval_str=True).parameters.values():
            if p.annotation not in KINDS:
                raise TypeError(f"{name or impl.__name__}: parameter {p.name!r} needs one of "
                                "the annotations in agrad.lang.functions.KINDS")  # fmt: skip
            kind, convert = KINDS[p.annotation]
            param = Param(p.name, kind, convert, p.default)
            if p.kind is p.VAR_POSITIONAL:
                variadic = param
            else:
                params.append(param)
        text = doc or (inspect.getdoc(impl) or "").splitlines()[0]
        return cls(name or impl.__name__, impl, tuple(params), variadic, text)

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params if not p.required}

    def signature(self) -> str:
        """The usage line: ``sum(x, axis=none, keepdims=false)``."""
        parts = [p.name if p.required else f"{p.name}={_show(p.default)}" for p in self.params]
        if self.variadic is not None:  # zeros(2, 3) or zeros([2, 3])
            parts.append(f"{self.variadic.name}, ...")
        return f"{self.name}({', '.join(parts)})"

    @functools.cached_property
    def _by_name(self) -> dict[str, Param]:
        return {p.name: p for p in self.params}

    def convert(self, args: list, kwargs: dict) -> tuple[list, dict]:
        """The arguments as the implementation takes them (after `bind` checked them)."""
        by_name = self._by_name
        positional = [
            p.convert(a, self.name, p.name) for p, a in zip(self.params, args, strict=False)
        ]
        if self.variadic is not None:  # the positional arguments after the named ones
            rest = tuple(args[len(self.params) :])
            positional += list(self.variadic.convert(rest, self.name, self.variadic.name))
        keywords = {k: by_name[k].convert(v, self.name, k) for k, v in kwargs.items()}
        return positional, keywords


def _show(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "none", True: "true", False: "false"}[value]
    return f"{value:g}" if isinstance(value, float) else str(value)


# ---- generated from the op table --------------------------------------------------------

_OPERANDS = {1: ("x",), 2: ("a", "b"), 3: ("cond", "a", "b")}
_DOCS = {
    UNARY: "elementwise {name}",
    REDUCTION: "{name} over axis (all axes by default)",
    ALONG_AXIS: "{name} along axis",
}


def from_op(op: Op) -> Function:
    """The language function of an entry: its forward's NumPy signature (or, for a NumPy
    ufunc, its operands), calling the entry's public function."""
    engine = F.API[op.api_name]  # type: ignore[index]
    name = op.language_name or op.name
    if isinstance(op.forward, np.ufunc):  # np.exp: operands only
        params = tuple(
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Array)
            for n in _OPERANDS[op.arity]
        )
    else:
        params = tuple(inspect.signature(op.forward, eval_str=True).parameters.values())
    operands = [p.name for p in params if p.annotation is Array]
    names = [p.name for p in params]
    # The operands come first (x, or a, b): a call of exactly them is engine(*operands).
    leading = len(operands) if names[: len(operands)] == operands else -1

    def impl(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == leading:  # sum(x), sin(x), maximum(a, b)
            return engine(*args)
        bound = dict(zip(names, args, strict=False), **kwargs)
        tensors = [bound.pop(n) for n in operands]
        return engine(*tensors, **bound)

    impl.__signature__ = inspect.Signature(list(params))  # type: ignore[attr-defined]
    doc = op.doc or _DOCS.get(op.family, "{name}").format(name=name)
    return Function.of(impl, name, doc)


class FunctionTable(Mapping[str, Function]):
    """Name -> `Function`, each entry made from its implementation's signature on first
    lookup: a program calls a few functions, and reading all ~90 signatures costs a few
    ms of every command's start-up. Iterating (``agrad functions``, suggestions for a
    misspelt name) makes them all; the names and their order are known from the start."""

    def __init__(self, makers: dict[str, Callable[[], Function]]) -> None:
        self._makers = makers
        self._made: dict[str, Function] = {}

    def __getitem__(self, name: str) -> Function:
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = self._makers[name]()  # KeyError: no such function
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)

    def __contains__(self, name: object) -> bool:
        return name in self._makers


def _table() -> FunctionTable:
    from . import matrix_functions, nn_functions  # (they import this module's converters)
    from . import written_functions as W

    # name -> maker, in the order `agrad functions` lists them; a later entry of the same
    # name replaces an earlier one, as in a dict display.
    makers: dict[str, Callable[[], Function]] = {"tensor": lambda: Function.of(W.tensor)}
    for op in OPS.values():
        if op.language_name:
            makers[op.language_name] = functools.partial(from_op, op)
    for f in [*W.BASICS, *matrix_functions.FUNCTIONS]:
        makers[f.__name__] = functools.partial(Function.of, f)
    for name, fill in W.FILLERS.items():
        makers[name] = functools.partial(Function.of, fill, name)
    for f in [*W.CONSTRUCTORS, *nn_functions.FUNCTIONS]:
        makers[f.__name__] = functools.partial(Function.of, f)
    table = FunctionTable(makers)
    for alias, name in ALIASES.items():  # PyTorch's names for the same functions
        makers[alias] = functools.partial(_alias, table, alias, name)
    return table


def _alias(table: FunctionTable, alias: str, name: str) -> Function:
    return replace(table[name], name=alias)


ALIASES = {"cat": "concat", "clamp": "clip"}


TABLE: FunctionTable = _table()
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}
