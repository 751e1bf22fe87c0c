"""Why a variable did not pass, with the evidence — the verdict explains itself.

A failure is one of: the rule is wrong (shown by the Taylor remainder along the worst
element, which falls at rate 1 instead of 2), the forced step was wrong (the adaptive
steps agree with the claim), a precision problem (the claim is right in float64 and not
precise enough in float32), a kink (under --strict) or a claim that is not a subgradient
there; an undecided variable says what kept every step from deciding.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from . import steps as S
from .labels import index_label
from .report import Diagnosis
from .taylor import taylor
from .verdict import (
    CLAIM_NONFINITE,
    COTANGENT,
    FAIL,
    INACCURATE,
    JUMP,
    KINK_CLOSE,
    NOISE,
    NONFINITE,
    PASS,
    PRECISION,
    REENTRANT,
    ROUNDED,
    ROW_ROUNDED,
    RULE,
    SEVERAL_KINKS,
    STEP,
    STRICT_KINK,
    SUBGRADIENT,
    UNCONFIRMED,
    UNDECIDED,
)  # fmt: skip

if TYPE_CHECKING:
    from .options import CheckOptions
    from .report import VariableReport
    from .targets import Variable


def _g(v: float) -> str:
    return f"{float(v):.6g}"


def diagnose(
    report: VariableReport, var: Variable, f0: np.ndarray, options: CheckOptions
) -> Diagnosis:
    failing = report.verdicts == FAIL
    if failing.any():
        reason = Counter(report.reasons[failing].tolist()).most_common(1)[0][0]
        mask = failing & (report.reasons == reason)
    elif report.expect is not None and not report.expect.ok:
        return Diagnosis("expect", report.expect.verdict())
    else:
        mask = report.verdicts == UNDECIDED
        reason = Counter(report.reasons[mask].tolist()).most_common(1)[0][0]
    i, j = _worst(report, mask)
    where = _where(report, i, j, options.fast)
    count = int(mask.sum())
    a, n = report.analytic[i, j], report.numeric[i, j]
    builder = _BUILDERS.get(reason, _rule)
    return builder(report, var, f0, options, i, j, where, count, a, n)


def _worst(report: VariableReport, mask: np.ndarray) -> tuple[int, int]:
    with np.errstate(all="ignore"):
        err = np.nan_to_num(np.abs(report.analytic - report.numeric), nan=np.inf)
    flat = int(np.argmax(np.where(mask, err, -1.0)))
    i, j = np.unravel_index(flat, mask.shape)
    return int(i), int(j)


def _where(report: VariableReport, i: int, j: int, fast: bool = False) -> str:
    index = report.element(i, j)
    if fast:  # (the report's elements are random directions, not elements of the input)
        at = f"direction {j} of {report.name}"
        return f"output {index_label(index.output_index)}, {at}" if index.output_index else at
    label = index_label(index.input_index)
    if index.output_index:
        label = f"output {index_label(index.output_index)}, {report.name}[{label}]"
    else:
        label = f"{report.name}[{label}]" if index.input_index else report.name
    return label


def _rule(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    message = (
        f"the rule is wrong: at {where} the gradient is {_g(a)}, finite differences give "
        f"{_g(n)} (error estimate {report.error[i, j]:.2g}); {count} of {report.compared} "
        "element(s) disagree"
    )
    evidence = {"index": [i, j]}
    if report.in_shape and report.out_shape is not None and not options.fast:
        result = _taylor_along(var, f0, i, j, a, float(report.tolerance[i, j]))
        evidence["taylor"] = result.to_dict()
        if result.verdict == "fail":
            message += f"; along it the Taylor residual falls at rate {result.rate:.2f}, not 2"
    return Diagnosis("rule", message, evidence)


def _taylor_along(var, f0, i, j, slope, tolerance):
    base = var.base.reshape(-1)

    def along(steps):
        points = np.repeat(base[None], len(steps), axis=0)
        points[:, j] += steps
        values = var.batch(points.reshape(len(steps), *var.base.shape))
        return np.asarray(values).reshape(len(steps), -1)[:, i]

    first = 2.0**-4 * max(1.0, abs(float(base[j])))
    return taylor(along, float(f0[i]), float(slope), first, tolerance)


def _step(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    forced = float(report.step[j])
    adaptive = float(report.adaptive_step[j]) if report.adaptive_step is not None else 0.0
    size = "too large" if forced > adaptive else "too small"
    return Diagnosis(
        "step",
        f"the step is {size} for this function: with h = {forced:.3g}, finite differences "
        f"give {_g(n)} at {where} where the gradient is {_g(a)}; the adaptive steps "
        f"({options.advice('adaptive')}) agree with it",
        {"step": forced, "adaptive_step": adaptive},
    )


def _precision(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    wide = report.analytic64
    with np.errstate(all="ignore"):
        err32 = float(np.nanmax(np.abs(report.analytic - report.numeric)))
        err64 = float(np.nanmax(np.abs(wide - report.numeric))) if wide is not None else 0.0
    return Diagnosis(
        "precision",
        f"fails in {report.dtype}, passes in float64: the {report.dtype} gradient is off by "
        f"up to {err32:.3g} (at {where}: {_g(a)} vs {_g(n)}), its float64 twin by "
        f"{err64:.3g}; the rule is right, {report.dtype} rounding is not precise enough here",
        {"float32_max_abs_error": err32, "float64_max_abs_error": err64},
    )


def _kink(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    left, right = report.left[i, j], report.right[i, j]
    if options.fast:
        return Diagnosis(
            "kink",
            f"not differentiable along {count} random direction(s), where a fast check cannot "
            "judge the gradient (a subgradient of one element can hide an error in another; "
            f"check without {options.advice('fast')}): along {where} the one-sided "
            f"derivatives are {_g(left)} (left) and {_g(right)} (right), the gradient's "
            f"projection is {_g(a)}",
            {"one_sided": [float(left), float(right)]},
        )
    return Diagnosis(
        "kink",
        f"not differentiable at {count} element(s) ({options.advice('strict')}): at "
        f"{where} the one-sided derivatives are {_g(left)} (left) and {_g(right)} (right), "
        f"the gradient is {_g(a)}",
        {"one_sided": [float(left), float(right)]},
    )


def _subgradient(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    failed = [t for t in report.direction_tests if not t.ok]
    if failed:
        t = failed[0]
        return Diagnosis(
            "not a subgradient",
            f"at a kink the gradient is not a subgradient: along the direction "
            f"{np.round(t.direction, 3).tolist()} its slope is {_g(t.projected)}, the "
            f"one-sided directional derivatives are {_g(t.left)} and {_g(t.right)}",
            {"direction": t.direction.tolist(), "projected": t.projected,
             "one_sided": [t.left, t.right]},
        )  # fmt: skip
    left, right = report.left[i, j], report.right[i, j]
    return Diagnosis(
        "not a subgradient",
        f"at a kink the gradient is not between the one-sided derivatives: at {where} it is "
        f"{_g(a)}, the one-sided derivatives are {_g(left)} and {_g(right)}",
        {"one_sided": [float(left), float(right)]},
    )


def _jump(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    h = float(report.step[j])
    # from the left limit to the right one (the one-sided quotients add up to it), or to the
    # point's own value: sign(x)·3 at 0 jumps by 6 with both quotients 3/h (their difference,
    # read before, said 0; QA round 28)
    left, right = float(report.left[i, j]), float(report.right[i, j])
    size = max(abs(left + right), abs(left), abs(right)) * h
    # (at 0 the step is a subnormal ulp, over which any jump's quotient overflows)
    by = f"by about {_g(size)} " if np.isfinite(size) else ""
    return Diagnosis(
        "jump",
        f"the function jumps at {count} element(s): at {where} f changes {by}"
        f"within a step of {h:.3g} on one side (the one-sided quotients are "
        f"{_g(report.left[i, j])} and {_g(report.right[i, j])}): it has no derivative there, "
        f"so no gradient (here {_g(a)}) is right",
        {"jump": size, "step": h, "one_sided": [float(report.left[i, j]),
                                                float(report.right[i, j])]},
    )  # fmt: skip


def _nonfinite_claim(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    return Diagnosis(
        "non-finite gradient",
        f"the gradient is not finite at {count} element(s): at {where} it is {_g(a)} where "
        f"finite differences give {_g(n)}",
    )


def _undecided(report, var, f0, options, i, j, where, count, a, n, reason) -> Diagnosis:
    texts = {
        NONFINITE: "the function is not finite at the point or at every step tried on one "
        "side of it (overflow, or outside its domain)",
        NOISE: "rounding noise swamps every step: no finite difference is reliable",
        KINK_CLOSE: "a kink lies closer to the point than the smallest usable step: the "
        f"one-sided quotients still differ at h = {report.step[j]:.3g}",
        ROUNDED: "the gradient is off the exact derivative (complex step) by no more than "
        "the rounding a float64 backward at the size of f may leave (64 ulps of the largest "
        "|f|, which the chain rule's factors amplify): neither right nor wrong can be told",
        INACCURATE: f"the finite differences are not accurate enough: their error "
        f"estimate {report.error[i, j]:.3g} exceeds the tolerance {report.tolerance[i, j]:.3g}",
        ROW_ROUNDED: "the gradient is off the finite differences by no more than the "
        "rounding a float64 backward may leave in an element computed from terms as large as "
        f"its row's largest derivative ({_g(float(np.max(np.abs(report.analytic[i]))))}; 64 "
        "ulps of it): neither right nor wrong can be told. If this element is not computed "
        "from terms that large, it is wrong; scaling the inputs (features of similar size) "
        "lets the check decide",
        UNCONFIRMED: "the finite differences disagree with the gradient only at steps "
        f"larger than 1 (relative to a large |x|: here {report.step[j]:.3g}), and steps below "
        "1 do not confirm them (f may vary on a scale finer than those steps, or round too "
        "much at finer ones): neither right nor wrong can be told here",
        SEVERAL_KINKS: "f has kinks in several coordinates here; the gradient is within each "
        "coordinate's one-sided derivatives, but it is neither within the hull of the "
        "gradients measured around the point nor decided along the directions that would "
        "show it is outside (f is not resolved along them); check it a step away from the "
        "kinks",
    }
    text = texts.get(reason, "no step decides")
    if reason == INACCURATE:
        text += _resolved(report, options, f0)
    if reason in (INACCURATE, NOISE) and report.dtype != "float32" and S.in_float32(f0):
        text += (
            " (f's values are float32 numbers: it computes in float32 inside, where no step "
            "resolves a derivative to float64's tolerance; check a float64 version of f, "
            "whose gradient is the same rule)"
        )
    advice = options.advice("allow_undecided")
    undefined = report.undefined is not None and bool(np.any(report.undefined))
    atol = None  # (gradcheck has no allow_undecided: the atol that decides, QA round 34)
    if options.wording == "gradcheck" and options.atol is None and not report.leaning:
        atol = None if undefined else _atol_needed(report)
    if atol is not None:
        advice = (
            f"{ATOL_ADVICE.format(atol)} in gradcheck (the largest of their error estimates "
            "and distances from the claims), or check at another point"
        )
    if undefined:  # (no atol covers nan: QA round 34)
        advice = "f is nan at the point itself, where no gradient is right: check at another point"
    elif report.leaning:  # (not passed with allow_undecided: see VariableReport.leaning)
        advice = (
            f"{report.leaning} of them lean wrong (the gradient is more than twice their "
            "error estimate from the finite differences), which allowing undecided elements "
            "does not pass: check at another point"
            + (", or give an atol that covers them" if options.atol is None else "")
        )
    return Diagnosis(
        "undecided",
        f"undecided at {count} element(s), e.g. {where} (gradient {_g(a)}): {text}; {advice}",
        {"reason": reason} if atol is None else {"reason": reason, "atol": atol},
    )


def _atol_needed(report) -> float | None:
    """gradcheck's way to decide what the differences resolve only so far: an atol at least
    the undecided elements' error estimates and their distance from the claims (rounded
    up); None where any has no estimate an atol can cover (rounding noise, f not finite)."""
    mask = report.verdicts == UNDECIDED
    if not np.isin(report.reasons[mask], (INACCURATE, ROUNDED, ROW_ROUNDED)).all():
        return None
    with np.errstate(invalid="ignore"):
        gap = np.abs(report.analytic[mask] - report.numeric[mask])
        needed = float(np.nanmax(np.maximum(report.error[mask], gap), initial=0.0))
        needed = max(needed, passed_zeros_error(report))
    if not np.isfinite(needed) or needed <= 0:
        return None
    return rounded_up(needed)


ATOL_ADVICE = "an atol of {:.1g} or more decides them"


def rounded_up(value: float) -> float:
    digit = 10.0 ** np.floor(np.log10(value))  # (rounded down, it would not do)
    return float(np.ceil(value / digit) * digit)


def passed_zeros_error(report) -> float:
    """The largest error estimate of the zeros passed without an atol: f still along them,
    their 0 decided at a part of their row that a given atol replaces, so an atol below it
    leaves them undecided (a second derivative's zeros at 9e-14 beside the 4e-14 named)."""
    zeros = (report.verdicts == PASS) & ((report.analytic == 0) | (report.numeric == 0))
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(report.error[zeros], initial=0.0))


