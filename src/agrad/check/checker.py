"""Check a claimed derivative against numeric derivatives of the same function.

One machinery for every target (see `targets`): per variable, the numeric Jacobian comes
from the complex step where the function is analytic and from the adaptive ladder of
steps elsewhere (`steps`), or from one fixed step when asked; each element gets a verdict
(`verdict`); kinks are tested as subgradients along directions; a float32 claim is judged
twice, in float32 and in its float64 twin, so a failure says whether the rule or the
precision is at fault; a failing variable gets a diagnosis with its evidence
(`diagnosis`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import AgradLimitError, AgradValueError
from . import steps as S
from .coarse import doubt_coarse_failures
from .complex_step import complex_step
from .cotangents import cotangent_test, mark, nondet_tol
from .diagnosis import diagnose
from .directions import subgradient_tests
from .flat import (
    bound_noisy,
    bound_still,
    doubt_rounded,
    doubt_row_rounded,
    doubt_shared_rounding,
    pass_flat,
    pass_flat_side,
)
from .ladder import ladder
from .noise import element_noise
from .numeric import default_eps, differences
from .options import FIXED, CheckOptions
from .recorded import ReplayMismatch
from .report import CheckReport, ExpectReport, VariableReport
from .stairs import refine_below_stairs
from .straddled import refine_early_jumps, refine_straddled_kinks
from .targets import Target, Variable
from .ulp_noise import doubt_jumps, doubt_noisy_failures, keep_steps
from .verdict import (
    FAIL,
    FLAT,
    FORCED_ROUNDING,
    KINK,
    PASS,
    RULE,
    STEP,
    Tolerance,
    judge,
    precision_triage,
    rounding_size,
)  # fmt: skip

if TYPE_CHECKING:
    from ..lang.session import Session

__all__ = ["CheckOptions", "check", "check_target", "compare_variable", "judge_claim"]


def check(
    session: Session, options: CheckOptions | None = None, expect: dict[str, str] | None = None
) -> CheckReport:
    """Check every --wrt variable of a language ``session`` (see `language`)."""
    from .language import check_session

    return check_session(session, options or CheckOptions(), expect or {})


def check_target(target: Target, options: CheckOptions) -> CheckReport:
    """First-order check of every variable of ``target``."""
    rng = np.random.default_rng(options.seed)
    tol = Tolerance.default(target.dtype, options.atol, options.rtol)
    report = CheckReport({}, _method_name(options), _eps(options), options.atol, tol.rtol,
                         fast=options.fast, dtype=target.dtype)  # fmt: skip
    for name in target.names:
        if options.wording in ("cli", "suite"):  # (the Python API answers as gradcheck)
            _refuse_nonfinite(name, target.function(name).base)
        if options.fast or options.method == "taylor":
            from .projections import project_variable

            var = project_variable(target, name, options, rng)
        else:
            var = compare_variable(target, name, options, rng)
        report.variables[name] = var
        report.evaluations += var.evaluations
    return report


def _refuse_nonfinite(name: str, base: np.ndarray) -> None:
    """A point with nan or inf in it is bad input, not a failed check: nothing can be
    differentiated there (every element would only be undecided)."""
    bad = ~np.isfinite(base)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"{name}[{', '.join(map(str, index))}]" if base.ndim else name
        raise AgradValueError(
            f"{where} is {base[index] if base.ndim else base}: a gradient check needs a "
            f"point where every input is finite; give {name} finite values"
        )


def _method_name(options: CheckOptions) -> str:
    if options.method == "auto" and options.eps is not None:
        return "central"
    return options.method


def _eps(options: CheckOptions) -> float | None:
    if options.eps is not None:
        return options.eps
    if options.method in FIXED:
        return default_eps(np.float64, options.method)
    return None


def compare_variable(
    target: Target,
    name: str,
    options: CheckOptions,
    rng: np.random.Generator,
    claim: np.ndarray | None = None,
) -> VariableReport:
    """Every element of one variable's Jacobian: claimed against numeric."""
    return with_fallback(target.function(name), rng, lambda var: (_compare(
        target, name, var, options, rng, claim), None))  # fmt: skip


