"""`agrad check --python FILE.py:NAME`: check a Python function of the user's own.

This runs the user's code, by their explicit choice, and only from here: the language's
programs and ``--set`` values never reach Python. The function is loaded from a file
(``path/to/file.py:NAME``) or a module (``pkg.module:NAME``); its parameters are bound by
name from ``--set`` (the others keep their defaults); ``--wrt`` names the parameters to
check (default: every parameter given a floating value). What it is decides the claim:

- written with ``import agrad as torch`` (agrad tensors in, a tensor out): autograd;
- a NumPy function (arrays in, an array out) with ``--grad FILE.py:NAME``, a hand-written
  gradient returning one array per --wrt parameter (or the Jacobian block for a
  non-scalar output);
- a PyTorch function (when torch is installed; never required): torch's autograd, against
  agrad's numeric side in float64 — the better torch.autograd.gradcheck.

With --grad and a function autograd can also differentiate, the check is three-way: the
hand gradient is judged beside autograd (as --expect judges a formula).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AgradValueError
from .python_kind import WRITTEN, detect


class UserCodeError(AgradValueError):
    """The user's own Python code failed; with AGRAD_DEBUG=1 its traceback is shown."""

    def __init__(self, message: str, exc: BaseException | None = None) -> None:
        super().__init__(message)
        if exc is not None and os.environ.get("AGRAD_DEBUG"):
            self.snippet = "".join(traceback.format_exception(exc)).rstrip()


def load_callable(spec: str, option: str = "--python") -> tuple[Callable, str, Any]:
    """``path.py:NAME`` or ``package.module:NAME`` -> (the callable, its label, its module)."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise AgradValueError(
            f"{option} {spec!r}: expected FILE.py:NAME or module.path:NAME, e.g. "
            f"{option} layers.py:affine"
        )
    label = f"{option} {spec}"
    if where.endswith(".py") or os.sep in where or "/" in where:
        module = _import_file(Path(where), label)
    else:
        try:
            module = importlib.import_module(where)
        except SystemExit as exc:
            raise UserCodeError(f"{label}: importing module {where!r} called "
                                f"{exit_call(exc)}{IMPORT_EXIT_HINT}") from None  # fmt: skip
        except Exception as exc:  # the user's module: any error at import is theirs
            raise UserCodeError(
                f"{label}: cannot import module {where!r}: {type(exc).__name__}: {exc}", exc
            ) from None
    func = getattr(module, name, None)
    if func is None:
        defined = sorted(n for n, v in vars(module).items()
                         if callable(v) and not n.startswith("_"))[:8]  # fmt: skip
        hint = f"; it defines {', '.join(defined)}" if defined else ""
        raise AgradValueError(f"{label}: {where} has no function {name!r}{hint}")
    if not callable(func):
        raise AgradValueError(f"{label}: {name!r} in {where} is a {type(func).__name__}, "
                              "not a function")  # fmt: skip
    return func, label, module


def _import_file(path: Path, label: str) -> Any:
    if not path.is_file():
        raise AgradValueError(f"{label}: no such file {str(path)!r}")
    spec = importlib.util.spec_from_file_location(f"agrad_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise AgradValueError(f"{label}: {str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # its own sibling modules import as they would in a script
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise UserCodeError(
            f"{label}: {path} has a syntax error at line {exc.lineno}: {exc.msg}", exc
        ) from None
    except SystemExit as exc:
        raise UserCodeError(
            f"{label}: importing {path} called {exit_call(exc)}{IMPORT_EXIT_HINT}"
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise UserCodeError(
            f"{label}: importing {path} raised {type(exc).__name__}: {exc}", exc
        ) from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    return module


def parameters(func: Callable, label: str) -> list[inspect.Parameter]:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        raise AgradValueError(f"{label}: cannot read the function's parameters") from None
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def bind(
    func: Callable, label: str, values: Mapping[str, np.ndarray], wrt: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The function's arguments by name (from --set, else their defaults) and the
    parameters to check (--wrt, or every one given a floating value)."""
    params = parameters(func, label)
    names = [p.name for p in params]
    for name in values:
        if name not in names:
            raise AgradValueError(
                f"--set {name}: {label} has no parameter {name!r}; its parameters are "
                f"{', '.join(names) or 'none'}"
            )
    arguments = {}
    for p in params:
        if p.name in values:
            arguments[p.name] = values[p.name]
        elif p.default is inspect.Parameter.empty:
            raise AgradValueError(
                f"{label}: parameter {p.name!r} has no default: give it with --set {p.name}=VALUE"
            )
    for name in wrt:
        if name not in names:
            raise AgradValueError(f"--wrt {name}: {label} has no parameter {name!r}")
        if name not in arguments:
            raise AgradValueError(f"--wrt {name}: give its value with --set {name}=VALUE")
    if not wrt:
        wrt = [n for n, v in arguments.items() if np.asarray(v).dtype.kind == "f"]
    if not wrt:
        raise AgradValueError(f"{label}: nothing to check: give values with --set and name "
                              "them with --wrt")  # fmt: skip
    return arguments, wrt


