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
from ..engine.dtypes import get_default_dtype, session_dtype
from ..engine.escapes import ESCAPES
from ..engine.replay import Rerecord
from ..engine.tensor import Tensor, wrap
from ..errors import AgradValueError
from .gcpause import paused_gc, pausing_allowed

if TYPE_CHECKING:
    from .program import Prepared
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
    leaves = list(params.values())  # their arrays are updated in place by the optimizer
    forward = _Forward(session, prepared, list(params))
    last = [p._array.copy() for p in leaves]  # the values of the last finite loss
    history = result.history
    for step in range(steps + 1):
        output, made = forward(leaves)
        loss = float(output._array.item())
        if not math.isfinite(loss):
            result.diverged, result.diverged_at = True, step
            break
        history.append(loss)
        for kept, p in zip(last, leaves, strict=True):
            kept[...] = p._array
        if on_step is not None:
            on_step(step, loss, {n: a.copy() for n, a in zip(params, last, strict=True)})
        if step == steps:
            break
        # backward(), as the Python API's loop: the leaves' .grad is this step's gradient
        # (None: the loss does not use them; the optimizer still steps, with 0).
        for leaf in made:
            leaf._grad = None
        output.backward()
        for p, leaf in zip(leaves, made, strict=True):
            g = leaf._grad
            if g is None:
                p._grad = wrap(np.zeros_like(p._array))
            elif leaf is not p:  # (the program's own leaves: a run of it)
                p._grad = g
        opt.step()
    if history:
        result.values = dict(zip(params, last, strict=True))
        result.loss, result.steps = history[-1], len(history) - 1
    return result


class _Forward:
    """Each step's forward: the program run, or after the first run, where nothing in its
    graph was decided by the values, the graph recorded again from the first run's, with
    the fitted tensors as its leaves (`engine.replay.Rerecord`: the same ops on the same
    operands, so the same numbers, at the cost of the Python API's forward; the language's
    instructions cost more than the ops they apply). Anything the rerecording raises is
    left to the program to report, where it stands in the program."""

    def __init__(self, session: Session, prepared: Prepared, names: list[str]) -> None:
        self.session, self.prepared, self.names = session, prepared, names
        self.rerecord: Rerecord | None = None
        self.first = True
        # (None when it is the default already: entered every step, it then costs nothing)
        dtype = prepared.dtype
        self.dtype = session_dtype(None if dtype == get_default_dtype() else dtype)
        self.paused = paused_gc()  # (the CLI's pause; one object, entered every step)
        self.bare = dtype == get_default_dtype() and not pausing_allowed()  # (no context)

    def __call__(self, params: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        """The output at the values of ``params``, and the leaves it was computed from."""
        if self.rerecord is not None:
            try:
                if self.bare:
                    return self.rerecord(params), params
                with self.dtype, self.paused:
                    return self.rerecord(params), params
            except Exception:  # noqa: BLE001 - the program runs instead, and says what
                self.rerecord = None
        escaped = ESCAPES[1]
        run = self.prepared.run({n: p._array for n, p in zip(self.names, params, strict=True)})
        targets = self.session.targets(run)
        made = [targets[n] for n in self.names]
        if self.first and ESCAPES[1] == escaped and not self.session.program.writes:
            self.rerecord = Rerecord.of(run.output, made)
        self.first = False
        return run.output, made
