"""Golden values: each suite case's output and gradients, kept beside the suite to catch drift.

``checks.toml`` keeps them in ``checks.golden.json``: ``{case name: {"value": ...,
"grads": {name: ...}}}`` for a single-number output, ``"jacobian"`` in place of
``"grads"`` otherwise, and ``"hand"``: a case's hand-derived gradients (``expect``, or
``grad`` beside autograd). A value that moved by more than ``atol + rtol * |old|``
is a regression, reported as which value (the output, or the gradient of which
variable), which element, old and new, and the tolerance.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AgradValueError
from ..files import read_bytes, write_output
from .labels import index_label

# Defaults per case dtype, where a suite's [golden] table or a case's golden = {...} does not
# set them: rtol, atol, and ROW, the part of an array's largest |old| every element of it is
# allowed (an element computed from terms as large as its row rounds to ulps of the row).
# float32 at float64's rtol 1e-7, one float32 ulp, flagged a summation order's rounding as
# a regression (dot for sum of a product: 1.1e-6 of the output, 3e-5 of small gradient
# elements; QA round 27).
# (ROW is 64 ulps of the dtype: 1e-10 in float64, 450,000 of them, let an element of 0.02
# beside 2e8 move by 90% unseen, QA round 29.)
DEFAULTS = {
    "float64": (1e-7, 1e-9, 64 * 2.0**-52),
    "float32": (1e-5, 1e-7, 64 * 2.0**-23),
    "float16": (1e-2, 1e-4, 1e-2),
}
CASE_ATOL = 1e-2  # the part of a case's own check atol that is its golden atol (see for_case)
MAX_GOLDEN_BYTES = 256 * 2**20


@dataclass
class Tolerance:
    rtol: float | None = None  # None: the case dtype's default
    atol: float | None = None
    row: float = 0.0  # (set by `for_case` where neither is given)

    def for_case(self, dtype: str, atol: float | None) -> Tolerance:
        """The tolerance a case is compared at: what is given, and its dtype's defaults
        for the rest. A case's own check ``atol`` raises the default atol to `CASE_ATOL` of
        it: it says below what its gradient is noise (a least-squares gradient at the fit,
        5e-8 from terms of 1e7, moved by 4e-8 when summed in a loop and was a regression,
        QA round 27); all of it let an element of 1.2e-3 move by 50% beside an atol of
        1e-3 (QA round 29)."""
        rtol, base, row = DEFAULTS.get(dtype, DEFAULTS["float64"])
        given = self.rtol is not None or self.atol is not None
        if atol is not None:
            base = max(base, CASE_ATOL * float(atol))
        return Tolerance(
            rtol if self.rtol is None else self.rtol,
            base if self.atol is None else self.atol,
            0.0 if given else row,
        )

    def __str__(self) -> str:
        row = f", at least {self.row:g}·max|old|" if self.row else ""
        return f"atol {self.atol:g} + rtol {self.rtol:g}·|old|{row}"


@dataclass
class Comparison:
    ok: bool
    worst: float  # the largest absolute change
    messages: list[str]


def golden_file(suite: str | Path) -> Path:
    p = Path(suite)
    return p.with_name(p.stem + ".golden.json")


def read(path: Path) -> dict[str, Any]:
    """The recorded values, or {} when there is no golden file yet."""
    if not path.exists():
        return {}
    data = read_bytes(path, "the golden values", MAX_GOLDEN_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AgradValueError(
            f"{path}: the golden values are not UTF-8 text; fix the file or rewrite it with "
            "--update-golden"
        ) from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        raise AgradValueError(
            f"{path}: the golden values are not valid JSON{where}; fix the file or rewrite it "
            "with --update-golden"
        ) from None
    if not isinstance(data, dict):
        raise AgradValueError(
            f"{path}: the golden values must be a JSON object of cases; rewrite it with "
            "--update-golden"
        )
    return data


def write(path: Path, values: dict[str, Any], protected: list[str]) -> None:
    """Atomically (see agrad.files): a reader never sees a half-written file."""
    text = json.dumps(values, indent=2, sort_keys=True) + "\n"
    write_output(path, text, "--update-golden", protected=protected)


def current(session) -> dict[str, Any]:
    """What a case records: its output and the gradients (or Jacobians) of its variables."""
    if session.run().output._array.size == 1:
        evaluation = session.evaluate()
        return {
            "value": np.asarray(evaluation.value).tolist(),
            "grads": {n: v.grad.tolist() for n, v in evaluation.variables.items()},
        }
    value, blocks = session.jacobian()
    return {
        "value": np.asarray(value).tolist(),
        "jacobian": {n: v.grad.tolist() for n, v in blocks.items()},
    }


def of_report(report: Any, target: Any) -> dict[str, Any]:
    """What a case of a Python function records: its output and the claimed gradients
    (Jacobians for a non-scalar output), from the check's own report."""
    name = next(iter(report.variables))
    var = target.function(name)
    value = (var if var.fallback is None else var.fallback()).value()
    value = value.reshape(target.output_shape(name))
    key = "grads" if value.size == 1 else "jacobian"
    # The claim itself, not the report's rows: under --fast those are projections along
    # random directions (QA round 13: they were recorded as the gradient).
    claimed = {}
    for n in report.variables:
        shape = target.output_shape(n) + target.function(n).base.shape
        claimed[n] = np.asarray(target.claim(n)).reshape(shape).tolist()
    return {"value": value.tolist(), key: claimed}


