"""Checks along random directions: --fast (uᵀJv against the numeric derivative of u·f
along v) and --method taylor (the Taylor remainder's convergence rate along v).

Each direction is one compared element of a (1, D) report (of an (m, D) report for up to
EACH_ROW outputs, each compared on its own): a Jacobian of any size is checked in a few
evaluations, and a VJP that is 1% off still shows.
"""

from __future__ import annotations

import numpy as np

from . import steps as S
from .complex_step import complex_step
from .cotangents import cotangent_test, nondet_tol
from .diagnosis import diagnose
from .ladder import ladder
from .options import CheckOptions
from .report import Diagnosis, VariableReport
from .targets import Target
from .taylor import taylor
from .verdict import FAIL, PASS, RULE, STRICT_KINK, UNDECIDED, Tolerance, judge


def _directions(n: int, m: int, count: int, rng: np.random.Generator):
    v = rng.standard_normal((count, n))
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-300)
    u = rng.standard_normal((count, m)) if m != 1 else np.ones((count, 1))
    return v, u


def project_variable(
    target: Target, name: str, options: CheckOptions, rng: np.random.Generator
) -> VariableReport:
    """uᵀJv for ``options.directions`` random pairs (u, v), one VJP each."""
    from .checker import with_fallback

    return with_fallback(target.function(name), rng,
                         lambda var: _project(target, name, var, options, rng))  # fmt: skip


# Up to this many outputs, each is compared on its own along every direction (one VJP an
# output): a random u weighs the outputs by their scale, so a wrong output of size 1e-6
# beside one of 1e6 passed (PyTorch's fast_mode passes it too).
EACH_ROW = 64


def _project(target, name, var, options, rng) -> tuple[VariableReport, np.ndarray]:
    f0 = var.value()
    x = var.base.reshape(-1)
    n, m = x.size, f0.size
    v, u = _directions(n, m, options.directions, rng)
    if 1 < m <= EACH_ROW and options.method != "taylor":
        return _project_rows(target, name, var, options, f0, v, rng), v
    weighing = 0
    if m > EACH_ROW and options.method != "taylor":
        weights, weighing = _row_weights(var, v, f0)
        u = u * weights[None, :]
    if m == 1:  # u = 1 for every direction: one backward pass gives the whole gradient
        grads, basis = target.vjp(name, u[0])[None], u[:1]
        claim = (v @ grads[0])[None]
    else:
        grads, basis = np.stack([target.vjp(name, u[d]) for d in range(len(v))]), u
        claim = np.einsum("dn,dn->d", grads, v)[None]
    f0u = (u @ f0)[None]  # (1, D): each direction's projected value at the base
    scale_f = np.array([float(np.max(np.abs(f0u), initial=0.0))])
    if options.method == "taylor":
        return _taylor_variable(var, name, target, f0u, claim, v, u, scale_f, options), v
    report = _compare(target, name, var, options, claim, f0, f0u, scale_f, v, u)
    report.evaluations += weighing
    _test_cotangents(report, target, name, grads, basis, rng, var, f0, options)
    return report, v


def _test_cotangents(report, target, name, grads, basis, rng, var, f0, options) -> None:
    """A VJP not linear in its cotangent (see `cotangents`) fails every direction: the
    directions do not say which input element it is wrong at."""
    bad, report.cotangent = cotangent_test(lambda w: target.vjp(name, w), grads, rng,
                                           target.dtype, basis, nondet_tol(target))  # fmt: skip
    if report.cotangent is not None:
        report.verdicts[:], report.reasons[:] = FAIL, report.cotangent["reason"]
        report.diagnosis = diagnose(report, var, f0, options)


RESOLVED_ROW = 1e8  # an output is weighed by its size only where its change over the first
# step is this many ulps of it: its own rounding then stays far below the tolerance


