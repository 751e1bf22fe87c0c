"""--order 2: each variable's Hessian block against numeric derivatives of its gradient.

The function checked is the gradient itself (a vector output, evaluated by a backward
pass at each point, in float64 whatever the program's dtype: a float32 gradient would
drown the differences in rounding); the claim is autograd's Hessian. The same numeric
side, verdicts and report as first order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..engine.autograd import grad as autograd_grad
from ..errors import AgradValueError
from .checker import check_target
from .options import CheckOptions
from .report import CheckReport
from .targets import Variable, pointwise
from .verdict import FLAT

if TYPE_CHECKING:
    from ..lang.session import Session


class HessianTarget:
    """d(gradient)/d(variable) of a scalar program, per variable."""

    def __init__(self, session: Session) -> None:
        run = session.run()
        if run.output._array.size != 1:
            raise AgradValueError(
                f"--order 2 checks the Hessian of a single-number output, but the output has "
                f"shape {tuple(run.output.shape)}"
            )
        self.session, self.run = session, run
        self.tensors = session.targets(run)
        self.names = list(self.tensors)
        for name in self.names:
            if not session.program.bindable(name):
                raise AgradValueError(
                    f"--order 2: {name!r} is computed by the program; second derivatives are "
                    "checked with respect to inputs"
                )
        self.dtype = np.dtype(session.dtype).name
        self.wide = session.widened()
        self._blocks: dict[bool, dict] = {}

    def output_shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.tensors[name].shape)

    def function(self, name: str) -> Variable:
        base = self.tensors[name]._array.astype(np.float64)

        def gradient(values: np.ndarray) -> np.ndarray:
            perturbed = self.wide.run({name: values})
            leaf = self.wide.targets(perturbed)[name]
            g = autograd_grad(perturbed.output.reshape(()), [leaf], allow_unused=True)[0]
            return np.zeros(leaf.shape) if g is None else g._array.astype(np.float64)

        return Variable(base, pointwise(gradient))

    def claim(self, name: str, wide: bool = False) -> np.ndarray:
        key = wide and self.dtype != "float64"
        if key not in self._blocks:
            session = self.wide if key else self.session
            self._blocks[key] = session.hessian()[1]
        n = self.tensors[name]._array.size
        return self._blocks[key][name].grad.astype(np.float64).reshape(n, n)

    @property
    def claim_rounding(self) -> float:
        """How far rounding may leave a claimed Hessian element from the truth: 64 ulps of
        the largest first or second derivative of any variable. A block can be 0 where the
        double backward leaves residues of terms of that size (sum(log_softmax(x + c) * y)
        does not depend on c: d²/dc² is 0, claimed -1.5e-16, and the differences of a
        gradient that rounds to 1.1e-16 everywhere are exactly 0; QA round 15)."""
        if "rounding" not in self.__dict__:
            blocks = self._blocks.get(False) or {}
            if False not in self._blocks:
                self.claim(self.names[0])
                blocks = self._blocks[False]
            leaves = [self.tensors[n] for n in self.names]
            grads = autograd_grad(self.session.run().output.reshape(()), leaves,
                                  allow_unused=True)  # fmt: skip
            sizes = [np.max(np.abs(b.grad), initial=0.0) for b in blocks.values()]
            sizes += [np.max(np.abs(g._array), initial=0.0) for g in grads if g is not None]
            finite = [float(s) for s in sizes if np.isfinite(s)]
            self.__dict__["rounding"] = FLAT * max(finite, default=0.0)
        return self.__dict__["rounding"]

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        """uᵀH for one variable (--fast, --method taylor): from the Hessian block."""
        return self.claim(name).T @ np.asarray(u, dtype=np.float64).reshape(-1)


def check_hessian(session: Session, options: CheckOptions) -> CheckReport:
    report = check_target(HessianTarget(session), options)
    report.order = 2
    return report
