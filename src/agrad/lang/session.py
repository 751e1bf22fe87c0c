"""What the CLI asks for, computed here: a program with its --set/--wrt/--dtype options,
evaluated for its value and gradients, Jacobians or Hessians. Plain results out;
rendering is the CLI's job."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.autograd import grad as autograd_grad
from ..engine.functional import batched_jacobian
from ..engine.tensor import Tensor, wrap
from ..errors import AgradLimitError, AgradNameError, AgradValueError
from ..records import field, record, replace
from .gcpause import paused_gc
from .program import MAX_ELEMENTS, Prepared, Program, Run
from .values import parse_value, split_assignment


@record
class Variable:
    """One variable's value and gradient as the CLI reports them."""

    name: str
    value: np.ndarray
    grad: np.ndarray | None = None
    used: bool = True  # False: the output does not depend on it (its gradient is zero)
    role: str = "input"  # "input" (a leaf) or "intermediate" (retain_grad)


@record
class Evaluation:
    value: np.ndarray
    grad_fn: str | None
    variables: dict[str, Variable] = field(default_factory=dict)
    anomaly: Any = None  # with detect_anomaly: where the first nan or inf appeared


@record
class Session:
    """A compiled program plus its options: run it, differentiate it, re-run it."""

    program: Program
    bindings: dict[str, np.ndarray]
    wrt: list[str]
    dtype: Any = np.float64
    seed: int | None = 0
    max_elements: int = MAX_ELEMENTS

    @classmethod
    def create(
        cls,
        source: str,
        sets: list[str] = (),
        wrt: list[str] = (),
        *,
        dtype: Any = np.float64,
        seed: int | None = 0,
        max_elements: int = MAX_ELEMENTS,
    ) -> Session:
        program = Program.compile(source)
        bindings = {}
        for option in sets:
            name, text = split_assignment(option)
            if name in bindings:
                raise AgradValueError(f"--set {name}: given twice; keep one of them")
            bindings[name] = parse_value(
                text, f"--set {name}", seed=seed, max_elements=max_elements
            )
        names = [n.strip() for item in wrt for n in item.split(",")]
        if any(not n for n in names):
            raise AgradNameError(
                "--wrt: an empty name; write names separated by commas, e.g. --wrt w,b"
            )
        program.check_names(bindings, names)
        return cls(program, bindings, names, np.dtype(dtype), seed, max_elements)

    def run(self, bindings: dict[str, Any] | None = None) -> Run:
        values = self.bindings if bindings is None else {**self.bindings, **bindings}
        return self.program.run(
            values, self.wrt, dtype=self.dtype, seed=self.seed, max_elements=self.max_elements
        )

    def widened(self) -> Session:
        """This session in float64, its --set values rounded to its own dtype first: the
        function a float32 run computes, in float64 arithmetic (what the checker's replay
        of the recorded float32 graph computes; re-parsing 0.1 in float64 would differ
        from it by 1e-8 of f, and finite differences mixing the two saw noise)."""
        narrow = np.dtype(self.dtype)
        bindings = {
            name: value.astype(narrow).astype(np.float64)
            if isinstance(value, np.ndarray) and value.dtype.kind == "f"
            and value.dtype.itemsize > narrow.itemsize
            else value
            for name, value in self.bindings.items()
        }  # fmt: skip
        return replace(self, bindings=bindings, dtype=np.dtype(np.float64))

    def prepare(self, varying: list[str]) -> Prepared:
        """The program ready to run many times with new values of the ``varying`` names
        (`Prepared.run`), each run as `run` with those values would be."""
        return self.program.prepare(
            self.bindings,
            self.wrt,
            dtype=self.dtype,
            seed=self.seed,
            max_elements=self.max_elements,
            varying=varying,
        )

    def targets(self, run: Run) -> dict[str, Tensor]:
        """The --wrt variables, or else the leaves the program declares requires_grad."""
        if self.wrt:
            return run.wrt
        return {n: t for n, t in run.env.items() if t.is_leaf and t.requires_grad}

    @paused_gc()
    def evaluate(self, grad_output: str | None = None, detect_anomaly: bool = False) -> Evaluation:
        run = self.run()
        out = run.output
        targets = self.targets(run)
        result = Evaluation(out._array, out.grad_fn.name() if out.grad_fn else None)
        if targets and out.requires_grad:
            seed = self._cotangent(out, grad_output)
            if detect_anomaly:  # before the gradients: they free the graph
                from . import anomaly

                result.anomaly = anomaly.find(self.program, run, list(targets.values()), seed)
            grads = autograd_grad(out, list(targets.values()), grad_outputs=seed, allow_unused=True)
        else:  # nothing to differentiate, or an output that depends on no variable
            grads = [None] * len(targets)
            if detect_anomaly:
                from . import anomaly

                result.anomaly = anomaly.forward_origin(
                    self.program.source, self.program.parsed.instrs, run.slots
                )
        for (name, t), g in zip(targets.items(), grads, strict=True):
            result.variables[name] = _variable(name, t, g)
        return result

    @paused_gc()
    def explain(self, grad_output: str | None = None) -> tuple[Evaluation, list]:
        """The evaluation plus the backward pass step by step (see `agrad.lang.explain`)."""
        from .explain import explain

        run = self.run()
        out = run.output
        targets = self.targets(run)
        result = Evaluation(out._array, out.grad_fn.name() if out.grad_fn else None)
        steps = []
        if targets and out.requires_grad and out.grad_fn is None:
            # The output is one of the variables itself: no backward step to show, and its
            # gradient is what plain evaluation reports.
            return self.evaluate(grad_output), steps
        if targets and out.requires_grad:
            steps = explain(out, run.env, self._cotangent(out, grad_output))
        for name, t in targets.items():
            result.variables[name] = _variable(name, t, t._grad)
        return result, steps

    def _check_block(self, what: str, elements: int) -> None:
        if elements > self.max_elements:
            raise AgradLimitError(
                f"{what} would have {elements:,} elements, more than the limit of "
                f"{self.max_elements:,}; use fewer or smaller variables, 'agrad check --fast', "
                "or raise the limit with --max-elements"
            )

    def _cotangent(self, out: Tensor, grad_output: str | None) -> Tensor | None:
        if grad_output is None:
            if out._array.size != 1:
                raise AgradValueError(
                    f"the output has shape {tuple(out.shape)}, not a single number, so it has no "
                    "gradient of its own: give --grad-output VALUE (the backward 'gradient', a "
                    "vector-Jacobian product) or use 'agrad jacobian'"
                )
            return None
        g = parse_value(
            grad_output, "--grad-output", seed=self.seed, max_elements=self.max_elements
        ).astype(out.dtype)
        if g.size != 1 and g.shape != tuple(out.shape):  # (one number: the same for each)
            raise AgradValueError(
                f"--grad-output has shape {tuple(g.shape)}, but the output has shape "
                f"{tuple(out.shape)}; give one value per output element, or a single number"
            )
        return wrap(np.array(np.broadcast_to(g.reshape(()) if g.size == 1 else g, out.shape)))

    @paused_gc()
    def jacobian(self) -> tuple[np.ndarray, dict[str, Variable]]:
        """d output / d variable for each --wrt variable: shape output.shape + var.shape."""
        run = self.run()
        out, targets = run.output, self.targets(run)
        for name, t in targets.items():
            self._check_block(f"the Jacobian block for {name!r}", out._array.size * t._array.size)
        blocks = batched_jacobian(out, tuple(targets.values()))
        result = {}
        for (name, t), block in zip(targets.items(), blocks, strict=True):
            used = block is not None
            data = np.zeros(out.shape + t.shape) if block is None else block._array
            result[name] = Variable(
                name, t._array, data, used, "input" if t.is_leaf else "intermediate"
            )
        return out._array, result

    @paused_gc()
    def hessian(self) -> tuple[np.ndarray, dict[str, Variable], dict[tuple[str, str], np.ndarray]]:
        """Second derivatives of a scalar output: per-variable blocks and mixed blocks."""
        run = self.run()
        out, targets = run.output, self.targets(run)
        if out._array.size != 1:
            raise AgradValueError(
                f"hessian needs a single-number output, but it has shape "
                f"{tuple(out.shape)}; reduce it first, e.g. sum(...)"
            )
        tensors = list(targets.values())
        names = list(targets)
        total = sum(t._array.size for t in tensors)
        self._check_block("the Hessian", total * total)
        diag, mixed = {}, {}
        if not out.requires_grad:
            grads = [None] * len(tensors)
        else:
            grads = autograd_grad(out.reshape(()), tensors, create_graph=True, allow_unused=True)
        for i, (name, t, g) in enumerate(zip(names, tensors, grads, strict=True)):
            if g is None or not g.requires_grad:
                blocks = [None] * len(tensors)
            else:
                blocks = batched_jacobian(g, tuple(tensors))
            for j, (other, b) in enumerate(zip(names, blocks, strict=True)):
                block = np.zeros(t.shape + tensors[j].shape) if b is None else b._array
                if i == j:
                    diag[name] = Variable(name, t._array, block, g is not None)
                elif i < j:
                    mixed[(name, other)] = block
        return out._array, diag, mixed


def _variable(name: str, t: Tensor, grad: Tensor | None) -> Variable:
    """A --wrt variable's report entry; no gradient means the output does not use it."""
    return Variable(
        name,
        t._array,
        np.zeros_like(t._array) if grad is None else np.asarray(grad._array),
        used=grad is not None,
        role="input" if t.is_leaf else "intermediate",
    )
