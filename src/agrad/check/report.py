"""Plain report objects: what a gradient check found, each element's verdict included.

They own their serialisation (``to_dict`` for JSON, ``rows`` for CSV); rendering tables
is the CLI's job, and nothing downstream recomputes a verdict. `agrad.autograd.gradcheck`
raises or returns from the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .labels import index_label
from .serial import json_number, to_json
from .verdict import FAIL, KINK, REASONS, STRICT_KINK, SUBGRADIENT, UNDECIDED, VERDICTS

WORST = 5  # elements listed per variable unless all are asked for
KINKS = 20


def _unravel(flat: int, shape: tuple) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()


@dataclass
class Element:
    """One compared entry of a Jacobian (or Hessian): where, both values, the verdict."""

    output_index: tuple[int, ...]
    input_index: tuple[int, ...]
    analytic: float
    numeric: float
    abs_error: float
    rel_error: float
    one_sided: tuple[float, float] | None = None  # (left, right) derivatives at a kink
    verdict: str = "pass"
    reason: str = ""
    step: float = 0.0
    error_estimate: float = 0.0
    tolerance: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        item = {
            "output_index": list(self.output_index),
            "input_index": list(self.input_index),
            "analytic": json_number(self.analytic),
            "numeric": json_number(self.numeric),
            "abs_error": json_number(self.abs_error),
            "rel_error": json_number(self.rel_error),
            "verdict": self.verdict,
            "reason": self.reason,
            "step": json_number(self.step),
            "error_estimate": json_number(self.error_estimate),
            "tolerance": json_number(self.tolerance),
        }
        if self.one_sided is not None:
            item["one_sided"] = [json_number(self.one_sided[0]), json_number(self.one_sided[1])]
        return item


@dataclass
class Diagnosis:
    """Why a variable did not pass, with the evidence: one of "rule", "step",
    "precision", "kink", "not a subgradient", "jump", "undecided"."""

    kind: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, **self.evidence}


@dataclass
class ExpectReport:
    """A hand-derived formula against autograd and finite differences."""

    formula: str
    value: np.ndarray
    analytic: np.ndarray
    numeric: np.ndarray
    formula_vs_autograd: bool  # where autograd is smooth (two subgradients may differ)
    formula_vs_numeric: bool
    autograd_vs_numeric: bool
    left: np.ndarray | None = None  # one-sided derivatives where the point is a kink (else nan)
    right: np.ndarray | None = None
    undecided: bool = False  # neither failed against finite differences, which could not decide
    # (out, in) elements where the formula fails against finite differences or disagrees
    # with autograd where it is smooth; its largest distance from finite differences
    failing: np.ndarray | None = None
    max_abs_error: float = 0.0

    @property
    def failures(self) -> int:
        return 0 if self.failing is None else int(np.count_nonzero(self.failing))

    @property
    def ok(self) -> bool:
        return self.formula_vs_autograd and self.formula_vs_numeric and self.autograd_vs_numeric

    def verdict(self) -> str:
        """Which of the three disagree, in words."""
        if self.ok:
            return "formula, autograd and finite differences agree"
        if self.undecided:
            if self.formula_vs_autograd:
                return "the formula and autograd agree; finite differences cannot decide here"
            return (
                "the formula disagrees with autograd; finite differences cannot decide which "
                "is right here"
            )
        if self.autograd_vs_numeric and not self.formula_vs_autograd:
            return "the formula disagrees with autograd and finite differences (which agree)"
        if self.formula_vs_numeric and not self.formula_vs_autograd:
            return "autograd disagrees with the formula and finite differences (which agree)"
        if self.formula_vs_autograd and not self.autograd_vs_numeric:
            return "finite differences disagree with the formula and autograd (which agree)"
        return "all three disagree"

    def to_dict(self) -> dict[str, Any]:
        entry = {
            "formula": self.formula,
            "ok": self.ok,
            "verdict": self.verdict(),
            "failures": self.failures,
            "max_abs_error": json_number(self.max_abs_error),
            "formula_value": to_json(self.value),
            "autograd": to_json(self.analytic),
            "numeric": to_json(self.numeric),
        }
        if self.left is not None and np.isfinite(self.left).any():
            entry["one_sided"] = [to_json(self.left), to_json(self.right)]
        return entry


LEANING = 2.0  # error estimates: an undecided claim beyond them is not allowed (`leaning`)


@dataclass
class VariableReport:
    """Every compared element of one variable, with its verdict (arrays are (m, n):
    outputs by input elements; for --fast, one row by the random directions)."""

    name: str
    out_shape: tuple[int, ...]
    in_shape: tuple[int, ...]
    analytic: np.ndarray
    numeric: np.ndarray
    error: np.ndarray  # the numeric side's error estimate
    tolerance: np.ndarray
    verdicts: np.ndarray  # int8 codes of VERDICTS
    reasons: np.ndarray  # int8 codes of REASONS
    left: np.ndarray
    right: np.ndarray
    step: np.ndarray  # (n,): the step of each element's estimate (0: complex step)
    complex_step: np.ndarray  # (n,) bool
    allow_undecided: bool = False
    evaluations: int = 0
    unused: bool = False
    analytic64: np.ndarray | None = None  # a float32 claim's float64 twin
    dtype: str = "float64"  # the claim's precision
    adaptive_step: np.ndarray | None = None  # (n,) with a forced step: what the ladder chose
    expect: ExpectReport | None = None
    diagnosis: Diagnosis | None = None
    direction_tests: list = field(default_factory=list)
    # output rows whose claim the gradients measured around the point certified (kinks in
    # several coordinates: within their hull, see `hull`)
    certified_rows: list = field(default_factory=list)
    cotangent: dict | None = None  # a VJP not linear in its cotangent (see `cotangents`)
    undefined: np.ndarray | None = None  # (m,): outputs nan at the point itself

    # ---- counts and summaries ------------------------------------------------------------

    def count(self, verdict: int) -> int:
        return int(np.count_nonzero(self.verdicts == verdict))

    @property
    def failures(self) -> int:
        """Elements that failed: autograd's against finite differences, or a formula's
        (--expect) against either (QA round 27: a wrong formula's check had 0 failures)."""
        failing = self.verdicts == FAIL
        if self.expect is not None and self.expect.failing is not None:
            failing = failing | self.expect.failing.reshape(failing.shape)
        return int(np.count_nonzero(failing))

    @property
    def undecided(self) -> int:
        return self.count(UNDECIDED)

    @property
    def compared(self) -> int:
        return int(self.verdicts.size)

    @property
    def leaning(self) -> int:
        """Undecided elements whose claim is more than `LEANING` error estimates (beyond
        the tolerance) from the finite differences: more likely wrong than right, and not
        passed by allow_undecided (QA round 27: a sign-flipped element beside a loss of
        1e12, 2.2 estimates away, passed with it)."""
        with np.errstate(invalid="ignore"):
            far = np.abs(self.analytic - self.numeric) > self.tolerance + LEANING * self.error
        if self.undefined is not None:  # (nor where f itself is nan at the point: no
            far |= self.undefined.reshape(-1, 1)  # gradient is right there, QA round 27;
            # an overflow's inf is exp(710)'s, whose gradient is inf too)
        return int(np.count_nonzero((self.verdicts == UNDECIDED) & far))

    @property
    def ok(self) -> bool:
        allowed = self.allow_undecided and not self.leaning
        bad = self.failures or (self.undecided and not allowed)
        return not bad and (self.expect is None or self.expect.ok)

    @property
    def verdict(self) -> str:
        """The variable's verdict: fail, undecided, kink (passed, with kinks) or pass."""
        if self.failures or (self.expect is not None and not self.expect.ok):
            return "fail"
        if self.undecided:
            return "undecided"
        return "kink" if self.count(KINK) else "pass"

    def _abs_error(self) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.abs(self.analytic - self.numeric)

    def _considered(self) -> np.ndarray:
        return (self.verdicts != KINK) & np.isfinite(self.numeric)

    @property
    def measured(self) -> int:
        """How many elements have an error to measure (not kinks, a finite numeric side)."""
        return int(self._considered().sum())

    @property
    def max_abs_error(self) -> float:
        err = self._abs_error()[self._considered()]
        return float(np.nan_to_num(err, nan=np.inf).max(initial=0.0))

    @property
    def max_rel_error(self) -> float:
        with np.errstate(all="ignore"):
            rel = self._abs_error() / np.maximum(np.abs(self.numeric), self.tolerance)
        rel = rel[self._considered()]
        return float(np.nan_to_num(rel, nan=np.inf).max(initial=0.0))

    @property
    def error_estimate(self) -> float:
        err = self.error[(self.verdicts != KINK) & (self.verdicts != UNDECIDED)]
        return float(err.max(initial=0.0))

    def element(self, i: int, j: int) -> Element:
        abs_err = float(self._abs_error()[i, j])
        sided = self.verdicts[i, j] == KINK or self.reasons[i, j] in (STRICT_KINK, SUBGRADIENT)
        sided = sided and bool(np.isfinite(self.left[i, j]))
        return Element(
            _unravel(i, self.out_shape),
            _unravel(j, self.in_shape),
            float(self.analytic[i, j]),
            float(self.numeric[i, j]),
            abs_err,
            self._relative(abs_err, i, j),
            (float(self.left[i, j]), float(self.right[i, j])) if sided else None,
            VERDICTS[self.verdicts[i, j]],
            REASONS[int(self.reasons[i, j])],
            float(self.step[j]),
            float(self.error[i, j]),
            float(self.tolerance[i, j]),
        )

    def _relative(self, abs_err: float, i: int, j: int) -> float:
        numeric = float(self.numeric[i, j])
        if not np.isfinite(numeric):
            return float("inf")
        return abs_err / max(abs(numeric), float(self.tolerance[i, j]), 1e-300)

    def ranked(self) -> np.ndarray:
        """Flat indices: failures first, then undecided, then the largest errors of the
        rest; kinks that passed are listed apart."""
        err = np.nan_to_num(self._abs_error(), nan=1e299, posinf=1e299)
        score = np.where(self.verdicts == FAIL, 1e300 + err, err)
        score = np.where(self.verdicts == UNDECIDED, 1e300 + err * 0.5, score)
        score = np.where(self.verdicts == KINK, -1.0, score)
        order = np.argsort(-score, axis=None, kind="stable")
        return order[score.flat[order] >= 0]

    @property
    def worst(self) -> list[Element]:
        shape = self.verdicts.shape
        return [self.element(*np.unravel_index(o, shape)) for o in self.ranked()[:WORST]]

    @property
    def kinks(self) -> list[Element]:
        rows, cols = np.nonzero(self.verdicts == KINK)
        return [self.element(i, j) for i, j in zip(rows[:KINKS], cols[:KINKS], strict=True)]

    def elements(self) -> list[Element]:
        """Every compared element, in order."""
        m, n = self.verdicts.shape
        return [self.element(i, j) for i in range(m) for j in range(n)]

    # ---- serialisation -------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        return {name: self.count(code) for code, name in enumerate(VERDICTS)}

    def to_dict(self, all_elements: bool = False) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "ok": self.ok,
            "verdict": self.verdict,
            "max_abs_error": json_number(self.max_abs_error),
            "max_rel_error": json_number(self.max_rel_error),
            "failures": self.failures,
            "undecided": self.undecided,
            "compared": self.compared,
            "counts": self.counts(),
            "unused": self.unused,
            "evaluations": self.evaluations,
            "evaluations_per_element": json_number(self.evaluations / max(self.compared, 1)),
            "error_estimate": json_number(self.error_estimate),
            "worst": [e.to_dict() for e in self.worst],
            "kinks": [e.to_dict() for e in self.kinks],
        }
        if self.diagnosis is not None:
            entry["diagnosis"] = self.diagnosis.to_dict()
        if self.expect is not None:
            entry["expect"] = self.expect.to_dict()
        if all_elements:
            entry["elements"] = [e.to_dict() for e in self.elements()]
        return entry

    def rows(self, all_elements: bool = False) -> list[Element]:
        """The elements a CSV lists: all of them, or the worst and the kinks."""
        if all_elements:
            return self.elements()
        return self.worst + self.kinks


