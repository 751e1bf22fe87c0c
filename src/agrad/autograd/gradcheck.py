"""torch.autograd.gradcheck / gradgradcheck on agrad's checker.

The same machinery as ``agrad check``: the numeric Jacobian by adaptive steps (or one
forced step when ``eps`` is given), per-element verdicts with kinks and undecided
points, a float32 claim triaged against its float64 twin, a diagnosis on failure.
PyTorch's signature, keyword-only arguments included (a misspelt one is a TypeError).
Differences, on purpose: ``eps``, ``atol`` and ``rtol`` default to None — agrad's
adaptive step and scale-aware tolerances (pass them to get fixed ones; ``eps`` is then
relative to max(1, |x|)); there is no forward-mode AD, so asking for its checks raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..check.callables import AgradCallableTarget, NoFloatingOutput
from ..check.checker import check_target
from ..check.diagnosis import ATOL_ADVICE, passed_zeros_error, rounded_up
from ..check.options import CheckOptions
from ..check.report import CheckReport, Diagnosis
from ..engine.autograd import grad
from ..engine.grad_mode import set_grad_enabled
from ..engine.tensor import Tensor, wrap


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numeric Jacobians disagree."""


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _refuse_foreign(inputs: tuple, name: str) -> None:
    """A PyTorch tensor among the inputs (``import torch`` beside ``import agrad``): say so,
    rather than that none requires grad (QA round 23), and where PyTorch code is checked."""
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor) and type(x).__module__.split(".")[0] == "torch":
            raise TypeError(
                f"{name}: input {i} is a {type(x).__module__}.{type(x).__name__}, not an agrad "
                f"tensor: agrad.autograd.{name} checks agrad code (make the inputs with "
                "agrad.tensor); to check PyTorch code, run `agrad check --python FILE:FUNCTION`"
            )


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` (the Tensors that require grad)
    against numeric derivatives; True, or False/GradcheckError with the diagnosis."""
    _unsupported(check_forward_ad, check_batched_forward_grad, masked, nondet_tol)
    inputs = _as_tuple(inputs)
    _refuse_foreign(inputs, "gradcheck")
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )
    if not check_backward_ad:  # (nothing left to check: PyTorch refuses, never passes)
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    func, inputs = _distinct(func, inputs)
    try:
        target = AgradCallableTarget(func, inputs)
    except NoFloatingOutput:  # nothing differentiable to check: PyTorch answers True
        return True
    target.nondet_tol = float(nondet_tol)
    problems = []
    if check_undefined_grad:
        problems += _undefined_grad_problems(target)
    if check_grad_dtypes:
        problems += _dtype_problems(target)
    if check_batched_grad:
        problems += _batched_problems(target)
    options = CheckOptions(eps=eps, atol=atol, rtol=rtol, fast=fast_mode, wording="gradcheck")
    with np.errstate(all="ignore"):  # (points outside f's domain are probed on purpose)
        report = check_target(target, options)
    if report.ok and not problems:
        return True
    if not raise_exception:
        return False
    raise GradcheckError(problems[0] if problems else describe(report, target, inputs))


def _distinct(func: Callable[..., Any], inputs: tuple) -> tuple[Callable[..., Any], tuple]:
    """A tensor passed more than once is one variable, as PyTorch's gradcheck sees it (it
    perturbs the tensor itself, so every occurrence moves, and its analytic gradient is
    the total one): ``func`` of the distinct inputs. (A report then numbers the inputs
    among the distinct ones.)"""
    first: dict[int, int] = {}
    where = [
        first.setdefault(id(x), i) if isinstance(x, Tensor) and x.requires_grad else i
        for i, x in enumerate(inputs)
    ]
    if all(w == i for i, w in enumerate(where)):
        return func, inputs
    keep = [i for i, w in enumerate(where) if w == i]
    slot = {i: k for k, i in enumerate(keep)}

    def of_distinct(*args: Any) -> Any:
        return func(*[args[slot[w]] for w in where])

    return of_distinct, tuple(inputs[i] for i in keep)


def _unsupported(forward_ad: bool, batched_forward: bool, masked: Any, nondet_tol: float):
    if forward_ad or batched_forward:
        raise NotImplementedError(
            "agrad has no forward-mode AD: check_forward_ad and check_batched_forward_grad "
            "are not supported (reverse mode is checked)"
        )
    # (masked=True ignores the unspecified elements of sparse inputs; agrad's are all dense,
    # where PyTorch's masked=True changes nothing: accepted as it, QA round 21)
    del masked
    if not (isinstance(nondet_tol, (int, float)) and nondet_tol >= 0):
        raise ValueError(f"nondet_tol must be a number >= 0, got {nondet_tol!r}")


_FIRST_LINES = {
    "cotangent": "backward not multiplied by grad_output, for input {}:",
    "reentrant": "Backward is not reentrant, i.e., running backward with same input and "
    "grad_output multiple times gives different values, for input {}:",
}


def _atol_for_all(diagnosis: Diagnosis, report: CheckReport) -> str:
    """The diagnosis, the atol it names raised to cover the zeros every input passed
    without one (gradgradcheck's grad_output too): with it given, they must pass again."""
    named = diagnosis.evidence.get("atol")
    if named is None:
        return diagnosis.message
    needed = max(passed_zeros_error(v) for v in report.variables.values())
    if needed <= named:
        return diagnosis.message
    raised = ATOL_ADVICE.format(rounded_up(needed))
    return diagnosis.message.replace(ATOL_ADVICE.format(named), raised)


def describe(report: CheckReport, target: AgradCallableTarget, inputs: tuple) -> str:
    """PyTorch's first line (which output, which input), then agrad's diagnosis."""
    for name, v in report.variables.items():
        if v.ok:
            continue
        position = target.position(name)
        worst = v.worst[0] if v.worst else None
        output = _output_of(target, worst.output_index if worst else ())
        lines = [f"Jacobian mismatch for output {output} with respect to input {position},"]
        kind = v.diagnosis.kind if v.diagnosis is not None else ""
        if kind in _FIRST_LINES:  # (PyTorch's words)
            lines = [_FIRST_LINES[kind].format(position)]
        if v.diagnosis is not None:
            lines.append(_atol_for_all(v.diagnosis, report))
        if not np.any(v.numeric) and np.any(v.analytic):  # (f never moved along the input)
            lines.append(
                f"f did not change at all when input {position} moved: if the function "
                "reads it other than through its argument (a module's parameters, a "
                "closure), give it float64 tensors, which are moved in place wherever "
                "they are used (a float32 one the function refuses as float64 is a copy)"
            )
        if v.compared <= 400 and not report.fast:  # (PyTorch's layout: input by output
            # elements, for the output named above)
            start = int(sum(target.sizes[:output]))
            rows = slice(start, start + target.sizes[output])
            lines.append(f"numerical:{wrap(v.numeric[rows].T.copy())!r}")
            lines.append(f"analytical:{wrap(v.analytic[rows].T.copy())!r}")
            if np.isnan(v.numeric[rows]).any() and np.isfinite(v.analytic[rows]).all():
                lines.append(  # (not f's value: QA round 34 read it as "my function is nan")
                    "(nan in numerical: no finite difference was reliable there, see above)"
                )
        return "\n".join(lines) + "\n"
    return "gradcheck failed\n"


def _output_of(target: AgradCallableTarget, index: tuple) -> int:
    if len(target.sizes) == 1 or not index:
        return 0
    flat = int(index[0])
    return int(np.searchsorted(np.cumsum(target.sizes), flat, side="right"))


def _undefined_grad_problems(target: AgradCallableTarget) -> list[str]:
    """Backward with zero output gradients (PyTorch's undefined ones) must run: a backward
    that cannot take them (a custom Function's) fails here with its own error. That it
    gives zero there is the cotangent test's (`check.cotangents`), for every target."""
    problems = []
    for name in target.names:
        try:
            target.vjp(name, np.zeros(sum(target.sizes)))
        except Exception as exc:  # the user's backward: report, do not crash
            problems.append(
                f"Expected backward function to handle undefined output grads: backward of "
                f"{name} with zero output gradients raised {type(exc).__name__}: {exc}"
            )
    return problems


def _dtype_problems(target: AgradCallableTarget) -> list[str]:
    problems = []
    for name in target.names:
        leaf = target.inputs[target.position(name)]
        wanted = [o for o in target.outputs if o.requires_grad]
        if not wanted:
            continue
        ones = [wrap(np.ones_like(o._array)) for o in wanted]
        g = grad(wanted, [leaf], grad_outputs=ones, retain_graph=True, allow_unused=True)[0]
        if g is not None and g.dtype != leaf.dtype:
            problems.append(
                f"Gradient has dtype mismatch: got {g.dtype} for {name} of dtype {leaf.dtype}"
            )
    return problems


def _batched_problems(target: AgradCallableTarget) -> list[str]:
    """A batch of cotangents through one backward pass equals them one by one."""
    rng = np.random.default_rng(0)
    wanted = [o for o in target.outputs if o.requires_grad]
    if not wanted:
        return []
    leaves = [target.inputs[target.position(n)] for n in target.names]
    seeds = [rng.standard_normal((2, *o.shape)).astype(o.dtype) for o in wanted]
    batched = grad(wanted, leaves, grad_outputs=[wrap(s) for s in seeds], retain_graph=True,
                   allow_unused=True, is_grads_batched=True)  # fmt: skip
    for row in range(2):
        single = grad(wanted, leaves, grad_outputs=[wrap(s[row]) for s in seeds],
                      retain_graph=True, allow_unused=True)  # fmt: skip
        for name, b, s in zip(target.names, batched, single, strict=True):
            if (b is None) != (s is None):
                return [f"Batched gradient of {name} is missing where the single one is not"]
            if b is not None and not np.allclose(b._array[row], s._array, rtol=1e-10, atol=1e-12):
                return [f"Batched gradient of {name} differs from the one-by-one gradient"]
    return []


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> VJP(func)(inputs, v), with
    the cotangents v (random, or ``grad_outputs``) differentiated too, as PyTorch does."""
    _unsupported(check_fwd_over_rev, False, masked, nondet_tol)
    if not check_rev_over_rev:  # (as gradcheck's: PyTorch refuses, never passes)
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    inputs = _as_tuple(inputs)
    _refuse_foreign(inputs, "gradgradcheck")
    with set_grad_enabled(True):
        outputs = _as_tuple(func(*inputs))
    # As PyTorch: only the outputs that require grad are differentiated (an argmax or a
    # constant beside them has no second derivative to check, and is not an error).
    kept = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
    if not kept:
        return True
    outputs = tuple(outputs[i] for i in kept)
    rng = np.random.default_rng(0)
    if grad_outputs is None:
        vs = [wrap(rng.standard_normal(o.shape).astype(o.dtype), True) for o in outputs]
    else:
        vs = [wrap(np.asarray(v._array if isinstance(v, Tensor) else v), True)
              for v in _as_tuple(grad_outputs)]  # fmt: skip
    count = len(inputs)

    def vjp(ins: tuple, cotangents: list, create_graph: bool) -> tuple:
        with set_grad_enabled(True):
            every = _as_tuple(func(*ins))
        outs = [every[i] for i in kept]
        wanted = [a for a in ins if isinstance(a, Tensor) and a.requires_grad]
        gs = grad(outs, wanted, grad_outputs=cotangents, create_graph=create_graph,
                  allow_unused=True)  # fmt: skip
        return tuple(wrap(np.zeros_like(w._array)) if g is None else g
                     for w, g in zip(wanted, gs, strict=True))  # fmt: skip

    def first_derivative(*args: Any) -> tuple:
        return vjp(args[:count], list(args[count:]), True)

    plain = vjp(inputs, [wrap(v._array) for v in vs], False)
    recorded = first_derivative(*inputs, *vs)
    problem = _paths_problem(recorded, plain)
    if problem is not None:
        if not raise_exception:
            return False
        raise GradcheckError(problem)
    try:
        return gradcheck(
            first_derivative,
            (*inputs, *vs),
            eps=eps,
            atol=atol,
            rtol=rtol,
            raise_exception=raise_exception,
            nondet_tol=nondet_tol,
            check_undefined_grad=check_undefined_grad,
            check_grad_dtypes=check_grad_dtypes,
            check_batched_grad=check_batched_grad,
            fast_mode=fast_mode,
        )
    except GradcheckError as exc:
        # (a first derivative autograd cannot differentiate claims a second derivative of
        # 0: "the rule is wrong" blamed a rule, QA round 28; say why it is 0)
        cut = _unreached(recorded, inputs)
        if not cut:
            raise
        raise GradcheckError(
            f"The first derivative does not depend on input {cut[0]} in autograd's graph: "
            "the backward computes it outside autograd (@once_differentiable, NumPy, "
            ".detach() or no_grad inside backward), so autograd claims a second derivative "
            f"of 0 there.\n{exc}"
        ) from None


def _unreached(recorded: tuple, inputs: tuple) -> list[int]:
    """The inputs that require grad which no part of the recorded first derivative reaches."""
    tracked = [g for g in recorded if g.requires_grad]
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not tracked:
        return wanted
    ones = [wrap(np.ones_like(g._array)) for g in tracked]
    found = grad(tracked, [inputs[i] for i in wanted], grad_outputs=ones, retain_graph=True,
                 allow_unused=True)  # fmt: skip
    return [i for i, g in zip(wanted, found, strict=True) if g is None]


PATHS_RTOL = 1e-7  # (the two paths may round differently: a formula written twice)


def _paths_problem(recorded: tuple, plain: tuple) -> str | None:
    """The first derivative as create_graph=True records it against the plain backward's.
    A backward may take another path while grad mode is on (a custom Function testing
    torch.is_grad_enabled()); gradgradcheck differentiates the recorded one on both sides,
    numerically and analytically, so a wrong one agrees with itself and passes, while the
    Hessians users get through create_graph are wrong (QA round 21: a factor 2 passed;
    PyTorch's gradgradcheck passes it too). One more backward compares the two."""
    for k, (r, q) in enumerate(zip(recorded, plain, strict=True)):
        a, b = r._array, q._array
        scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
        if not np.allclose(a, b, rtol=PATHS_RTOL, atol=PATHS_RTOL * scale + 1e-300):
            j = int(np.argmax(np.abs(a - b)))
            return (
                f"The first derivative of input {k} differs with create_graph=True: at "
                f"element {j} it is {a.reshape(-1)[j]:.6g} recorded for double backward "
                f"and {b.reshape(-1)[j]:.6g} from the plain backward. The backward takes "
                "another path while grad mode is on (a custom Function testing "
                "torch.is_grad_enabled()?): second derivatives taken through "
                "create_graph=True differentiate that path"
            )
    return None


__all__: Sequence[str] = ["GradcheckError", "gradcheck", "gradgradcheck"]