def with_fallback(var: Variable, rng: np.random.Generator, run: Callable) -> VariableReport:
    """``run(var)`` -> (report, the directions of its elements or None); where ``var``
    replays a recorded graph, its worst element is confirmed by real calls, and the whole
    run is made again calling the function when they disagree (or the replay did)."""
    if var.confirm is None or var.fallback is None:
        return run(var)[0]
    state = rng.bit_generator.state
    try:
        report, directions = run(var)
        var.confirm(worst_points(var, report, directions))
        return report
    except ReplayMismatch:
        rng.bit_generator.state = state
        return run(var.fallback())[0]


def worst_points(
    var: Variable, report: VariableReport, directions: np.ndarray | None = None
) -> np.ndarray:
    """The points where the worst compared element was evaluated: the base moved by its
    step both ways (along its coordinate, or its direction for --fast)."""
    with np.errstate(all="ignore"):
        badness = np.abs(report.analytic - report.numeric) / np.maximum(report.tolerance, 1e-300)
    badness = np.where(np.isnan(badness), np.inf, badness)
    column = int(np.unravel_index(np.argmax(badness), badness.shape)[1]) if badness.size else 0
    flat = var.base.reshape(-1)
    if directions is not None:
        direction = directions[column]
    else:
        direction = np.zeros(flat.size)
        if flat.size:
            direction[column] = 1.0
    step = float(np.asarray(report.step).reshape(-1)[column]) if np.size(report.step) else 0.0
    if not step > 0:
        step = S.START * max(1.0, float(np.max(np.abs(flat), initial=0.0)))
    points = np.stack([flat + step * direction, flat - step * direction])
    return points.reshape(2, *var.base.shape)