def with_hand(recorded: dict[str, Any], report: Any) -> dict[str, Any]:
    """``recorded`` with the case's hand-derived gradients (``expect =``, or ``grad =``
    beside autograd), which drift as the code they come from changes: within the check's
    tolerance, only the golden values see it (QA round 13: a 1e-6 drift "matched")."""
    hand = {n: np.asarray(v.expect.value).tolist() for n, v in report.variables.items()
            if getattr(v, "expect", None) is not None}  # fmt: skip
    return {**recorded, "hand": hand} if hand else recorded


def compare(now: dict[str, Any], then: Any, tol: Tolerance) -> Comparison:
    """Each current value against its recorded one; a message for each that changed."""
    if not isinstance(then, dict):
        raise AgradValueError(
            f"its golden entry is {type(then).__name__}, not an object of values; rewrite the "
            "golden file with --update-golden"
        )
    messages: list[str] = []
    worst = 0.0
    for label, new, old in _pairs(now, then):
        if old is None:
            messages.append(
                f"{label} has no golden value (the case changed, or the golden file predates "
                "it: --update-golden records it)"
            )
            worst = math.inf
            continue
        a = np.asarray(new, dtype=np.float64)
        b = _numbers(old, label)
        if a.shape != b.shape:
            messages.append(f"{label} changed shape from {tuple(b.shape)} to {tuple(a.shape)}")
            worst = math.inf
            continue
        allowed = tol.atol + tol.rtol * np.abs(b)
        if tol.row and b.size:
            allowed = np.maximum(allowed, tol.row * np.nan_to_num(np.abs(b), posinf=0.0).max())
        changed = ~(np.abs(a - b) <= allowed)  # nan on either side
        same_nan = np.isnan(a) & np.isnan(b)
        changed &= ~same_nan
        diff = np.where(same_nan, 0.0, np.abs(a - b))
        worst = max(worst, float(np.nan_to_num(diff, nan=math.inf).max(initial=0.0)))
        if changed.any():
            excess = np.where(changed, np.nan_to_num(diff, nan=math.inf), -1.0)
            at = np.unravel_index(int(np.argmax(excess)), a.shape) if a.shape else ()
            change = f"from {_num(b[at])} to {_num(a[at])} (by {_num(diff[at])}, beyond {tol})"
            if a.shape:
                count = int(changed.sum())
                change = (
                    f"at {count} of {a.size} element(s); the most at {index_label(at)}: {change}"
                )
            messages.append(f"{label} changed {change}")
    return Comparison(not messages, worst, messages)


def _pairs(now: dict, then: dict):
    yield "the output", now["value"], then.get("value")
    groups = (("grads", "the gradient of"), ("jacobian", "the Jacobian of"),
              ("hand", "the hand-derived gradient of"))  # fmt: skip
    for group, what in groups:
        recorded = then.get(group, {})
        if not isinstance(recorded, dict):
            raise AgradValueError(
                f"its golden {group!r} is {type(recorded).__name__}, not an object; rewrite "
                "the golden file with --update-golden"
            )
        for name, value in now.get(group, {}).items():
            yield f"{what} {name}", value, recorded.get(name)


def _numbers(value: Any, label: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise AgradValueError(
            f"its golden value of {label} is not numbers; rewrite the golden file with "
            "--update-golden"
        ) from None
    return array


def _num(v: Any) -> str:
    return f"{float(v):.10g}"