IMPORT_EXIT_HINT = (
    "; agrad imports the file to find the function: put the script's own code under "
    "if __name__ == '__main__':"
)


def exit_call(exc: SystemExit) -> str:
    """``sys.exit(5)``, ``sys.exit()``, ``sys.exit('msg')``: how the user's code exited."""
    return "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"


def _shapes(kwargs: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} (shape {tuple(np.shape(v))})" for k, v in kwargs.items())


@contextlib.contextmanager
def running_user_code(label: str) -> Iterator[None]:
    """While the user's code runs (its import, its calls, its custom backward): what it
    prints goes to stderr, so that stdout holds agrad's report alone (JSON, CSV or the
    table), and an exit of its own (sys.exit anywhere) is an error naming it."""
    with contextlib.redirect_stdout(sys.stderr):
        try:
            yield
        except SystemExit as exc:
            raise UserCodeError(
                f"{label}: the code called {exit_call(exc)} during the check; a function "
                "agrad checks must return its value: remove the exit"
            ) from None


def calling(func: Callable, label: str, expect: str, note: str = "") -> Callable:
    """``func`` with its failures reported as the user's (``note``: how agrad called it)."""

    def call(**kwargs: Any) -> Any:
        try:
            result = func(**kwargs)
        except SystemExit as exc:  # not agrad's exit status: the user's function's doing
            raise UserCodeError(
                f"{label} called {exit_call(exc)} (called with {_shapes(kwargs)}): a function "
                "agrad checks must return its value; remove the exit"
            ) from None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # (GeneratorExit, the user's own BaseException too)
            raise UserCodeError(
                f"{label} raised {type(exc).__name__}: {exc} (called with {_shapes(kwargs)}){note}",
                exc,
            ) from None
        return result

    call.__name__ = getattr(func, "__name__", "function")
    call.__doc__ = expect
    return call


def build_target(
    spec: str,
    grad_spec: str | None,
    values: Mapping[str, np.ndarray],
    wrt: list[str],
    grad_output: np.ndarray | None = None,
) -> tuple[Any, dict[str, np.ndarray] | None, str]:
    """The target for ``--python spec`` (and ``--grad grad_spec``): returns the target, the
    hand gradient's claims when it is judged beside autograd (three-way), and a label."""
    func, label, module = load_callable(spec)
    kind, why = detect(func, module)
    arguments, wrt = bind(func, label, values, wrt)
    call = calling(func, label, "the function", _called_as(kind, why))
    hand, grad_label = None, "the gradient function"
    if grad_spec is not None:
        grad_func, grad_label, _ = load_callable(grad_spec, "--grad")
        hand = calling(grad_func, grad_label, "the gradient")
    if grad_output is not None:
        call, hand = _projected(call, hand, grad_output, kind, wrt, grad_label)
    if kind == "agrad":
        target = _agrad_target(call, arguments, wrt, label)
    elif kind == "torch":
        from .torch_target import TorchTarget

        target = TorchTarget(call, arguments, wrt, label)
    else:
        if hand is None:
            raise AgradValueError(
                f"{label} is a NumPy function: give its hand-written gradient with --grad "
                "FILE.py:NAME (or write the function with 'import agrad as torch' to check "
                "autograd's)"
            )
        from .numpy_target import NumpyTarget

        return NumpyTarget(call, hand, arguments, wrt, label, grad_label), None, kind
    extra = None
    if hand is not None:
        from .numpy_target import hand_claims

        shapes = {n: np.shape(arguments[n]) for n in wrt}
        plain = {k: np.asarray(v) for k, v in arguments.items()}
        extra = hand_claims(hand(**plain), wrt, shapes, target.output_shape(wrt[0]),
                            f"--grad {grad_spec}", arguments=arguments)  # fmt: skip
    return target, extra, kind


def _called_as(kind: str, why: str) -> str:
    """What an error in the function adds: the kind agrad took it for, why, and how to
    make it another."""
    if kind == "numpy":
        return ""
    tensors = "agrad tensors" if kind == "agrad" else "torch tensors"
    return (
        f"; agrad called it with {tensors}, taking it for a function written "
        f"{WRITTEN[kind]} ({why}); a NumPy function (with --grad) is one whose code "
        "uses NumPy, not agrad or torch"
    )