def _row_weights(var, v, f0) -> tuple[np.ndarray, int]:
    """Beyond EACH_ROW outputs, one u a direction: each output whose change the first step
    resolves is weighted by the inverse of its size along the directions (a central
    difference, two evaluations a direction), so that a small output counts as much as a
    large one in uᵀJv; the others keep the largest's weight (a constant output, or one
    whose size swamps its change, would only add rounding). Returns the weights and the
    evaluations taken."""
    count = len(v)
    x = var.base.reshape(-1)
    h = S.START * max(1.0, float(np.max(np.abs(x), initial=0.0)))
    along = var.along_directions(v)
    steps = np.full(count, h)
    with np.errstate(all="ignore"):
        up, down = along(np.arange(count), steps), along(np.arange(count), -steps)
        change = np.abs(up - down)
        size = np.where(np.isfinite(change), change, 0.0).max(axis=1) / (2 * h)
        values = np.maximum(np.abs(up), np.abs(down))
        rounding = np.where(np.isfinite(values), values, np.inf).max(axis=1) * S.EPS
    top = float(size.max(initial=0.0))
    if not top > 0:
        return np.ones(f0.size), 2 * count
    resolved = size * 2 * h >= RESOLVED_ROW * rounding
    return np.where(resolved & (size > 0), 1.0 / np.maximum(size, 1e-300), 1.0 / top), 2 * count


def _project_rows(target, name, var, options, f0, v, rng) -> VariableReport:
    """Each output's directional derivative along each direction: J v (m, D), the claim's
    rows from one VJP an output, the numeric side from the same evaluations of f."""
    m = f0.size
    rows = np.stack([target.vjp(name, np.eye(m)[i]) for i in range(m)])  # the claimed J
    shape = tuple(target.output_shape(name))  # (an output (3, 3) is named (0, 2), not (2,))
    shape = shape if int(np.prod(shape)) == m else (m,)
    report = _compare(target, name, var, options, rows @ v.T, f0, f0, f0, v, out_shape=shape)
    _test_cotangents(report, target, name, rows, None, rng, var, f0, options)
    return report


def _compare(target, name, var, options, claim, f0, base, scale, v, u=None, out_shape=()):
    """The claim (m, D) against the numeric derivatives of f along the directions ``v``
    (of u·f with ``u`` (D, m): then m = 1): by the complex step where f takes one, else by
    the ladder; ``f0`` is f at the point, ``base`` what is differentiated there, (m,) or
    per direction (1, D), ``scale`` the outputs' scale for the tolerances."""
    x = var.base.reshape(-1)
    count = claim.shape[1]
    tol = Tolerance.default(target.dtype, options.atol, options.rtol)
    start = _first_steps(x, count)
    options.need_complex_step(var.complex_batch is not None)
    if var.complex_batch is not None and options.method in ("auto", "complex"):
        numeric = complex_step(var.along_directions(v, True, u), base, count, start / S.START)
        rest = np.nonzero(~numeric.complex_step)[0]
    else:
        numeric = S.Numeric.empty(claim.shape[0], count)
        rest = np.arange(count)
    if rest.size:
        accuracy = tol.of(claim, claim, scale, x)
        at_rest = base if base.ndim == 1 else base[:, rest]
        along = var.along_directions(v, project=u)
        climbed = ladder(along, at_rest, rest, start[rest], accuracy[:, rest], claim[:, rest])
        numeric.merge(rest, climbed)
    tau, accuracy = tol.bounds(
        claim, numeric.estimate, scale, x, numeric.complex_step, numeric.error
    )
    verdicts, reasons = judge(
        claim, numeric, tau, strict=True, accuracy=accuracy, given=tol.atol is not None
    )
    # A kink along a direction fails, whatever the claim's projection: a subgradient of one
    # element can hide an error in another (between the one-sided derivatives or not, which
    # their estimates' error decides at the ends: a right claim was "not a subgradient").
    kinked = numeric.kind == S.KINK
    verdicts[kinked], reasons[kinked] = FAIL, STRICT_KINK
    report = _report(name, target, claim, numeric, tau, verdicts, reasons, options, out_shape)
    report.evaluations = numeric.evaluations
    if not report.ok:
        report.diagnosis = diagnose(report, var, f0, options)
    return report


def _first_steps(x: np.ndarray, count: int) -> np.ndarray:
    return np.full(count, S.START * max(1.0, float(np.max(np.abs(x), initial=0.0))))