def _resolved(report, options, f0) -> str:
    """What rtol the differences do resolve the undecided elements to, where every claim
    agrees with them within their error and that is at most 1% of the element: a derivative
    far smaller than its output (a saturated tanh unit's 3e-8 beside tanh ≈ 1) is resolved
    to its output's rounding over the step only, and a looser rtol, said aloud, decides it.
    (Only such a derivative is called a saturated unit's: beside a max-pool's near-tie the
    steps are as short as the kink is near, QA round 36.)"""
    mask = (report.verdicts == UNDECIDED) & (report.reasons == INACCURATE)
    outputs = np.abs(np.asarray(f0, dtype=np.float64).reshape(-1, 1))
    with np.errstate(all="ignore"):
        size = np.maximum(np.abs(report.numeric[mask]), np.abs(report.analytic[mask]))
        agree = np.abs(report.analytic[mask] - report.numeric[mask]) <= report.error[mask]
        needed = float(np.max(report.error[mask] / size, initial=0.0))
        saturated = bool(np.all(size <= 1e-3 * np.broadcast_to(outputs, mask.shape)[mask]))
    if not (agree.all() and 0.0 < needed <= 1e-2):
        return ""
    rtol = float(f"{2 * needed:.0e}")
    why = (
        "as an output's rounding over the step allows when its derivative is far smaller "
        "than it, a saturated unit's"
        if saturated
        else "as far as steps short enough for f here can (a kink close to the point, or "
        "f's own rounding, limits them)"
    )
    return (
        f" (the claims agree with them to within that; they resolve these elements to "
        f"{needed:.1g} of themselves, {why}: "
        f"{options.advice('rtol').format(f'{rtol:g}')} decides them)"
    )