def refuse_unsupported(kind: str, options: Any, label: str) -> None:
    """Settings a Python function cannot take (the CLI's and the suites' checks)."""
    if options.order == 2:
        raise AgradValueError(
            f"order 2 goes with a program; {label} is checked for first derivatives"
        )
    if options.method == "complex" and kind != "agrad":
        what = "a NumPy" if kind == "numpy" else "a PyTorch"
        raise AgradValueError(
            f"--method complex: {label} is {what} function; agrad takes the complex step "
            "only through its own ops, which it knows to be analytic: use the default method"
        )


def _agrad_target(call: Callable, arguments: Mapping[str, Any], wrt: list[str], label: str):
    from ..engine.tensor import Tensor, wrap
    from .callables import AgradCallableTarget

    names = list(arguments)
    inputs = []
    for name in names:
        array = np.asarray(arguments[name])
        leaf = name in wrt and array.dtype.kind == "f"
        inputs.append(wrap(array, leaf) if array.dtype.kind in "fiub" else arguments[name])

    def positional(*args: Any) -> Any:
        result = call(**dict(zip(names, args, strict=True)))
        if not isinstance(result, Tensor):
            raise AgradValueError(
                f"{label} must return an agrad tensor (it is written with 'import agrad as "
                f"torch'), got {type(result).__name__}"
            )
        return result

    return AgradCallableTarget(positional, inputs, wrt, [names.index(n) for n in wrt])


def _projected(
    call: Callable, hand: Callable | None, u: np.ndarray, kind: str, wrt: list[str],
    grad_label: str,
):  # fmt: skip
    """--grad-output: check the vector-Jacobian product, i.e. the gradient of sum(u·f)."""
    u = _cotangent(u)

    def projected(**kwargs: Any) -> Any:
        out = call(**kwargs)
        shape = tuple(np.shape(out))
        if shape != u.shape:
            raise AgradValueError(_shape_mismatch(u.shape, shape))
        weights = u
        if kind != "numpy":
            weights = type(out)(u) if kind == "torch" else _as_agrad(u, out)
            if kind == "torch":
                weights = weights.to(out.dtype)
        return (out * weights).sum()

    def contract(name: str, block: Any, variable: Any) -> Any:
        """A Jacobian block (output.shape + variable.shape) contracted with u."""
        try:
            array = np.asarray(block, dtype=np.float64)
        except (TypeError, ValueError):
            return block  # not numbers: hand_claims says so
        expected = u.shape + tuple(np.shape(variable))
        if array.shape != expected:
            raise AgradValueError(
                f"{grad_label}: the gradient for {name!r} has shape {array.shape}; with "
                f"--grad-output it must be the Jacobian block, shape {expected} (the output's "
                f"shape {u.shape} + {name}'s shape {tuple(np.shape(variable))}), which agrad "
                "contracts with the --grad-output vector itself"
            )
        return np.tensordot(u, array, axes=u.ndim)

    def projected_hand(**kwargs: Any) -> Any:
        result = hand(**kwargs)
        if isinstance(result, Mapping):
            return {k: contract(k, v, kwargs.get(k)) if k in wrt else v
                    for k, v in result.items()}  # fmt: skip
        parts = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(parts) != len(wrt):
            return result  # hand_claims says how many it expects
        contracted = [contract(n, v, kwargs[n]) for n, v in zip(wrt, parts, strict=True)]
        return contracted if isinstance(result, (tuple, list)) else contracted[0]

    return projected, (None if hand is None else projected_hand)


def _cotangent(u: Any) -> np.ndarray:
    """--grad-output's value: real, finite numbers."""
    u = np.asarray(u)
    if u.dtype.kind not in "fiub" or u.dtype.kind == "b":
        raise AgradValueError(f"--grad-output must be real numbers, got {u.dtype.name} values")
    u = u.astype(np.float64)
    if not np.all(np.isfinite(u)):
        flat = u.reshape(-1)
        k = int(np.argmin(np.isfinite(flat)))
        where = f" at index {tuple(int(i) for i in np.unravel_index(k, u.shape))}" if u.ndim else ""
        raise AgradValueError(f"--grad-output must be finite numbers: it has {flat[k]}{where}")
    return u


def _shape_mismatch(given: tuple, output: tuple) -> str:
    if not output:
        return (
            f"--grad-output has shape {given}, but the function's output is a single number "
            "(shape ()): drop --grad-output (a single-number output's gradient is checked "
            "as it is)"
        )
    return (
        f"--grad-output has shape {given}; it must have the function's output's shape "
        f"{output} (one weight per output element)"
    )


def _as_agrad(u: np.ndarray, like: Any) -> Any:
    from ..engine.tensor import wrap

    return wrap(np.asarray(u, dtype=like.dtype))


def judge_hand(target: Any, report: Any, hand: dict | None, options: Any, label: str) -> None:
    """Three-way: the hand gradient judged beside autograd, as --expect judges a formula."""
    from .checker import judge_claim

    if hand is None:
        return
    for name, variable in report.variables.items():
        variable.expect = judge_claim(target, name, hand[name], variable, options, label)
