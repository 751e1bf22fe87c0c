"""Check gradients: autograd's against finite differences of the same compiled program.

The program runs once with the engine (for the analytic Jacobian, in one
batched backward pass); the numeric side replays the recorded graph with NumPy
(`agrad.engine.replay.Tape`), in float64 whatever the program's dtype, so the
finite differences are accurate and only the analytic side carries float32
rounding. Tolerances default by dtype; the pass rule is PyTorch's:
|analytic - numeric| <= atol + rtol * |numeric|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engine.autograd import grad as autograd_grad
from ..engine.functional import batched_jacobian
from ..engine.replay import Tape
from ..engine.tensor import Tensor
from ..errors import AgradValueError
from .numeric import Differences, default_eps, differences
from .report import CheckReport, Element, ExpectReport, VariableReport

if TYPE_CHECKING:
    from ..lang.session import Session

# (atol, rtol): tight enough to catch a 1% error in float64; float32's analytic
# side rounds at ~1e-7 relative, accumulated over sums.
TOLERANCES = {"float64": (1e-6, 1e-5), "float32": (1e-4, 1e-3)}
WORST = 5


@dataclass
class CheckOptions:
    eps: float | None = None
    atol: float | None = None
    rtol: float | None = None
    method: str = "central"
    fast: bool = False
    directions: int = 3  # random directions per variable with --fast
    order: int = 1
    strict: bool = False  # report kinks as failures
    seed: int = 0

    def __post_init__(self) -> None:
        """Refuse settings that would make a check meaningless (a NaN step passes nothing)."""
        from .numeric import METHODS

        if self.eps is not None and not (math.isfinite(self.eps) and self.eps > 0):
            raise AgradValueError(f"--eps must be a positive number, got {self.eps}")
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise AgradValueError(f"--{name} must be a number >= 0, got {value}")
        if self.method not in METHODS:
            raise AgradValueError(
                f"--method must be one of {', '.join(METHODS)}, got {self.method!r}"
            )
        if self.order not in (1, 2):
            raise AgradValueError(f"--order must be 1 or 2, got {self.order}")

    def tolerances(self, dtype: str) -> tuple[float, float]:
        atol, rtol = TOLERANCES.get(dtype, TOLERANCES["float64"])
        return (atol if self.atol is None else self.atol, rtol if self.rtol is None else self.rtol)


def check(
    session: Session, options: CheckOptions | None = None, expect: dict[str, str] | None = None
) -> CheckReport:
    """Compare analytic and numeric derivatives for every --wrt variable of ``session``."""
    options = options or CheckOptions()
    expect = expect or {}
    dtype = np.dtype(session.dtype).name
    atol, rtol = options.tolerances(dtype)
    eps = options.eps or default_eps(np.float64, options.method)
    run = session.run()
    out, targets = run.output, session.targets(run)
    if not targets:
        raise AgradValueError("nothing to check: name the variables with --wrt")
    if expect and (options.fast or options.order == 2):
        raise AgradValueError(
            "--expect compares a formula with the gradient element by element: it goes with "
            "the default first-order check, not --fast or --order 2"
        )
    if options.order == 2:
        from .second_order import check_hessian

        return check_hessian(session, run, options, atol, rtol, eps)
    report = CheckReport(True, {}, options.method, eps, atol, rtol, fast=options.fast, dtype=dtype)
    tensors = list(targets.values())
    # One tape per variable: perturbing a variable must move everything computed from it,
    # including another --wrt variable that is an intermediate (total, not partial, change).
    tapes = [Tape(out, [t]) for t in tensors]
    base = [t.data.astype(np.float64) for t in tensors]
    if options.fast:
        _check_fast(report, out, targets, tapes, base, options, atol, rtol, eps)
        return report
    blocks = batched_jacobian(out, tuple(tensors))
    for k, (name, t) in enumerate(targets.items()):
        analytic = (
            np.zeros((out.data.size, t.data.size))
            if blocks[k] is None
            else blocks[k].data.astype(np.float64).reshape(out.data.size, t.data.size)
        )
        tape = tapes[k]
        numeric = differences(tape, base[k], eps, options.method, batched=_block_fn(tape, base[k]))
        report.evaluations += numeric.evaluations
        var = compare(name, analytic, numeric, out.shape, t.shape, atol, rtol, options.strict)
        var.unused = blocks[k] is None
        if name in expect:
            var.expect = _expect(
                expect[name], run, name, analytic, numeric.jacobian, out, t, atol, rtol
            )
            var.ok = var.ok and var.expect.ok
        report.variables[name] = var
        report.ok = report.ok and var.ok
    missing = set(expect) - set(targets)
    if missing:
        raise AgradValueError(f"--expect {sorted(missing)[0]}: also name it in --wrt")
    return report


def _block_fn(tape: Tape, base: np.ndarray):
    def f(block: np.ndarray) -> np.ndarray:
        return tape.batch(0, block, [base])

    return f


def compare(
    name: str,
    analytic: np.ndarray,
    d: Differences,
    out_shape: tuple,
    in_shape: tuple,
    atol: float,
    rtol: float,
    strict: bool = False,
) -> VariableReport:
    """Elementwise verdicts, with kinks (one-sided quotients that disagree) set apart."""
    numeric = d.jacobian
    abs_err = np.abs(analytic - numeric)
    tol = atol + rtol * np.abs(numeric)
    rel_err = abs_err / np.maximum(np.abs(numeric), atol)
    failing = ~(abs_err <= tol)  # NaN anywhere (either side) is a failure, never a pass
    kink = np.zeros_like(failing)
    if d.left is not None and d.right is not None:
        jump = np.abs(d.right - d.left)
        kink = jump > np.maximum(0.05 * np.maximum(np.abs(d.left), np.abs(d.right)), 100 * tol)
        lo, hi = np.minimum(d.left, d.right) - tol, np.maximum(d.left, d.right) + tol
        if not strict:  # a value between the one-sided derivatives is a valid subgradient
            failing &= ~(kink & (analytic >= lo) & (analytic <= hi))

    def element(i: int, j: int, sided: bool = False) -> Element:
        return Element(
            _unravel(i, out_shape),
            _unravel(j, in_shape),
            float(analytic[i, j]),
            float(numeric[i, j]),
            float(abs_err[i, j]),
            float(rel_err[i, j]),
            (float(d.left[i, j]), float(d.right[i, j])) if sided else None,
        )

    considered = ~kink | failing  # kinks that pass are listed apart, not among the worst
    finite_err = np.nan_to_num(abs_err, nan=1e299, posinf=1e299)  # NaN/inf sort first
    ranked = np.where(failing, 1e300 + finite_err, np.where(considered, finite_err, -1.0))
    order = [o for o in np.argsort(-ranked, axis=None)[:WORST] if ranked.flat[o] >= 0]
    worst = [element(*np.unravel_index(o, abs_err.shape)) for o in order]
    kinks = [element(i, j, True) for i, j in zip(*np.nonzero(kink), strict=True)][: WORST * 4]
    return VariableReport(
        name=name,
        ok=not failing.any(),
        max_abs_error=float(abs_err[considered].max()) if considered.any() else 0.0,
        max_rel_error=float(rel_err[considered].max()) if considered.any() else 0.0,
        worst=worst,
        kinks=kinks,
        failures=int(failing.sum()),
        compared=int(abs_err.size),
        error_estimate=None if d.error is None else float(d.error.max(initial=0.0)),
    )


def _unravel(flat: int, shape: tuple) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()


def _check_fast(
    report: CheckReport,
    out: Tensor,
    targets: dict,
    tapes: list[Tape],
    base: list[np.ndarray],
    options: CheckOptions,
    atol: float,
    rtol: float,
    eps: float,
) -> None:
    """Random projections: u^T J v from one backward pass against u . (f(x+hv) - f(x-hv))/2h."""
    rng = np.random.default_rng(options.seed)
    tensors = list(targets.values())
    for k, (name, t) in enumerate(targets.items()):
        rows = []
        for _ in range(options.directions):
            u = rng.standard_normal(out.shape)
            v = rng.standard_normal(t.shape)
            v /= max(np.linalg.norm(v), 1e-300)
            g = autograd_grad(
                out,
                [t],
                grad_outputs=Tensor(u) if out.ndim else None,
                retain_graph=True,
                allow_unused=True,
            )[0]
            analytic = (
                0.0 if g is None else float(np.sum(g.data * v)) * (1.0 if out.ndim else float(u))
            )
            h = eps * max(1.0, float(np.max(np.abs(base[k]), initial=0.0)))
            up = tapes[k](base[k] + h * v)
            down = tapes[k](base[k] - h * v)
            numeric = float(np.sum(u * (up - down))) / (2 * h)
            report.evaluations += 2
            rows.append((analytic, numeric))
        a = np.array([[r[0] for r in rows]])
        n = Differences(np.array([[r[1] for r in rows]]))
        var = compare(name, a, n, (), (options.directions,), atol, rtol, strict=True)
        var.unused = all(r[0] == 0.0 for r in rows) and not tensors[k].requires_grad
        report.variables[name] = var
        report.ok = report.ok and var.ok


def _expect(
    formula: str,
    run,
    name: str,
    analytic: np.ndarray,
    numeric: np.ndarray,
    out: Tensor,
    t: Tensor,
    atol: float,
    rtol: float,
) -> ExpectReport:
    """Evaluate a hand-derived gradient formula with the program's values, and compare."""
    from ..lang.program import Program

    if out.data.size != 1:
        raise AgradValueError(
            f"--expect {name}: a formula is compared with the gradient of a "
            "single-number output; this output has shape "
            f"{tuple(out.shape)}"
        )
    try:
        program = Program.compile(formula)
        values = {n: run.env[n].data for n in program.free if n in run.env}
        value = program.run(values).output.data
    except Exception as exc:
        raise type(exc)(f"--expect {name}={formula!r}: {exc}") from None
    try:
        value = np.broadcast_to(np.asarray(value, dtype=np.float64), t.shape)
    except ValueError:
        raise AgradValueError(
            f"--expect {name}: the formula has shape {np.shape(value)}, but "
            f"{name} has shape {tuple(t.shape)}"
        ) from None
    a, n = analytic.reshape(t.shape), numeric.reshape(t.shape)

    def agree(p: np.ndarray, q: np.ndarray) -> bool:
        return bool(np.all(np.abs(p - q) <= atol + rtol * np.abs(q)))

    return ExpectReport(formula, value, a, n, agree(value, a), agree(value, n), agree(a, n))