def _compare(target, name, var, options, rng, claim) -> VariableReport:
    f0 = var.value()
    x = var.base.reshape(-1)
    claimed = claim is None
    if claimed:
        claim = target.claim(name)
    claim = np.asarray(claim, dtype=np.float64).reshape(f0.size, x.size)
    tol = Tolerance.default(target.dtype, options.atol, options.rtol)
    numeric = numeric_jacobian(var, f0, claim, tol, options)
    evaluations = numeric.evaluations
    estimate = None
    if options.fixed_step:
        d = _fixed(var, options)
        estimate, evaluations = d.jacobian, evaluations + d.evaluations
    size = np.maximum(np.abs(f0), numeric.magnitude) if numeric.magnitude is not None else f0
    exact = numeric.complex_step if estimate is None else None
    compared = numeric.estimate if estimate is None else estimate
    forced = tol if estimate is None else tol.fixed()  # (a forced step's error is unknown)
    tau, accuracy = forced.bounds(
        claim, compared, size, x, exact, None if estimate is not None else numeric.error
    )
    rounding = getattr(target, "claim_rounding", None)  # (a claim's own, where it is known)
    if rounding is not None and tol.atol is None:
        floor = np.asarray(rounding(name), dtype=np.float64).reshape(-1, 1)
        # where f did not move at all, a claim within 64 ulps passes, as at first order for
        # a flat f (`judge`'s FLAT): a row of residues of terms its own row does not show
        floor = np.where(compared == 0, np.maximum(floor, FLAT), floor)
        tau, accuracy = np.maximum(tau, floor), np.maximum(accuracy, floor)
    verdicts, reasons = judge(
        claim, numeric, tau, options.strict, estimate, accuracy, given=tol.atol is not None
    )
    if exact is not None and exact.any():
        evaluations += pass_flat(var, f0, claim, compared, exact, tau, verdicts, reasons)
        doubt_rounded(f0, claim, compared, exact, verdicts, reasons)
    if estimate is None and f0.size > 1:
        doubt_shared_rounding(f0, claim, numeric, verdicts, reasons)
    if tol.atol is None:  # (a user's own atol says what rounding to allow)
        doubt_row_rounded(
            claim,
            compared,
            None if estimate is not None else numeric.error,
            tau,
            verdicts,
            reasons,
        )
    if estimate is None:
        evaluations += doubt_coarse_failures(var, f0, numeric, tau, claim, verdicts, reasons)
        evaluations += doubt_noisy_failures(var, f0, numeric, claim, verdicts, reasons)
        evaluations += pass_flat_side(var, f0, claim, numeric, verdicts, reasons)
    if estimate is not None:  # a forced step that fails where the adaptive one passes
        adaptive_tau, loose = tol.bounds(claim, numeric.estimate, size, x, numeric.complex_step)
        adaptive, _ = judge(claim, numeric, adaptive_tau, accuracy=loose)
        step_only = (verdicts == FAIL) & (reasons == RULE) & (adaptive == PASS)
        if tol.atol is None:  # (a user's atol is compared plainly, as PyTorch's)
            rounded = FORCED_ROUNDING * S.EPS * rounding_size(size)[:, None] / _fixed_steps(
                var, options)[None, :]  # fmt: skip
            within = step_only & (np.abs(claim - estimate) <= tau + rounded)
            verdicts[within], reasons[within], step_only = PASS, 0, step_only & ~within
        reasons[step_only] = STEP
    tests, more, certified = subgradient_tests(var, f0, claim, numeric, tau, verdicts, reasons,
                                               rng)  # fmt: skip
    evaluations += more
    analytic64 = None
    if target.dtype != "float64":
        analytic64 = target.claim(name, wide=True)
        if analytic64 is not None:
            analytic64 = np.asarray(analytic64, dtype=np.float64).reshape(claim.shape)
            precision_triage(claim, analytic64, numeric, options, size, x, estimate, verdicts,
                             reasons)  # fmt: skip
    cotangent = None
    if claimed:  # (a given claim, --expect's formula, is no backward's)
        nonlinear, cotangent = cotangent_test(lambda u: target.vjp(name, u), claim, rng,
                                              target.dtype, None, nondet_tol(target),
                                              size)  # fmt: skip
        mark(verdicts, reasons, nonlinear, cotangent)
    report = VariableReport(
        name=name,
        out_shape=tuple(target.output_shape(name)),
        in_shape=tuple(var.base.shape),
        analytic=claim,
        numeric=numeric.estimate if estimate is None else estimate,
        error=numeric.error,
        tolerance=tau,
        verdicts=verdicts,
        reasons=reasons,
        left=numeric.left,
        right=numeric.right,
        step=numeric.step if estimate is None else _fixed_steps(var, options),
        complex_step=numeric.complex_step & (estimate is None),
        allow_undecided=options.allow_undecided,
        evaluations=evaluations,
        analytic64=analytic64,
        dtype=target.dtype,
        adaptive_step=None if estimate is None else numeric.step,
        direction_tests=tests,
        certified_rows=certified,
        cotangent=cotangent,
        undefined=np.isnan(np.asarray(f0, dtype=np.float64).reshape(-1)),
    )
    if not report.ok:
        report.diagnosis = diagnose(report, var, f0, options)
    return report


def numeric_jacobian(
    var: Variable, f0: np.ndarray, claim: np.ndarray, tol: Tolerance, options: CheckOptions
) -> S.Numeric:
    """The numeric Jacobian (m, n) by the complex step where it is exact, else the ladder."""
    n, m = var.size, f0.size
    x = var.base.reshape(-1)
    scale = S.element_scale(x)
    accuracy = tol.of(claim, claim, f0, x)  # what settles an element
    if n == 0:
        return S.Numeric.empty(m, 0)
    use_complex = var.complex_batch is not None and options.method in ("auto", "complex")
    _within_budget(var, options, use_complex)
    options.need_complex_step(var.complex_batch is not None)
    if use_complex:
        result = complex_step(var.along_coordinates(complex_=True), f0, n, scale)
        rest = np.nonzero(~result.complex_step)[0]
    else:
        result = S.Numeric.empty(m, n)
        rest = np.arange(n)
    if rest.size:
        noise, probes, rounding = element_noise(var, f0, rest, scale)
        climbed = ladder(
            var.along_coordinates(),
            f0,
            rest,
            S.START * scale[rest],
            accuracy[:, rest],
            claim[:, rest],
            actual=var.actual_steps,
            noise=None if noise is None else noise[:, rest],
        )
        result.merge(rest, climbed)
        result.evaluations += probes
        refine_straddled_kinks(var, f0, result, accuracy, claim, noise)
        result.evaluations += refine_early_jumps(var, f0, result, accuracy, claim, noise)
        result.evaluations += refine_below_stairs(var, f0, result, accuracy, claim)
        if var.boundaries is not None:  # a jump at a compared value's boundary, however small
            result.evaluations += keep_steps(var, f0, result, var.boundaries)[1]
        result.evaluations += doubt_jumps(var, f0, result)
        result.evaluations += bound_still(var, f0, result)
        result.evaluations += bound_noisy(var, f0, result, claim, rounding)
    return result


