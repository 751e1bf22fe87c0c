"""--order 2: each variable's Hessian block against finite differences of the gradient."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from ..engine.autograd import grad as autograd_grad
from ..errors import AgradValueError
from .numeric import differences
from .report import CheckReport

if TYPE_CHECKING:
    from ..lang.program import Run
    from ..lang.session import Session
    from .checker import CheckOptions


def check_hessian(
    session: Session, run: Run, options: CheckOptions, atol: float, rtol: float, eps: float
) -> CheckReport:
    from .checker import compare

    out = run.output
    if out.data.size != 1:
        raise AgradValueError(
            f"--order 2 checks the Hessian of a single-number output, but "
            f"the output has shape {tuple(out.shape)}"
        )
    _, blocks, _ = session.hessian()
    report = CheckReport(
        True, {}, options.method, eps, atol, rtol, order=2, dtype=np.dtype(session.dtype).name
    )
    # The numeric side differentiates gradients computed in float64, whatever the program's
    # dtype: a float32 gradient would drown the differences in rounding.
    wide = dataclasses.replace(session, dtype=np.dtype(np.float64))
    for name, block in blocks.items():
        t = run.wrt.get(name) if session.wrt else run.env[name]
        if t is None or not session.program.bindable(name):
            raise AgradValueError(
                f"--order 2: {name!r} is computed by the program; second "
                "derivatives are checked with respect to inputs"
            )

        def gradient(values: np.ndarray, name: str = name) -> np.ndarray:
            perturbed = wide.run({name: values})
            leaf = wide.targets(perturbed)[name]
            g = autograd_grad(perturbed.output.reshape(()), [leaf], allow_unused=True)[0]
            return np.zeros(leaf.shape) if g is None else g.data.astype(np.float64)

        numeric = differences(gradient, t.data.astype(np.float64), eps, options.method)
        report.evaluations += numeric.evaluations
        analytic = block.grad.astype(np.float64).reshape(t.data.size, t.data.size)
        var = compare(name, analytic, numeric, t.shape, t.shape, atol, rtol, options.strict)
        report.variables[name] = var
        report.ok = report.ok and var.ok
    return report
