"""torch.autograd.gradcheck / gradgradcheck on agrad's finite-difference core.

Pass rule (PyTorch's): |analytic - numeric| <= atol + rtol * |numeric|, elementwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..check.checker import compare
from ..check.numeric import differences
from ..engine.autograd import grad
from ..engine.functional import batched_jacobian
from ..engine.grad_mode import set_grad_enabled
from ..engine.tensor import Tensor, wrap


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numeric Jacobians disagree."""


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    fast_mode: bool = False,
    _record: bool = False,
    **_: Any,
) -> bool:
    """Compare the Jacobian autograd computes with central differences, per input."""
    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    with set_grad_enabled(True):
        outputs = _as_tuple(func(*inputs))
    for oi, out in enumerate(outputs):
        analytic = batched_jacobian(out, tuple(diff))
        for ii, x in enumerate(diff):
            a = (
                np.zeros((out.data.size, x.data.size))
                if analytic[ii] is None
                else (analytic[ii].data.reshape(out.data.size, x.data.size))
            )
            numeric = differences(
                _evaluator(func, inputs, x, oi, _record), x.data, eps, relative=False
            )
            verdict = compare(
                f"input {ii}", a, numeric, out.shape, x.shape, atol, rtol, strict=True
            )
            if not verdict.ok:
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {oi} with respect to input "
                        f"{_position(inputs, x)},\nnumerical:{numeric.jacobian}\nanalytical:{a}\n"
                    )
                return False
    return True


def _position(inputs: tuple, x: Tensor) -> int:
    return next(i for i, t in enumerate(inputs) if t is x)  # by identity: == is elementwise


def _evaluator(func: Callable, inputs: tuple, target: Tensor, out_index: int, record: bool):
    # gradgradcheck's function differentiates inside, so it needs a recording forward.
    def f(values: np.ndarray) -> np.ndarray:
        args = tuple(wrap(values, record) if x is target else x for x in inputs)
        with set_grad_enabled(record):
            return _as_tuple(func(*args))[out_index].data

    return f


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
    **_: Any,
) -> bool:
    """Check second derivatives: gradcheck of (inputs -> VJP(func)(inputs, v)) for a fixed
    random cotangent v."""
    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    with set_grad_enabled(True):
        outputs = _as_tuple(func(*inputs))
    rng = np.random.default_rng(seed)
    if grad_outputs is None:
        vs = [wrap(rng.standard_normal(o.shape).astype(o.dtype)) for o in outputs]
    else:
        vs = list(_as_tuple(grad_outputs))

    def first_derivative(*args: Any) -> tuple:
        outs = _as_tuple(func(*args))
        wanted = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        gs = grad(list(outs), wanted, grad_outputs=vs, create_graph=True, allow_unused=True)
        return tuple(
            wrap(np.zeros_like(w.data)) if g is None else g for w, g in zip(wanted, gs, strict=True)
        )

    del diff
    return gradcheck(
        first_derivative,
        inputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        _record=True,
    )