BUDGET_SAMPLE = 16  # points evaluated to estimate a check's time


def _within_budget(var: Variable, options: CheckOptions, exact: bool) -> None:
    """Refuse, before the work, a check whose cost (elements x evaluations, each of the
    whole function) would exceed --max-seconds: it grows as the square of the input."""
    n = var.size
    if n <= 4 * BUDGET_SAMPLE:
        return
    sample = np.repeat(var.base.reshape(1, -1), BUDGET_SAMPLE, axis=0)
    sample = sample.reshape(BUDGET_SAMPLE, *var.base.shape)
    per_point = np.inf
    for _ in range(2):  # the first call pays one-time costs (caches, page faults)
        started = time.perf_counter()
        var.batch(sample)
        per_point = min(per_point, (time.perf_counter() - started) / BUDGET_SAMPLE)
    # The fewest evaluations per element each method takes: one complex step (complex
    # arithmetic costs about three real evaluations), or three levels of two.
    passes = 3.0 if exact else 6.0
    estimate = per_point * n * passes
    if estimate > options.max_seconds:
        raise AgradLimitError(
            f"checking a variable of {n:,} elements one by one would take at least "
            f"{_duration(estimate)} (each element needs the whole function evaluated, "
            f"{per_point * 1e3:.3g} ms a point); {options.advice('budget')}"
        )


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def _fixed(var: Variable, options: CheckOptions):
    method = "central" if options.method == "auto" else options.method
    eps = options.eps or default_eps(np.float64, method)
    first = var.base.copy()

    def single(point: np.ndarray) -> np.ndarray:
        return var.batch(point[None])[0]

    return differences(single, first, eps, method, batched=var.batch)


def _fixed_steps(var: Variable, options: CheckOptions) -> np.ndarray:
    method = "central" if options.method == "auto" else options.method
    eps = options.eps or default_eps(np.float64, method)
    return eps * S.element_scale(var.base)


def judge_claim(
    target: Target,
    name: str,
    claim: np.ndarray,
    autograd: VariableReport,
    options: CheckOptions,
    label: str,
) -> ExpectReport:
    """A second claim (a hand-derived formula, a hand-written gradient) judged by the same
    rules as autograd's, and beside it: which of the three disagree."""
    claim = np.asarray(claim, dtype=np.float64).reshape(autograd.analytic.shape)
    rng = np.random.default_rng(options.seed)
    report = compare_variable(target, name, options, rng, claim=claim)
    shape = tuple(autograd.out_shape) + tuple(autograd.in_shape)
    # Two valid subgradients at a kink may differ: compare them where autograd is smooth.
    smooth = autograd.verdicts != KINK
    tau = np.maximum(autograd.tolerance, report.tolerance)
    apart = ~(np.abs(claim - autograd.analytic) <= tau) & smooth
    left = np.where(smooth, np.nan, autograd.left).reshape(shape)
    right = np.where(smooth, np.nan, autograd.right).reshape(shape)
    verdicts = (report.verdict, autograd.verdict)
    undecided = "undecided" in verdicts and "fail" not in verdicts
    return ExpectReport(label, claim.reshape(shape), autograd.analytic.reshape(shape),
                        autograd.numeric.reshape(shape), not apart.any(), report.ok, autograd.ok,
                        left, right, undecided, failing=(report.verdicts == FAIL) | apart,
                        max_abs_error=report.max_abs_error)  # fmt: skip
