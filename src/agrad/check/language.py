"""Programs of agrad's language as check targets, and `--expect` formulas.

The program runs once with the engine, for the claimed Jacobian (one batched backward
pass for every variable); the numeric side replays the recorded graph with NumPy
(`agrad.engine.replay.Tape`) in float64 whatever the program's dtype, batched along
each variable, and in complex arithmetic when every recorded op is analytic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.autograd import grad as autograd_grad
from ..engine.escapes import ESCAPES
from ..engine.functional import batched_jacobian
from ..engine.replay import Tape
from ..engine.tensor import wrap
from ..errors import AgradError, AgradValueError
from .checker import check_target, judge_claim
from .options import CheckOptions
from .program_runs import (
    backed,
    fixed_by_value,
    fixed_slots,
    fixed_values,
    jumps_at_point,
    stair_scanner,
)
from .report import CheckReport, ExpectReport
from .targets import Variable, tape_batch

if TYPE_CHECKING:
    from ..lang.session import Session


class ProgramTarget:
    """A language program at its --set values, differentiated by autograd."""

    def __init__(self, session: Session) -> None:
        self.session = session
        escaped = ESCAPES[1]
        self.run = session.run()
        # a value that requires grad read outside the graph (tensor(w), a running statistic,
        # a position): the replay would hold what it made fixed (see `program_runs`)
        self.escaped = ESCAPES[1] != escaped
        self.output = self.run.output
        self.tensors = session.targets(self.run)
        if not self.tensors:
            raise AgradValueError("nothing to check: name the variables with --wrt")
        self.names = list(self.tensors)
        self.dtype = np.dtype(session.dtype).name
        self.out_shape = tuple(self.output.shape)
        self._claims: dict[bool, dict[str, np.ndarray | None]] = {}

    def output_shape(self, name: str) -> tuple[int, ...]:
        return self.out_shape

    def point(self, name: str) -> np.ndarray:
        return self.tensors[name]._array.astype(np.float64)

    def function(self, name: str) -> Variable:
        # One tape per variable: perturbing a variable must move everything computed from
        # it, including another --wrt variable that is an intermediate.
        tape = Tape(self.output, [self.tensors[name]])
        var = self._variable(name, tape)
        stepped = jumps_at_point(tape, var.base)
        if self.dtype == "float64":  # (the finer ladder assumes float64's rounding)
            var.stairs = stair_scanner(tape, var.base)
        if stepped is not None and stepped.size:  # (beside a comparison's boundaries)
            known = var.boundaries if var.boundaries is not None else stepped[:0]
            var.boundaries = np.union1d(known, stepped)
        return var

    def _variable(self, name: str, tape: Tape) -> Variable:
        base = self.point(name)
        exact = tape_batch(tape.complex(), base) if tape.holomorphic else None
        replay = tape_batch(tape, base)
        runs = self._runs(name)
        if runs is None:  # an intermediate: the program cannot be run with its value
            fixed = fixed_by_value(self.session.program, tape, self.escaped)
            if fixed:
                raise AgradValueError(
                    f"check --wrt {name}: {name} is computed by the program, and the program "
                    f"{fixed}, which the replay holds fixed at this point; a check of an "
                    "intermediate cannot run the program with new values of it to see the "
                    "jumps and kinks that makes: name the inputs it is computed from in --wrt"
                )
            return Variable(base, replay, exact)
        if not fixed_by_value(self.session.program, tape, self.escaped):
            return Variable(base, replay, exact)  # the program is its replay
        return backed(base, replay, exact, *runs)

    def _runs(self, name: str) -> Any:
        """(real_at, probe_at): the program run in float64 with ``name`` at a point, its
        output flat, and with it the values the replay holds fixed
        (`program_runs.fixed_slots`); None where ``name`` is computed in the program
        rather than given."""
        if not self.session.program.bindable(name):
            return None
        wide = self.session.widened()
        prepared = wide.prepare([name])
        shape = self.tensors[name].shape
        slots = fixed_slots(self.session.program)

        def probe_at(point: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
            run = prepared.run({name: np.asarray(point, np.float64).reshape(shape)})
            output = np.asarray(run.output._array, np.float64).reshape(-1)
            return output, fixed_values(run, slots)

        return (lambda point: probe_at(point)[0]), probe_at

    def claim(self, name: str, wide: bool = False) -> np.ndarray | None:
        if wide not in self._claims:
            self._claims[wide] = self._jacobians(wide)
        block = self._claims[wide][name]
        if block is None:
            return np.zeros((self.output._array.size, self.tensors[name]._array.size))
        return block

    def unused(self, name: str) -> bool:
        return self._jacobians_cached()[name] is None

    def _jacobians_cached(self) -> dict[str, Any]:
        if False not in self._claims:
            self._claims[False] = self._jacobians(False)
        return self._claims[False]

    def _jacobians(self, wide: bool) -> dict[str, np.ndarray | None]:
        if wide and self.dtype != "float64":
            session = self.session.widened()
            run = session.run()
            out, tensors = run.output, session.targets(run)
        else:
            out, tensors = self.output, self.tensors
        blocks = batched_jacobian(out, tuple(tensors.values()))
        m = out._array.size
        return {
            name: None if b is None else b._array.astype(np.float64).reshape(m, t._array.size)
            for (name, t), b in zip(tensors.items(), blocks, strict=True)
        }

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        """uᵀ J for one variable: one backward pass."""
        out, t = self.output, self.tensors[name]
        if not out.requires_grad:  # the output does not depend on any variable
            return np.zeros(t._array.size)
        cotangent = wrap(np.asarray(u, dtype=out.dtype).reshape(out.shape)) if out.ndim else None
        g = autograd_grad(out, [t], grad_outputs=cotangent, retain_graph=True, allow_unused=True)
        scale = 1.0 if out.ndim else float(np.asarray(u).reshape(-1)[0])
        if g[0] is None:
            return np.zeros(t._array.size)
        return g[0]._array.astype(np.float64).reshape(-1) * scale


def check_session(session: Session, options: CheckOptions, expect: dict[str, str]) -> CheckReport:
    """The check `agrad check PROGRAM` runs."""
    if expect and (options.fast or options.order == 2 or options.method == "taylor"):
        raise AgradValueError(
            "--expect compares a formula with the gradient element by element: it goes with "
            "the default first-order check, not --fast, --method taylor or --order 2"
        )
    if options.order == 2:
        from .second_order import check_hessian

        return check_hessian(session, options)
    target = ProgramTarget(session)
    missing = set(expect) - set(target.names)
    if missing:
        raise AgradValueError(f"--expect {sorted(missing)[0]}: also name it in --wrt")
    report = check_target(target, options)
    report.anomaly = _anomaly(target, report)
    for name, variable in report.variables.items():
        if not options.fast:
            variable.unused = target.unused(name)
        if name in expect:
            variable.expect = _expect(target, name, expect[name], variable, options)
            if not variable.expect.ok and variable.diagnosis is None:
                from .report import Diagnosis

                variable.diagnosis = Diagnosis("expect", variable.expect.verdict())
    return report


def _anomaly(target: ProgramTarget, report: CheckReport):
    """Where the first nan or inf came from, when the value or a gradient has one."""
    from ..lang import anomaly

    values = [target.output._array, *(v.analytic for v in report.variables.values())]
    if all(np.all(np.isfinite(np.asarray(v, dtype=np.float64))) for v in values):
        return None
    seed = None if target.output._array.size == 1 else wrap(np.ones_like(target.output._array))
    return anomaly.find(target.session.program, target.run, list(target.tensors.values()), seed)


def _expect(target: ProgramTarget, name: str, formula: str, autograd, options) -> ExpectReport:
    """Evaluate a hand-derived gradient formula with the program's values and judge it by
    the same rules as autograd (kinks included)."""
    from ..lang.program import Program

    out, t = target.output, target.tensors[name]
    if out._array.size != 1:
        raise AgradValueError(
            f"--expect {name}: a formula is compared with the gradient of a single-number "
            f"output; this output has shape {tuple(out.shape)}"
        )
    where = f"--expect {name}={formula!r}"
    try:
        program = Program.compile(formula)
        values = {n: target.run.env[n]._array for n in program.free if n in target.run.env}
        value = program.run(values).output._array
    except AgradError as exc:
        raise exc.with_prefix(where) from None
    try:
        value = np.broadcast_to(np.asarray(value, dtype=np.float64), t.shape)
    except ValueError:
        raise AgradValueError(
            f"--expect {name}: the formula has shape {np.shape(value)}, but {name} has shape "
            f"{tuple(t.shape)}"
        ) from None
    return judge_claim(target, name, value.reshape(1, -1), autograd, options, formula)
