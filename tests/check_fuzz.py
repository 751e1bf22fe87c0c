"""Random functions for fuzzing the checker, each built twice from one expression tree:
in NumPy (what the checker differentiates numerically) and in PyTorch (whose autograd,
an independent implementation, gives the exact gradient the claims are made from).

Shared by tests/test_check_fuzz.py (a quick seeded run) and benchmarks/fuzz_check.py
(a long one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# name: (numpy function, torch function name or callable); unary ops safe on all reals.
UNARY = {
    "sin": (np.sin, "sin"),
    "cos": (np.cos, "cos"),
    "tanh": (np.tanh, "tanh"),
    "exp": (lambda a: np.exp(np.clip(a, -30, 30)), None),  # clip keeps values finite
    "softplus": (lambda a: np.logaddexp(0.0, a), None),
    "sq": (np.square, "square"),
    "lsq": (lambda a: np.log1p(a * a), None),  # log(1 + a²)
    "rt": (lambda a: np.sqrt(1.0 + a * a), None),  # sqrt(1 + a²)
    "atan": (np.arctan, "atan"),
    "sig": (lambda a: 1.0 / (1.0 + np.exp(-a)), "sigmoid"),
}
KINKED = {"relu": (lambda a: np.maximum(a, 0.0), "relu"), "abs": (np.abs, "abs")}
BINARY = ("+", "-", "*")


@dataclass(frozen=True)
class Function:
    text: str
    numpy: Callable[[np.ndarray], float]
    torch: Callable
    n: int
    kinked: bool


def _torch_unary(name: str):
    import torch

    special = {
        "exp": lambda a: torch.exp(torch.clamp(a, -30, 30)),
        "softplus": lambda a: torch.nn.functional.softplus(a),
        "lsq": lambda a: torch.log1p(a * a),
        "rt": lambda a: torch.sqrt(1.0 + a * a),
    }
    if name in special:
        return special[name]
    table = {**UNARY, **KINKED}
    return getattr(torch, table[name][1])


def random_function(rng: np.random.Generator, kinks: bool = False, depth: int = 3) -> Function:
    """sum(w * tree(x)) for a random tree over the coordinates of x."""
    n = int(rng.integers(1, 12))
    names = list(UNARY) + (list(KINKED) if kinks else [])

    def build(d):
        r = rng.random()
        if d == 0 or r < 0.25:
            if rng.random() < 0.7:
                return ("x",)
            return ("c", float(np.round(rng.uniform(-2, 2), 2)))
        if r < 0.6:
            return ("u", names[int(rng.integers(len(names)))], build(d - 1))
        return ("b", BINARY[int(rng.integers(3))], build(d - 1), build(d - 1))

    tree = build(depth)
    weights = np.round(rng.uniform(-1.5, 1.5, n), 2)
    permutation = rng.permutation(n)  # mixes coordinates, so the Jacobian is not diagonal

    def evaluate(node, x, lib):
        kind = node[0]
        if kind == "x":
            return x
        if kind == "c":
            if lib == "numpy":
                return node[1]
            import torch

            return torch.tensor(node[1], dtype=x.dtype)
        if kind == "u":
            arg = evaluate(node[2], x, lib)
            if lib == "numpy":
                return {**UNARY, **KINKED}[node[1]][0](arg)
            return _torch_unary(node[1])(arg)
        a, b = evaluate(node[2], x, lib), evaluate(node[3], x[permutation], lib)
        return a + b if node[1] == "+" else a - b if node[1] == "-" else a * b

    def text(node):
        kind = node[0]
        if kind == "x":
            return "x"
        if kind == "c":
            return str(node[1])
        if kind == "u":
            return f"{node[1]}({text(node[2])})"
        return f"({text(node[2])} {node[1]} {text(node[3])}[p])"

    def f_numpy(x):
        return float(np.sum(weights * (evaluate(tree, x, "numpy") + 0.0 * x)))

    def f_torch(x):
        import torch

        w = torch.tensor(weights, dtype=x.dtype)
        return (w * (evaluate(tree, x, "torch") + 0.0 * x)).sum()

    uses_kink = kinks and any(k in text(tree) for k in KINKED)
    return Function(f"sum(w * {text(tree)})", f_numpy, f_torch, n, uses_kink)


def exact_gradient(fn: Function, x: np.ndarray) -> np.ndarray:
    """PyTorch's gradient; a gradient of rounding size is a zero one (the tree cancelled
    to a constant, and autograd left the residue of the terms that cancel)."""
    import torch

    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = fn.torch(t)
    (g,) = torch.autograd.grad(out, t, allow_unused=True)
    g = np.zeros_like(x) if g is None else g.numpy().copy()
    if np.max(np.abs(g), initial=0.0) <= 64 * np.finfo(float).eps * max(1.0, np.abs(x).max()):
        return np.zeros_like(g)
    return g


def wrong_claims(g: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The exact gradient broken: one element scaled by 1.01 (where it is large enough to
    matter at the tolerance), a sign flipped, an element moved by 1e-3 of the scale."""
    out = {}
    scale = float(np.max(np.abs(g), initial=0.0))
    if scale == 0.0:
        return {"offset 1e-3": g + 1e-3, "one element 1e-6": np.where(np.arange(g.size) == 0,
                                                                     1e-6, g)}  # fmt: skip
    big = np.nonzero(np.abs(g) > 0.1 * scale)[0]
    j = int(rng.choice(big))
    scaled = g.copy()
    scaled[j] *= 1.01
    out["one element x1.01"] = scaled
    flipped = g.copy()
    flipped[j] = -flipped[j]
    out["one sign"] = flipped
    moved = g.copy()
    moved[int(rng.integers(g.size))] += 1e-3 * scale
    out["one element + 1e-3 of the scale"] = moved
    return out
