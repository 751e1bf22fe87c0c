"""Compile once, run many times: a `Program` executes the parser's flat IR on the engine.

`Program.run` is one loop over instructions (no recursion at any depth, see
`agrad.lang.executor`). It binds ``--set`` values, turns ``--wrt`` names into leaves that
require grad (or retains the gradient of an intermediate), sets the element limit the
engine enforces before anything allocates, and reports any error at its line and column.
`Program.prepare` does the checks and conversions once for a program run many times.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..engine.dtypes import get_default_dtype, session_dtype
from ..engine.generator import session_seed
from ..engine.limits import max_elements as element_limit
from ..errors import AgradError, AgradNameError, AgradValueError, agrad_wording
from . import ir
from .diagnostics import caret_snippet
from .executor import Executor, Run, bound_value
from .functions import CONSTANTS, TABLE
from .gcpause import paused_gc
from .naming import suggest
from .parser import parse
from .steps import Steps, compile_steps

MAX_ELEMENTS = 10**8  # default allocation limit (elements of one result); --max-elements
LIMIT_HINT = "use smaller inputs or raise it with --max-elements"

__all__ = ["MAX_ELEMENTS", "Prepared", "Program", "Run"]


class Program:
    """A parsed program and what it reads and assigns.

    >>> Program.compile("sum(x**2)").run({"x": [1.0, 2.0]}).output
    tensor(5.)
    """

    def __init__(self, parsed: ir.ParsedProgram) -> None:
        self.parsed = parsed
        self.source = parsed.source
        self.assigned: dict[str, ir.Statement] = {}
        self.constant: set[str] = set()  # names assigned only from constants (overridable)
        self.free: list[str] = []  # names read before any assignment: inputs
        # Indexed assignment writes through views into what they view, as in PyTorch: then
        # each run gets its own copy of the inputs, which later runs must see unchanged.
        self.writes = any(instr.kind == ir.STORE_INDEX for instr in parsed.instrs)
        # id(CALL instruction) -> (its function, its keywords as the function names them)
        self.checked_calls: dict[int, tuple[Any, tuple[str, ...]]] = {}
        self._steps: Steps | None = None
        self._analyse()

    @property
    def steps(self) -> Steps:
        """One compiled step per instruction (`agrad.lang.steps`), made on the first run."""
        if self._steps is None:
            self._steps = compile_steps(self.parsed.instrs)
        return self._steps

    @classmethod
    def compile(cls, text: str) -> Program:
        return cls(parse(text))

    def _analyse(self) -> None:
        start = 0
        free: set[str] = set()  # self.free as a set, for the membership tests
        for stmt in self.parsed.statements:
            reads = set()
            for instr in self.parsed.instrs[start : stmt.slot + 1]:
                if instr.kind != ir.NAME:
                    continue
                name = instr.name
                if name not in CONSTANTS and name not in self.assigned and name not in free:
                    self.free.append(name)  # type: ignore[arg-type]
                    free.add(name)  # type: ignore[arg-type]
                reads.add(name)
            if stmt.target is not None:
                is_const = not (reads - CONSTANTS.keys()) and (
                    self.parsed.instrs[stmt.slot].kind == ir.STORE
                )
                if stmt.target not in self.assigned:
                    self.assigned[stmt.target] = stmt
                    if is_const:
                        self.constant.add(stmt.target)
                elif not is_const:
                    self.constant.discard(stmt.target)
            start = stmt.slot + 1

    def bindable(self, name: str) -> bool:
        """Whether ``name`` can be given a value from outside (--set, a perturbation, a
        fitted parameter): an input, or a name assigned only from constants."""
        return name in self.free or name in self.constant

    @property
    def variables(self) -> list[str]:
        return list(dict.fromkeys([*self.free, *self.assigned]))

    def check_names(self, bindings: Iterable[str], wrt: Iterable[str]) -> None:
        """Refuse --set/--wrt names the program cannot use, before running anything.
        An unknown name in the program is reported first: a --set that matches nothing
        is most often the other half of that typo."""
        known = self.variables
        bindings = list(bindings)
        for name in self.free:
            if name not in bindings and any(b not in known for b in bindings):
                line, column = self._first_read(name)
                raise self._located(
                    AgradNameError(
                        f"unknown name {name!r}{suggest(name, [*bindings, *TABLE, *CONSTANTS])}; "
                        f"give it a value with --set {name}=VALUE or assign it in the program"
                    ),
                    line,
                    column,
                    column + len(name),
                )
        for name in bindings:
            if name not in known:
                raise AgradNameError(
                    f"--set {name}: the program has no variable {name!r}{suggest(name, known)}"
                )
            if name in self.assigned and name not in self.constant:
                line = self.assigned[name].line
                raise AgradValueError(
                    f"--set {name}: {name!r} is computed by the program (line {line}); --set can "
                    "only replace inputs and constant assignments"
                )
        for name in wrt:
            if name not in known:
                raise AgradNameError(
                    f"--wrt {name}: the program has no variable {name!r}{suggest(name, known)}"
                )

    def run(
        self,
        bindings: Mapping[str, Any] | None = None,
        wrt: Iterable[str] = (),
        *,
        dtype: Any = None,
        seed: int | None = 0,
        max_elements: int = MAX_ELEMENTS,
    ) -> Run:
        """Execute with ``bindings`` (name -> value) and ``wrt`` names made differentiable."""
        return self.prepare(bindings, wrt, dtype=dtype, seed=seed, max_elements=max_elements).run()

    def prepare(
        self,
        bindings: Mapping[str, Any] | None = None,
        wrt: Iterable[str] = (),
        *,
        dtype: Any = None,
        seed: int | None = 0,
        max_elements: int = MAX_ELEMENTS,
        varying: Iterable[str] = (),
    ) -> Prepared:
        """Check the names and convert ``bindings`` once, for runs that differ only in the
        values of the ``varying`` names (given to each `Prepared.run`)."""
        bindings = dict(bindings or {})
        wrt = list(dict.fromkeys(wrt))
        self.check_names([*bindings, *(n for n in varying if n not in bindings)], wrt)
        missing = [n for n in self.free if n not in bindings and n not in varying]
        if missing:
            name = missing[0]
            line, column = self._first_read(name)
            raise self._located(
                AgradNameError(
                    f"unknown name {name!r}"
                    f"{suggest(name, [*self.variables, *TABLE, *CONSTANTS])}; "
                    f"give it a value with --set {name}=VALUE or assign it in the program"
                ),
                line,
                column,
                column + len(name),
            )
        return Prepared(self, bindings, wrt, dtype, seed, max_elements)

    def _first_read(self, name: str) -> tuple[int, int]:
        for instr in self.parsed.instrs:
            if instr.kind == ir.NAME and instr.name == name:
                return instr.line, instr.column
        return 1, 1

    def _located(self, exc: AgradError, line: int, column: int, end: int | None = None):
        located = type(exc)(f"line {line}, column {column}: {exc}")
        located.snippet = caret_snippet(self.source, line, column, end)  # type: ignore[attr-defined]
        return located


class Prepared:
    """A program with its names checked and its bound values converted: `run` it."""

    def __init__(
        self,
        program: Program,
        bindings: dict[str, Any],
        wrt: list[str],
        dtype: Any,
        seed: int | None,
        max_elements: int,
    ) -> None:
        self.program, self.wrt, self.seed, self.max_elements = program, wrt, seed, max_elements
        self.dtype = dtype or get_default_dtype()
        # The run's dtype, seed and limit are this thread's only: another thread's run (or
        # the Python API's default generator) keeps its own.
        with session_dtype(self.dtype):  # converted as each run would: in the run's dtype
            self.bound = {n: bound_value(v, self.dtype, False) for n, v in bindings.items()}

    def run(self, values: Mapping[str, Any] | None = None) -> Run:
        """One execution, with ``values`` (name -> array) for the varying names."""
        with session_dtype(self.dtype):
            dtype, copy = get_default_dtype(), self.program.writes
            if copy:
                bound = {n: bound_value(t, dtype, True) for n, t in self.bound.items()}
            else:
                bound = dict(self.bound)
            for name, value in (values or {}).items():
                bound[name] = bound_value(value, dtype, copy)
            limit = element_limit(self.max_elements, LIMIT_HINT)
            with session_seed(self.seed), paused_gc(), limit, agrad_wording():
                return Executor(self.program, bound, self.wrt).execute()