def _report(
    name, target, claim, numeric, tau, verdicts, reasons, options, out_shape=()
) -> VariableReport:
    count = claim.shape[1]
    return VariableReport(
        name=name,
        out_shape=out_shape,
        in_shape=(count,),
        analytic=claim,
        numeric=numeric.estimate,
        error=numeric.error,
        tolerance=tau,
        verdicts=verdicts,
        reasons=reasons,
        left=numeric.left,
        right=numeric.right,
        step=numeric.step,
        complex_step=numeric.complex_step,
        allow_undecided=options.allow_undecided,
        unused=not np.any(claim) and not np.any(np.nan_to_num(numeric.estimate)),
    )


# Below the smallest element's scale, the Taylor test reads rate 2 where its curvature
# (1/x² at 1e-9: 1e18) swamps an error along the same random direction in any other
# element: a rate 2 read only there passes for a single-element input, and is undecided
# otherwise (a 1e-3 error beside x = 1e-9 passed; so did 1001 for 1000 beside log(x0) at
# x0 = 1e-9 when elements of like size counted as safe, QA round 24).
SCALES_APART = (
    "the residual falls at rate 2 only at steps below the point's smallest element, whose "
    "curvature can hide an error in the other elements along a random direction: "
    "check without --method taylor"
)


def _taylor_variable(var, name, target, f0u, claim, v, u, scale, options):
    """The Taylor test along each direction: the rate decides, no step is chosen."""
    count = claim.shape[1]
    base = var.base.reshape(-1)
    tol = Tolerance.default(target.dtype, options.atol, options.rtol)
    tau = tol.of(claim, claim, scale, base)
    start = _first_steps(base, count)
    verdicts = np.full((1, count), UNDECIDED, dtype=np.int8)
    reasons = np.zeros((1, count), dtype=np.int8)
    numeric = S.Numeric.empty(1, count)
    tables = []
    evaluations = 0
    nonzero = np.abs(base[base != 0])
    finer_start = S.START * float(nonzero.min()) if nonzero.size else np.inf
    alone = base.size == 1  # (no other element whose error the curvature could hide)
    for d in range(count):

        def along(steps, d=d):
            points = base[None] + steps[:, None] * v[d][None]
            values = var.batch(points.reshape(len(steps), *var.base.shape))
            return np.asarray(values).reshape(len(steps), -1) @ u[d]

        result = taylor(along, float(f0u[0, d]), float(claim[0, d]), float(start[d]) * 64,
                        float(tau[0, d]))  # fmt: skip
        evaluations += len(result.rows)
        if result.verdict != "pass" and finer_start < float(start[d]):
            # Rate 1 (or nan) at steps wider than the point's smallest element: log or 1/x
            # at x = 1e-9, not yet quadratic there (QA round 23): halved from that element's
            # scale, a right derivative reads rate 2; a wrong one still reads rate 1 there.
            finer = taylor(along, float(f0u[0, d]), float(claim[0, d]), finer_start * 64,
                           float(tau[0, d]))  # fmt: skip
            evaluations += len(finer.rows)
            if finer.verdict == "pass" and finer.rate >= 1.7:  # a rate read, not rounding
                result = finer
                if not alone:  # the small element's curvature can hide another's error
                    result.verdict = "undecided"
                    result.message = SCALES_APART
        tables.append(result.to_dict())
        verdicts[0, d] = {"pass": PASS, "fail": FAIL}.get(result.verdict, UNDECIDED)
        reasons[0, d] = RULE if result.verdict == "fail" else 0
        numeric.estimate[0, d] = claim[0, d] + (result.slope if result.verdict == "fail" else 0)
        numeric.error[0, d] = 0.0
        numeric.kind[0, d] = S.SMOOTH
    report = _report(name, target, claim, numeric, tau, verdicts, reasons, options)
    report.evaluations = evaluations
    verdict = report.verdict
    message = {
        "pass": "the Taylor remainder falls at rate 2 along every direction",
        "fail": "the Taylor remainder falls at rate 1 along some direction: the derivative "
        "is wrong",
    }.get(verdict, "the Taylor test could not read a rate along some direction")
    report.diagnosis = Diagnosis("taylor" if verdict == "pass" else (
        "rule" if verdict == "fail" else "undecided"), message, {"taylor": tables})  # fmt: skip
    return report
