"""Plain report objects: what a gradient check found. Rendering is the CLI's job;
`agrad.autograd.gradcheck` raises or returns from the same objects."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Element:
    """One compared entry of a Jacobian (or Hessian): where, and both values."""

    output_index: tuple[int, ...]
    input_index: tuple[int, ...]
    analytic: float
    numeric: float
    abs_error: float
    rel_error: float
    one_sided: tuple[float, float] | None = None  # (left, right) derivatives at a kink


@dataclass
class VariableReport:
    """The verdict for one variable."""

    name: str
    ok: bool
    max_abs_error: float
    max_rel_error: float
    worst: list[Element] = field(default_factory=list)
    kinks: list[Element] = field(default_factory=list)  # non-differentiable points
    failures: int = 0
    compared: int = 0
    error_estimate: float | None = None  # Richardson's estimate of the numeric error
    unused: bool = False
    expect: ExpectReport | None = None


@dataclass
class ExpectReport:
    """A hand-derived formula against autograd and finite differences."""

    formula: str
    value: np.ndarray
    analytic: np.ndarray
    numeric: np.ndarray
    formula_vs_autograd: bool
    formula_vs_numeric: bool
    autograd_vs_numeric: bool

    @property
    def ok(self) -> bool:
        return self.formula_vs_autograd and self.formula_vs_numeric and self.autograd_vs_numeric

    def verdict(self) -> str:
        """Which of the three disagree, in words."""
        if self.ok:
            return "formula, autograd and finite differences agree"
        if self.autograd_vs_numeric and not self.formula_vs_autograd:
            return "the formula disagrees with autograd and finite differences (which agree)"
        if self.formula_vs_numeric and not self.formula_vs_autograd:
            return "autograd disagrees with the formula and finite differences (which agree)"
        if self.formula_vs_autograd and not self.autograd_vs_numeric:
            return "finite differences disagree with the formula and autograd (which agree)"
        return "all three disagree"


@dataclass
class CheckReport:
    """A whole check: per-variable reports and the settings used."""

    ok: bool
    variables: dict[str, VariableReport]
    method: str
    eps: float
    atol: float
    rtol: float
    order: int = 1
    fast: bool = False
    dtype: str = "float64"
    evaluations: int = 0  # function evaluations the numeric side used
