"""`agrad check --python FILE.py:NAME [--grad FILE.py:NAME]`: a Python function of the
user's own, checked by the same machinery as a program (see `agrad.check.python`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradValueError


def check_python(
    program: str | None,
    file: str | None,
    python: str | None,
    grad: str | None,
    grad_output: str | None,
    sets: list[str] | None,
    wrt: list[str] | None,
    expect: list[str] | None,
    options: Any,
    dtype: str,
    seed: int,
    max_elements: int,
) -> Any:
    from ..check.checker import check_target
    from ..check.python import build_target, judge_hand, refuse_unsupported, running_user_code
    from ..lang.values import parse_value, split_assignment

    if python is None:
        what = "--grad" if grad is not None else "--grad-output"
        raise AgradValueError(f"{what} goes with --python FILE.py:NAME")
    if program is not None or file is not None:
        raise AgradValueError("--python checks a Python function: drop the PROGRAM and --file")
    if expect:
        raise AgradValueError("--expect goes with a PROGRAM; with --python give --grad instead")
    if options.order == 2:
        raise AgradValueError("--order 2 goes with a PROGRAM; --python checks first derivatives")
    values: dict[str, np.ndarray] = {}
    for option in sets or []:
        name, text = split_assignment(option)
        if name in values:
            raise AgradValueError(f"--set {name}: given twice; keep one of them")
        value = parse_value(text, f"--set {name}", seed=seed, max_elements=max_elements)
        values[name] = value.astype(dtype) if value.dtype.kind == "f" else value
    names = [n.strip() for item in wrt or [] for n in item.split(",") if n.strip()]
    u = None
    if grad_output is not None:
        u = parse_value(grad_output, "--grad-output", seed=seed, max_elements=max_elements)
    with running_user_code(f"--python {python}"):
        target, hand, kind = build_target(python, grad, values, names, u)
        refuse_unsupported(kind, options, f"--python {python}")
        report = check_target(target, options)
        judge_hand(target, report, hand, options, f"--grad {grad}")
    return report
