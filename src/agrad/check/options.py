"""One schema for a check's settings: `CheckOptions` fields carry their type, help text
and allowed values, and the CLI's and the suites' validation is derived from them."""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgradValueError

METHODS = ("auto", "complex", "ridders", "central", "forward", "richardson", "taylor")
FIXED = ("central", "forward", "richardson")  # one step, chosen by --eps or the default


def _opt(default: Any, help: str, kind: tuple[type, ...], what: str, choices: tuple = ()):
    meta = {"help": help, "kind": kind, "what": what, "choices": choices}
    return field(default=default, metadata=meta)


@dataclass
class CheckOptions:
    """How to check. Every field is a suite key of the same name."""

    method: str = _opt(
        "auto",
        "auto: the complex step where every op is analytic, else the adaptive ladder of "
        "steps; complex, ridders: those alone; central, forward, richardson: one step "
        "(--eps); taylor: the Taylor remainder test",
        (str,), "a string", METHODS,
    )  # fmt: skip
    eps: float | None = _opt(
        None, "force one finite-difference step (times max(1, |x|))", (int, float), "a number"
    )
    atol: float | None = _opt(
        None,
        "absolute tolerance (default: relative to each output's largest derivative, "
        "4 ulps of it in float64, 1e-5 in float32)",
        (int, float), "a number",
    )  # fmt: skip
    rtol: float | None = _opt(
        None, "relative tolerance (default 1e-5; 1e-4 in float32)", (int, float), "a number"
    )
    fast: bool = _opt(False, "random-direction projections u^T J v", (bool,), "true or false")
    directions: int = _opt(3, "random directions per variable with fast", (int,), "a count")
    order: int = _opt(1, "1: gradients; 2: the Hessian", (int,), "1 or 2", (1, 2))
    strict: bool = _opt(False, "count kinks as failures", (bool,), "true or false")
    allow_undecided: bool = _opt(
        False, "pass although some elements are undecided", (bool,), "true or false"
    )
    seed: int = _opt(0, "seed of the random directions", (int,), "a whole number >= 0")
    max_seconds: float = _opt(
        600.0,
        "refuse a check estimated (from a first block of evaluations) to take longer",
        (int, float), "a number of seconds",
    )  # fmt: skip
    # Whose options the report's advice names: "cli" (--allow-undecided), "suite"
    # (allow_undecided = true), "python" (CheckOptions' and check_numpy's keywords),
    # "gradcheck" (gradcheck's own). Not a setting of the check, nor a suite key.
    wording: str = field(default="python", metadata={"internal": True}, compare=False)

    def __post_init__(self) -> None:
        """Refuse settings that would make a check meaningless (a NaN step passes nothing)."""
        if self.wording not in WORDINGS:
            raise AgradValueError(f"wording must be one of {', '.join(WORDINGS)}")
        schema = self.keys()
        for name, meta in schema.items():
            problem = _problem(name, getattr(self, name), meta)
            if problem:
                flag = f"--{name.replace('_', '-')}" if self.wording == "cli" else name
                raise AgradValueError(f"{flag} {problem}")
        if self.order == 2 and self.method == "complex":
            raise AgradValueError(
                "--method complex goes with --order 1: --order 2 differentiates the "
                "gradient (a backward pass at each point), which has no complex step; use "
                "the default method"
            )

    def need_complex_step(self, possible: bool) -> None:
        """Refuse method complex where the complex step cannot be taken (a function not
        made of agrad's analytic ops), in full checks and in fast ones alike."""
        if self.method == "complex" and not possible:
            raise AgradValueError(
                f"{self.advice('method complex')} needs a function whose every op is "
                "analytic (no relu, abs, max, clip, ...): the complex step is exact only "
                "there; use the default method"
            )

    def advice(self, key: str) -> str:
        """The advice ``key`` (see ADVICE) in the words of the caller's API."""
        return ADVICE[key][WORDINGS.index(self.wording)]

    @property
    def fixed_step(self) -> bool:
        """One step for every element: --eps given, or a fixed-step method named."""
        return self.method in FIXED or (self.eps is not None and self.method == "auto")

    @classmethod
    def keys(cls) -> dict[str, dict[str, Any]]:
        """Each setting's metadata: kind (accepted Python types), what, choices, help."""
        return {name: dict(meta) for name, meta in _schema(cls).items()}

    @classmethod
    def from_mapping(
        cls, values: dict[str, Any], where: str | None, wording: str = "suite"
    ) -> CheckOptions:
        """Options from a suite case, validated against the schema (other keys ignored);
        errors start with ``where`` when given."""
        prefix = f"{where}: " if where else ""
        given = {}
        for name, meta in cls.keys().items():
            if name not in values:
                continue
            value = values[name]
            kinds = meta["kind"]
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise AgradValueError(f"{prefix}{name} must be {meta['what']}, got {value!r}")
            problem = _problem(name, value, meta)
            if problem:
                raise AgradValueError(f"{prefix}{name} {problem}")
            given[name] = value
        return cls(**given, wording=wording)


