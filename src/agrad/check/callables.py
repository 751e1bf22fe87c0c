"""Python functions written with agrad as check targets (gradcheck, `agrad check --python`).

The numeric side calls the function itself at every point, with its floating inputs in
float64 — unless the recording proves that the graph is the function (`recorded`: no
value escaped into Python, every node an op of the table, a second recording at another
point the same tape); then it replays the graph batched, cross-checked against real
calls, and falls back to calling the function on any disagreement. A gradient lost
through ``.item()``, ``.numpy()``, ``.detach()`` or a custom Function's own code is seen
as the user wrote it. The claim is autograd's Jacobian, one batched backward pass per
output, in the inputs' dtype and, for the precision triage, with float64 inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..engine.args import CASTS
from ..engine.autograd import grad as autograd_grad
from ..engine.functional import batched_jacobian
from ..engine.grad_mode import set_grad_enabled
from ..engine.replay import Tape
from ..engine.tensor import Tensor, wrap
from ..errors import AgradValueError
from .held import Held, originals_of
from .recorded import (
    PERTURBED,
    Replay,
    ReplayMismatch,
    agree,
    checked,
    directions,
    escapes,
    moved,
    replayable,
    same_tape,
)
from .targets import Variable, pointwise

# Points a variable's check evaluates by calls with grad mode on before the calls without
# it are proved and used (the proof costs 2 x (1 + 2 x PERTURBED) calls).
LONG = 64


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class NoFloatingOutput(AgradValueError):
    """The function returns only integer or bool tensors (PyTorch's gradcheck: vacuously
    True; `agrad check`: bad input)."""


class AgradCallableTarget:
    """``func(*inputs)`` at ``inputs``: each input that is a floating Tensor requiring grad
    is a variable (named by ``names``, default "input 0", "input 1", ...)."""

    def __init__(
        self,
        func: Callable[..., Any],
        inputs: Sequence[Any],
        names: Sequence[str] | None = None,
        positions: Sequence[int] | None = None,
    ) -> None:
        self.func = func
        self.inputs = tuple(inputs)
        if positions is None:
            positions = [
                i for i, x in enumerate(self.inputs) if isinstance(x, Tensor) and x.requires_grad
            ]
        self.positions = list(positions)
        self.names = list(names) if names is not None else [f"input {i}" for i in positions]
        narrowed: list[np.dtype] = []
        outer, CASTS.seen = CASTS.seen, narrowed
        versions = [x._version if isinstance(x, Tensor) else 0 for x in self.inputs]
        try:
            outputs = self._call(self.inputs, record=True, wide=False)
        finally:
            CASTS.seen = outer
        _refuse_written(self.inputs, versions, self.names, self.positions)
        if not outputs:
            raise NoFloatingOutput(
                "the function returns no floating-point tensor (only integer or bool ones): "
                "there is no derivative to check; return the floating values it computes"
            )
        # As PyTorch's gradcheck: where some outputs require grad, only those are checked
        # (one marked non-differentiable, or detached, is no claim); where none does, all
        # are, and their derivatives must then be zero.
        differentiable = [i for i, o in enumerate(outputs) if o.requires_grad]
        if differentiable and len(differentiable) < len(outputs):
            self._kept = differentiable
            outputs = [outputs[i] for i in differentiable]
        self.outputs = outputs
        # The claim's precision: the inputs', or a narrower float the function casts to
        # (x.float() inside); every other call computes in float64 throughout (see _call).
        self.dtype = _common_dtype([self.inputs[i] for i in self.positions], narrowed)
        self.shapes = [tuple(o.shape) for o in outputs]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self._claims: dict[bool, dict[str, np.ndarray]] = {}
        self._replay: list[Replay | None] = []  # made on first use

    def _call(self, args: tuple, record: bool, wide: bool = True) -> list[Tensor]:
        """The function's outputs; ``wide``: its casts to narrower floats keep float64 (the
        numeric side and the float64 twin; only the claim is computed as written)."""
        was, CASTS.wide = CASTS.wide, wide
        try:
            with set_grad_enabled(record):
                result = _as_tuple(self.func(*args))
        finally:
            CASTS.wide = was
        outs = []
        for o in result:
            if not isinstance(o, Tensor):
                raise TypeError(
                    f"the function must return a Tensor or a tuple of Tensors, got "
                    f"{type(o).__name__}"
                )
            if o._array.dtype.kind in "fc":  # integer outputs: no derivative to check
                outs.append(o)
        return outs if self._kept is None else [outs[i] for i in self._kept]

    _kept: list[int] | None = None  # the floating outputs that are checked, when not all
    _originals: dict[int, np.ndarray] | None = None  # (see `Held`)
    _swap = True  # float32 tensors hold float64 arrays while a call runs (see `_can_swap`)
    nondet_tol: float = 0.0  # how far two backward passes may differ (gradcheck's)

    def _holding(self, points: dict[int, np.ndarray] | None = None) -> Held:
        """The inputs as arguments holding float64 values (`Held`)."""
        if self._originals is None:
            self._originals = originals_of(self.inputs)
            self._swap = self._can_swap()
        return Held(self.inputs, points or {}, self._originals, self._swap)

    def _can_swap(self) -> bool:
        """Whether the function runs with its float32 tensors holding float64 arrays; code
        that checks their dtypes against each other (an RNN's weights against its input)
        refuses it (QA round 30), and is then given float64 copies, as before (their other
        uses do not move then)."""
        if all(not isinstance(x, Tensor) or x._array.dtype == np.float64 for x in self.inputs):
            return True
        try:
            with Held(self.inputs, {}, self._originals) as args:
                self._call(args, record=True)
        except Exception:  # noqa: BLE001 - the function's own refusal: copies instead
            return False
        return True

    def output_shape(self, name: str) -> tuple[int, ...]:
        return self.shapes[0] if len(self.shapes) == 1 else (sum(self.sizes),)

    def position(self, name: str) -> int:
        return self.positions[self.names.index(name)]

    def function(self, name: str) -> Variable:
        """f along one variable: the proved replay (with the point-by-point calls as its
        fallback), or the point-by-point calls."""
        exact = self.called(name)
        if not self._replay:
            self._replay.append(self._record_replay())
        replay = self._replay[0]
        if replay is None:
            return self._unrecorded(name, exact)
        j = self.names.index(name)
        batch, confirm = replay.checked_batch(j)
        exact_complex = replay.batch(j, complex_=True) if replay.holomorphic else None
        return Variable(exact.base, batch, exact_complex, fallback=lambda: exact,
                        confirm=confirm)  # fmt: skip

    def called(self, name: str) -> Variable:
        """f along one variable, calling the function at every point."""
        # Called as PyTorch's gradcheck calls it: grad mode on, the inputs still requiring
        # grad (a function that differentiates inside, as gradgradcheck's does, needs both).
        k = self.position(name)
        base = np.array(self.inputs[k]._array, dtype=np.float64)

        def value(point: np.ndarray) -> np.ndarray:
            with self._holding({k: point}) as args:
                return _flat(self._call(args, record=True))

        return Variable(base, pointwise(value, sum(self.sizes), base))

    def _unrecorded(self, name: str, exact: Variable) -> Variable:
        """``exact``, but after its first ``LONG`` points the calls are made with grad mode
        off (no graph recorded: a custom Function's call costs about half) where their
        values are the same bit for bit at the base and at perturbed points; they are then
        checked as a replay is while the check runs (a short check, --fast's, is not worth
        the proof). Calls with grad mode on throughout where the values differ or the code
        fails without it (it differentiates inside, or reads grad mode)."""
        k = self.position(name)

        def value(point: np.ndarray, record: bool) -> np.ndarray:
            with self._holding({k: point}) as args:
                return _flat(self._call(args, record=record))

        def quiet(point: np.ndarray) -> np.ndarray:
            try:
                return value(point, False)
            except Exception as exc:
                raise ReplayMismatch(f"a call with grad mode off failed: {exc}") from exc

        def prove() -> tuple | None:
            rng = np.random.default_rng(20261202)
            steps = directions([exact.base], rng, PERTURBED)
            points = [exact.base] + [p[0] for p in moved([exact.base], steps)]
            try:
                if not all(agree(value(p, True), value(p, False)) for p in points):
                    return None
            except Exception:  # the code refuses grad mode off: keep it on
                return None
            return checked(pointwise(quiet), lambda p: value(p, True))

        state: dict[str, Any] = {"seen": 0, "quiet": None, "proved": False}

        def batch(points: np.ndarray) -> np.ndarray:
            if not state["proved"] and state["seen"] >= LONG:
                state["proved"], state["quiet"] = True, prove()
            if state["quiet"] is not None:
                return state["quiet"][0](points)
            state["seen"] += len(points)
            return exact.batch(points)

        def confirm(points: np.ndarray) -> None:
            if state["quiet"] is not None:
                state["quiet"][1](points)

        return Variable(exact.base, batch, fallback=lambda: exact, confirm=confirm)

    def _record_replay(self) -> Replay | None:
        """The replay of a float64 recording, when it is proved to be the function."""
        with self._holding() as wide:
            with escapes() as escaped:
                outputs = self._call(wide, record=True)
            if escaped():
                return None
            try:
                with np.errstate(all="ignore"):
                    return self._proved(wide, outputs)
            except Exception:  # (e.g. the function refuses a perturbed point): not proved
                return None

    def _proved(self, wide: tuple, outputs: list[Tensor]) -> Replay | None:
        leaves = [wide[i] for i in self.positions]
        tapes = [Tape(o, leaves).own_constants() for o in outputs]  # (see `Held`)
        if not all(replayable(t) for t in tapes):
            return None
        bases = [np.array(leaf._array, dtype=np.float64) for leaf in leaves]  # (ours)

        def real(arrays: list[np.ndarray]) -> np.ndarray:
            with self._holding(dict(zip(self.positions, arrays, strict=True))) as args:
                return _flat(self._call(args, record=True))

        # The tape must be the same (constants, parameters bit for bit) at every perturbed
        # point, both ways along each direction: moving every coordinate at once by exactly
        # the ladder's first step, one of the two points crosses any boundary along a
        # coordinate. (Masks and indices read from the values never get here: they move
        # the escape counter, since a sum can fold them into a constant that hides them.)
        steps = directions(bases, np.random.default_rng(20261201))
        at_points = []
        for point in moved(bases, steps):
            with self._holding(dict(zip(self.positions, point, strict=True))) as args:
                with escapes() as escaped:
                    again = self._call(args, record=True)
                if escaped() or len(again) != len(outputs):
                    return None
                others = [args[i] for i in self.positions]
                if not all(
                    same_tape(Tape(o, others), t) for o, t in zip(again, tapes, strict=True)
                ):
                    return None
                at_points.append(_flat(again))
        replay = Replay(tapes, bases, real)
        return replay if replay.cross_check(steps, _flat(outputs), at_points) else None

    def claim(self, name: str, wide: bool = False) -> np.ndarray:
        if wide not in self._claims:
            self._claims[wide] = self._jacobians(wide)
        return self._claims[wide][name]

    def _jacobians(self, wide: bool) -> dict[str, np.ndarray]:
        if not wide:
            return self._blocks(self.inputs, self.outputs)
        with self._holding() as args:  # (held while the backward pass reads them too)
            return self._blocks(args, self._call(args, record=True))

    def _blocks(self, args: tuple, outputs: list[Tensor]) -> dict[str, np.ndarray]:
        leaves = tuple(args[i] for i in self.positions)
        rows: dict[str, list[np.ndarray]] = {n: [] for n in self.names}
        for out, size in zip(outputs, self.sizes, strict=True):
            blocks = batched_jacobian(out, leaves)
            for name, leaf, block in zip(self.names, leaves, blocks, strict=True):
                n = leaf._array.size
                rows[name].append(
                    np.zeros((size, n)) if block is None
                    else block._array.astype(np.float64).reshape(size, n)
                )  # fmt: skip
        m = sum(self.sizes)
        return {
            name: np.concatenate(r, axis=0) if r else np.zeros((m, 0)) for name, r in rows.items()
        }

    def vjp(self, name: str, u: np.ndarray) -> np.ndarray:
        leaf = self.inputs[self.position(name)]
        parts, start = [], 0
        wanted = []
        for out, size in zip(self.outputs, self.sizes, strict=True):
            if out.requires_grad:
                piece = np.asarray(u[start : start + size], dtype=out.dtype).reshape(out.shape)
                parts.append(wrap(piece))
                wanted.append(out)
            start += size
        if not wanted:
            return np.zeros(leaf._array.size)
        g = autograd_grad(wanted, [leaf], grad_outputs=parts, retain_graph=True,
                          allow_unused=True)[0]  # fmt: skip
        return np.zeros(leaf._array.size) if g is None else g._array.astype(np.float64).reshape(-1)


def _refuse_written(inputs: tuple, versions: list[int], names: list[str], positions: list[int]):
    """A function that writes into an input in place (x.pow_(3) with mark_dirty, c.mul_(2))
    computes another function at every call: there is nothing to compare its gradient with
    (QA round 28: "a leaf Variable ... in-place operation" about agrad's own copy, or "the
    rule is wrong" at values the first call had cubed)."""
    for i, (x, before) in enumerate(zip(inputs, versions, strict=True)):
        if isinstance(x, Tensor) and x._version != before:
            name = names[positions.index(i)] if i in positions else f"input {i}"
            raise AgradValueError(
                f"the function writes into {name} in place, so each call starts from the "
                "values the last one left: a gradient check needs a function of its inputs' "
                "values; clone the input first (lambda t: F.apply(t.clone()))"
            )


def _flat(outputs: list[Tensor]) -> np.ndarray:
    if len(outputs) == 1:
        return np.array(outputs[0]._array, dtype=np.float64).reshape(-1)
    return np.concatenate([np.asarray(o._array, np.float64).reshape(-1) for o in outputs])


def _common_dtype(tensors: list[Tensor], narrowed: list[np.dtype]) -> str:
    """The claim's precision: the inputs' (float64 if any is: operations promote to it),
    or the narrowest float a cast inside the function went to."""
    names = {np.dtype(t.dtype).name for t in tensors}
    name = "float64" if not names or "float64" in names else sorted(names)[0]
    for dtype in narrowed:
        if dtype.itemsize < np.dtype(name).itemsize:
            name = dtype.name
    return name