COLUMNS = ("variable", "output_index", "input_index", "analytic", "numeric", "abs_error",
           "rel_error", "verdict", "reason", "step", "error_estimate")  # fmt: skip


@dataclass
class CheckReport:
    """A whole check: per-variable reports and the settings used."""

    variables: dict[str, VariableReport]
    method: str
    eps: float | None
    atol: float | None
    rtol: float
    order: int = 1
    fast: bool = False
    dtype: str = "float64"
    evaluations: int = 0  # function evaluations the numeric side used
    anomaly: Any = None  # where a nan or inf first appeared (agrad.lang.anomaly.Anomaly)

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.variables.values())

    def to_dict(self, all_elements: bool = False) -> dict[str, Any]:
        compared = sum(v.compared for v in self.variables.values())
        return {
            "ok": self.ok,
            "variables": {n: v.to_dict(all_elements) for n, v in self.variables.items()},
            "method": self.method,
            "eps": None if self.eps is None else json_number(self.eps),
            "atol": "relative" if self.atol is None else json_number(self.atol),
            "rtol": json_number(self.rtol),
            "order": self.order,
            "fast": self.fast,
            "dtype": self.dtype,
            "evaluations": self.evaluations,
            "evaluations_per_element": json_number(self.evaluations / max(compared, 1)),
            "anomaly": None if self.anomaly is None else self.anomaly.to_dict(),
        }

    def rows(self, all_elements: bool = False) -> list[list[Any]]:
        """CSV rows (see COLUMNS), one per listed element."""
        out = []
        for name, v in self.variables.items():
            for e in v.rows(all_elements):
                out.append([name, index_label(e.output_index), index_label(e.input_index),
                            e.analytic, e.numeric, e.abs_error, e.rel_error, e.verdict,
                            e.reason, e.step, e.error_estimate])  # fmt: skip
        return out
