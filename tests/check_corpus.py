"""An adversarial corpus of (function, claimed gradient) pairs whose truth is known.

Each function comes with its exact gradient, derived by hand (the algebra is in the
lambda beside the function); wrong claims are the exact gradient broken the ways real
gradients break: scaled by 1.01 or 1.001, a sign flipped, transposed, a broadcast sum
forgotten (a mean, or one row, in its place), one element of 1000 wrong. Points are the
hard ones: high curvature (exp(k·x) up to k = 1e6), near poles and log(0), large
magnitude (sin at 1e11, where steps relative to x are far too coarse), tiny gradients,
minima, float32, 1,000 inputs, true kinks (where any valid subgradient is right) and
near-kinks (relu at 1e-9, where only the derivative is).

Used by tests/test_check_corpus.py (the verdicts) and benchmarks/bench_corpus.py (the
confusion table beside torch.autograd.gradcheck on the same pairs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

CORRECT, WRONG = "correct", "wrong"


@dataclass(frozen=True)
class Pair:
    name: str
    func: Callable[[np.ndarray], np.ndarray]
    claim: Callable[[np.ndarray], np.ndarray]  # the gradient (scalar f) or Jacobian claimed
    x: np.ndarray
    truth: str  # CORRECT or WRONG
    kink: bool = False  # x is a point of non-differentiability (a valid subgradient is right)
    undecidable: bool = False  # no finite difference can decide at the tolerance

    @property
    def dtype(self) -> str:
        return np.dtype(self.x.dtype).name


def _lin(lo: float, hi: float, n: int) -> np.ndarray:
    return np.linspace(lo, hi, n)


def _breaks(name, f, g, x, kink=False):
    """The correct pair and the usual wrong ones (where the gradient is zero, a scale or
    a sign changes nothing: there the wrong claims are small offsets instead)."""
    yield Pair(name, f, g, x, CORRECT, kink)
    if np.all(g(x) == 0):
        yield Pair(name + " +1e-3", f, lambda x: g(x) + 1e-3, x, WRONG, kink)
        yield Pair(name + " +1e-6", f, lambda x: g(x) + 1e-6, x, WRONG, kink)
        return
    yield Pair(name + " ×1.01", f, lambda x: 1.01 * g(x), x, WRONG, kink)
    yield Pair(name + " ×1.001", f, lambda x: 1.001 * g(x), x, WRONG, kink)
    yield Pair(name + " sign", f, lambda x: -g(x), x, WRONG, kink)


# ---- smooth scalar functions: name, f, exact gradient, point ---------------------------

SMOOTH = [
    ("exp", lambda x: np.sum(np.exp(x)), lambda x: np.exp(x), _lin(-1, 2, 5)),
    ("exp(1e2 x)", lambda x: np.sum(np.exp(1e2 * x)), lambda x: 1e2 * np.exp(1e2 * x),
     _lin(-0.02, 0.03, 4)),
    ("exp(1e4 x)", lambda x: np.sum(np.exp(1e4 * x)), lambda x: 1e4 * np.exp(1e4 * x),
     _lin(-2e-4, 3e-4, 4)),
    ("exp(1e6 x)", lambda x: np.sum(np.exp(1e6 * x)), lambda x: 1e6 * np.exp(1e6 * x),
     _lin(-2e-6, 3e-6, 4)),
    ("sin(x)x² n=1000", lambda x: np.sum(np.sin(x) * x**2),
     lambda x: np.cos(x) * x**2 + 2 * x * np.sin(x), _lin(-3, 3, 1000)),
    ("1/x near pole", lambda x: np.sum(1 / x), lambda x: -1 / x**2,
     np.array([4e-6, -2e-5, 1e-3])),
    ("log near 0", lambda x: np.sum(np.log(x)), lambda x: 1 / x, np.array([1e-8, 1e-3, 0.5])),
    ("tan near pi/2", lambda x: np.sum(np.tan(x)), lambda x: 1 / np.cos(x) ** 2,
     np.array([np.pi / 2 - 1e-4, 1.5])),
    ("sin at 1e6", lambda x: np.sum(np.sin(x)), lambda x: np.cos(x), np.array([1e6, -3e6])),
    ("sin at 1e11", lambda x: np.sum(np.sin(x)), lambda x: np.cos(x), np.array([1e11, -3e8])),
    ("x/1e3 + sin at 1e6", lambda x: np.sum(x / 1e3 + np.sin(x)), lambda x: 1e-3 + np.cos(x),
     np.array([2e5, -7e6])),
    ("sin(1e4 x)", lambda x: np.sum(np.sin(1e4 * x)), lambda x: 1e4 * np.cos(1e4 * x),
     _lin(0.1, 0.9, 5)),
    ("x² at 1e6", lambda x: np.sum(x**2), lambda x: 2 * x, np.array([1e6, -2e6])),
    ("log at 1e6", lambda x: np.sum(np.log(x)), lambda x: 1 / x, np.array([1e6, 3e7])),
    ("1e-12 sin (tiny)", lambda x: 1e-12 * np.sum(np.sin(x)), lambda x: 1e-12 * np.cos(x),
     _lin(0.1, 1.0, 4)),
    ("exp(-x) at 30 (tiny)", lambda x: np.sum(np.exp(-x)), lambda x: -np.exp(-x),
     np.array([30.0, 31.0])),
    ("10x² at its minimum", lambda x: np.sum(10 * x**2), lambda x: 20 * x, np.zeros(3)),
    ("cosh at its minimum", lambda x: np.sum(np.cosh(x)), lambda x: np.sinh(x), np.zeros(2)),
    ("sqrt(x) near 0", lambda x: np.sum(np.sqrt(x)), lambda x: 0.5 / np.sqrt(x),
     np.array([1e-10, 1e-4])),
    ("softplus", lambda x: np.sum(np.logaddexp(0, x)), lambda x: 0.5 * (1 + np.tanh(x / 2)),
     _lin(-30, 30, 7)),
    ("quartic", lambda x: np.sum((x - 1) ** 4), lambda x: 4 * (x - 1) ** 3, _lin(0, 2, 5)),
]  # fmt: skip


def _matrix_pairs():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((3, 3))
    x0 = rng.standard_normal(3)

    def f(W):  # sum(tanh(W @ x0))
        return np.sum(np.tanh(W.reshape(3, 3) @ x0))

    def g(W):  # (1 - tanh²(W x0)) x0ᵀ
        t = np.tanh(W.reshape(3, 3) @ x0)
        return np.outer(1 - t**2, x0).reshape(W.shape)

    W = A.copy()
    yield Pair("sum(tanh(W@x))", f, g, W, CORRECT)
    yield Pair("sum(tanh(W@x)) transposed", f, lambda W: g(W).T, W, WRONG)
    yield Pair("sum(tanh(W@x)) ×1.001", f, lambda W: 1.001 * g(W), W, WRONG)

    def jac_f(x):  # softmax(x): vector output
        e = np.exp(x - x.max())
        return e / e.sum()

    def jac_g(x):  # diag(s) - s sᵀ
        s = jac_f(x)
        return np.diag(s) - np.outer(s, s)

    xs = np.array([0.3, -1.2, 2.0, 0.1])
    yield Pair("softmax Jacobian", jac_f, jac_g, xs, CORRECT)
    yield Pair("softmax Jacobian, 1e-3 off above the diagonal", jac_f, lambda x: jac_g(x) + 1e-3 *
               np.triu(np.ones((4, 4)), 1), xs, WRONG)  # fmt: skip
    yield Pair("softmax Jacobian sign", jac_f, lambda x: -jac_g(x), xs, WRONG)

    # A broadcast: f(b) = sum((X + b)²) with X (5, 3), b (3,): grad = 2 Σ_rows (X + b).
    X = rng.standard_normal((5, 3))
    b = rng.standard_normal(3)

    def fb(b):
        return np.sum((X + b) ** 2)

    yield Pair("broadcast bias", fb, lambda b: 2 * np.sum(X + b, axis=0), b, CORRECT)
    yield Pair("broadcast bias, mean not sum", fb, lambda b: 2 * np.mean(X + b, axis=0), b,
               WRONG)  # fmt: skip
    yield Pair("broadcast bias, one row", fb, lambda b: 2 * (X + b)[0], b, WRONG)

    # 1,000 inputs, one element wrong.
    x = _lin(-2, 2, 1000)

    def one_wrong(x):
        g = np.cos(x) * x**2 + 2 * x * np.sin(x)
        g[417] *= 1.01
        return g

    yield Pair("n=1000, one element ×1.01", lambda x: np.sum(np.sin(x) * x**2), one_wrong, x,
               WRONG)  # fmt: skip

    # A wrong second derivative: the gradient of sum(x³·y0) as the function, its Hessian
    # (diagonal 6·x·y0) as the claim; the wrong one forgets the factor 2 of the power rule.
    y0 = np.array([1.5, -0.5, 2.0])
    hess = Pair("Hessian of sum(x³y)", lambda x: 3 * x**2 * y0, lambda x: np.diag(6 * x * y0),
                np.array([0.7, -1.1, 0.4]), CORRECT)  # fmt: skip
    yield hess
    yield Pair("Hessian of sum(x³y), factor lost", hess.func, lambda x: np.diag(3 * x * y0),
               hess.x, WRONG)  # fmt: skip


def _kinks():
    relu = lambda x: np.sum(np.maximum(x, 0))  # noqa: E731
    absf = lambda x: np.sum(np.abs(x))  # noqa: E731
    at0 = np.array([0.0, 1.5, -0.5])
    # relu at 0: any value in [0, 1] is a subgradient there.
    yield Pair("relu at 0, 0 (PyTorch)", relu, lambda x: (x > 0) * 1.0, at0, CORRECT, True)
    yield Pair("relu at 0, 0.5", relu, lambda x: np.where(x == 0, 0.5, x > 0), at0, CORRECT, True)
    yield Pair("relu at 0, 2", relu, lambda x: np.where(x == 0, 2.0, x > 0), at0, WRONG, True)
    yield Pair("relu at 0, -1", relu, lambda x: np.where(x == 0, -1.0, x > 0), at0, WRONG, True)
    yield Pair("abs at 0, 0", absf, lambda x: np.sign(x), at0, CORRECT, True)
    yield Pair("abs at 0, 1", absf, lambda x: np.where(x == 0, 1.0, np.sign(x)), at0, CORRECT, True)
    yield Pair("abs at 0, 1.5", absf, lambda x: np.where(x == 0, 1.5, np.sign(x)), at0, WRONG, True)
    tie = np.array([1.0, 1.0, 0.0])
    mx = lambda x: np.max(x)  # noqa: E731
    yield Pair("max tie, shared", mx, lambda x: np.array([0.5, 0.5, 0.0]), tie, CORRECT, True)
    yield Pair("max tie, first", mx, lambda x: np.array([1.0, 0.0, 0.0]), tie, CORRECT, True)
    yield Pair("max tie, both 1", mx, lambda x: np.array([1.0, 1.0, 0.0]), tie, WRONG, True)
    yield Pair("max tie, negative", mx, lambda x: np.array([1.5, -0.5, 0.0]), tie, WRONG, True)
    # relu(x) - relu(-x) is x: differentiable, although its pieces are not at 0.
    ident = lambda x: np.sum(np.maximum(x, 0) - np.maximum(-x, 0))  # noqa: E731
    yield Pair("relu(x)-relu(-x) at 0, 1", ident, lambda x: np.ones_like(x), np.zeros(2), CORRECT)
    yield Pair("relu(x)-relu(-x) at 0, 0", ident, lambda x: np.zeros_like(x), np.zeros(2), WRONG)
    # Near-kinks: differentiable, the kink closer than the usual steps.
    near = np.array([1e-9, -1e-9])
    yield Pair("relu at ±1e-9", relu, lambda x: (x > 0) * 1.0, near, CORRECT)
    yield Pair("relu at ±1e-9, 0.5", relu, lambda x: np.where(np.abs(x) < 1e-6, 0.5, x > 0),
               near, WRONG)  # fmt: skip
    yield Pair("relu at ±1e-9, flipped", relu, lambda x: np.where(np.abs(x) < 1e-6, x < 0, x > 0)
               * 1.0, near, WRONG)  # fmt: skip
    yield Pair("abs at 1e-9", absf, lambda x: np.sign(x), np.array([1e-9, -3e-9]), CORRECT)
    yield Pair("abs at 1e-9, 0", absf, lambda x: np.zeros_like(x), np.array([1e-9, -3e-9]), WRONG)


def pairs(dtype: str = "float64") -> list[Pair]:
    out = []
    for name, f, g, x in SMOOTH:
        out += list(_breaks(name, f, g, x.astype(np.float64)))
    out += list(_matrix_pairs())
    out += list(_kinks())
    if dtype == "float32":
        return [_as_float32(p) for p in out if _float32_friendly(p)]
    return out


def _float32_friendly(p: Pair) -> bool:
    """Points that float32 can represent meaningfully (not 1e-9 from a kink, not 1e6
    where its ulp is 0.06, not exp(1e6 x) whose inputs round away)."""
    x = np.abs(p.x[p.x != 0])
    return (
        bool(x.size == 0 or (x.min() >= 1e-3 and x.max() <= 1e3))
        and "1e6" not in p.name
        and ("1e4" not in p.name)
    )


def _as_float32(p: Pair) -> Pair:
    """The same pair with float32 inputs: the claim is computed in float32 (it carries
    float32 rounding, as a float32 gradient does)."""

    def claim(x, c=p.claim):
        return np.asarray(c(x.astype(np.float32)), dtype=np.float32)

    return Pair(p.name + " [float32]", p.func, claim, p.x.astype(np.float32), p.truth, p.kink,
                p.undecidable)  # fmt: skip