def _cotangent(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    found = report.cotangent or {}
    shape = var.base.shape  # (under --fast the report's elements are directions)
    element = index_label(np.unravel_index(found.get("element", 0), shape))
    at = f"{report.name}[{element}]" if shape else report.name
    return Diagnosis(
        "cotangent",
        "the backward is not linear in its cotangent (grad_output): with "
        f"{found.get('which', 'a random cotangent')} it gives "
        f"{_g(found.get('with_cotangent', np.nan))} at {at}, where the "
        "cotangent times the Jacobian it gives for one-hot cotangents is "
        f"{_g(found.get('expected', np.nan))}; multiply the gradient by grad_output (a "
        "backward that ignores it is right only for a loss used alone)",
        dict(found),
    )


def _reentrant(report, var, f0, options, i, j, where, count, a, n) -> Diagnosis:
    found = report.cotangent or {}
    return Diagnosis(
        "reentrant",
        "the backward is not reentrant: the same cotangent twice gave "
        f"{_g(found.get('with_cotangent', np.nan))} and {_g(found.get('again', np.nan))} "
        f"(nondet_tol {found.get('nondet_tol', 0.0):g}); a backward must be deterministic, "
        "or name the noise it has in nondet_tol",
        dict(found),
    )


_BUILDERS = {
    REENTRANT: _reentrant,
    COTANGENT: _cotangent,
    RULE: _rule,
    STEP: _step,
    PRECISION: _precision,
    STRICT_KINK: _kink,
    SUBGRADIENT: _subgradient,
    CLAIM_NONFINITE: _nonfinite_claim,
    JUMP: _jump,
    **{
        code: (lambda *args, code=code: _undecided(*args, code))
        for code in (
            NONFINITE,
            NOISE,
            KINK_CLOSE,
            INACCURATE,
            ROUNDED,
            ROW_ROUNDED,
            SEVERAL_KINKS,
            UNCONFIRMED,
        )  # fmt: skip
    },
}