@functools.cache
def _schema(cls: type) -> dict[str, Any]:
    """The settings' metadata, read once (options are made for every check)."""
    return {f.name: f.metadata for f in dataclasses.fields(cls) if "internal" not in f.metadata}


# The report's advice in each caller's words: the CLI's flags, a suite's keys, the Python
# API's keywords (CheckOptions, agrad.check.check_numpy), gradcheck's (which lacks most).
WORDINGS = ("cli", "suite", "python", "gradcheck")
_FAST = "(random projections: a few evaluations in all)"
ADVICE: dict[str, tuple[str, str, str, str]] = {
    "allow_undecided": (
        "--allow-undecided passes such a check",
        "allow_undecided = true passes such a check",
        "allow_undecided=True (CheckOptions, agrad.check.check_numpy) passes such a check; "
        "gradcheck has no such option: check at another point",
        "gradcheck has no option that passes such a check: check at another point",
    ),
    "strict": (
        "--strict counts kinks as failures",
        "strict = true counts kinks as failures",
        "strict=True counts kinks as failures",
        "strict=True counts kinks as failures",
    ),
    "adaptive": (
        "drop --eps / --method",
        "drop eps and method",
        "drop eps= (and method=)",
        "drop eps=",
    ),
    "budget": (
        f"use --fast {_FAST}, or raise the budget with --max-seconds",
        f"use fast = true {_FAST}, or raise the budget with max_seconds",
        f"use fast_mode=True in gradcheck, fast=True in CheckOptions {_FAST}, or raise "
        "CheckOptions' budget max_seconds=",
        f"use fast_mode=True {_FAST}, or smaller inputs",
    ),
    "fast": ("--fast", "fast = true", "fast=True", "fast_mode=True"),
    "rtol": ("--rtol {}", "rtol = {}", "rtol={}", "rtol={}"),
    "method complex": (
        "--method complex",
        'method = "complex"',
        'method="complex"',
        'method="complex"',
    ),
}


def _problem(name: str, value: Any, meta: Any) -> str | None:
    """What is wrong with a setting's value, or None."""
    if meta["choices"] and value not in meta["choices"]:
        return f"must be one of {', '.join(str(c) for c in meta['choices'])}, got {value!r}"
    if name == "eps" and value is not None and not (math.isfinite(value) and value > 0):
        return f"must be a positive number, got {value}"
    if name in ("atol", "rtol") and value is not None and not (math.isfinite(value) and value >= 0):
        return f"must be a number >= 0, got {value}"
    if name == "directions" and value < 1:
        return f"must be at least 1, got {value}"
    if name == "seed" and value < 0:
        return f"must be a whole number >= 0, got {value}"
    if name == "max_seconds" and not value > 0:
        return f"must be a positive number of seconds, got {value}"
    return None
