"""Minimise a program's output over its --wrt variables with agrad's optimizers.

Each step re-runs the compiled program with the current parameter values,
backpropagates, and lets `agrad.optim.SGD` or `Adam` update the parameters in
place — the same optimizer objects, and so the same trajectories, as the Python
API. A non-finite loss stops the run and keeps the last finite state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..engine import optim
from ..engine.tensor import wrap
from ..errors import AgradValueError

if TYPE_CHECKING:
    from .session import Session


@dataclass
class FitResult:
    values: dict[str, np.ndarray]  # the fitted parameters (the last finite state)
    loss: float  # the loss at those values
    history: list[float] = field(default_factory=list)  # loss before each step
    steps: int = 0  # optimizer steps taken
    diverged: bool = False
    diverged_at: int | None = None


def fit(
    session: Session,
    steps: int,
    lr: float,
    momentum: float = 0.0,
    optimizer: str = "sgd",
    on_step: Callable[[int, float, dict[str, np.ndarray]], None] | None = None,
) -> FitResult:
    """Run ``steps`` optimizer steps on the session's output (which must be a number)."""
    if not session.wrt:
        raise AgradValueError("fit needs --wrt: name the parameters to fit, e.g. --wrt w,b")
    first = session.run()
    if first.output._array.size != 1:
        raise AgradValueError(
            f"fit minimises a single number, but the output has shape "
            f"{tuple(first.output.shape)}; reduce it, e.g. sum(...) or mean(...)"
        )
    if not first.output.requires_grad:  # backward would refuse it in PyTorch's words
        names = ", ".join(session.wrt)
        raise AgradValueError(
            f"fit: the output does not depend on --wrt {names} (its gradient is always 0), "
            "so there is nothing to fit; name the parameters the loss is computed from"
        )
    for name in session.wrt:
        if not session.program.bindable(name):
            line = session.program.assigned[name].line
            raise AgradValueError(
                f"fit: {name!r} is computed by the program (line {line}); "
                "fit the inputs it is computed from"
            )
    params = {
        n: wrap(np.array(first.wrt[n]._array, dtype=session.dtype), True) for n in session.wrt
    }
    if optimizer == "adam":
        opt = optim.Adam(params.values(), lr=lr)
    elif optimizer == "sgd":
        opt = optim.SGD(params.values(), lr=lr, momentum=momentum)
    else:
        raise AgradValueError(f"--optimizer must be sgd or adam, got {optimizer!r}")
    result = FitResult({n: p._array.copy() for n, p in params.items()}, float("nan"))
    prepared = session.prepare(list(params))  # names checked, constants converted: once
    arrays = {n: p._array for n, p in params.items()}  # updated in place by the optimizer
    leaves = list(params.values())
    for step in range(steps + 1):
        run = prepared.run(arrays)
        loss = float(run.output._array.reshape(()))
        if not math.isfinite(loss):
            result.diverged, result.diverged_at = True, step
            break
        result.history.append(loss)
        result.values = {n: a.copy() for n, a in arrays.items()}
        result.loss, result.steps = loss, step
        if on_step is not None:
            on_step(step, loss, result.values)
        if step == steps:
            break
        # backward(), as the Python API's loop: the run's --wrt leaves are new every run,
        # so their .grad is this step's gradient (None: the loss does not use them).
        run.output.backward()
        targets = session.targets(run)
        for p, name in zip(leaves, params, strict=True):
            g = targets[name]._grad
            p._grad = wrap(np.zeros_like(p._array) if g is None else g._array)
        opt.step()
    return result
