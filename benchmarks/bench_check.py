"""The gradient check of sum(sin(x) * x**2) with 1,000 inputs, in-process.

Compared on the same function and machine: agrad's checker (the default: the complex
step, every op being analytic; the adaptive ladder alone; fixed central and Richardson
steps; --fast projections; and a program with a kink, where the ladder must run), the
same function written in Python for agrad.autograd.gradcheck (slow and fast mode: the
recorded graph replayed, proved and cross-checked, see agrad.check.recorded), the same
as a custom autograd Function with a hand-written backward (called point by point, never
replayed), against torch.autograd.gradcheck on the same function and on the equivalent
torch.autograd.Function, and a plain Python loop of central differences over NumPy.
Rounds are interleaved (each case once per round), so a busy machine slows all alike.
Accuracy is measured against the exact gradient 2x sin x + x^2 cos x; evaluations are
per compared element.

Run: python benchmarks/bench_check.py [--n N] [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402


def main(argv: list[str]) -> None:
    n = _common.int_arg(argv, "--n", 1000)
    repeat = _common.int_arg(argv, "--repeat", 7)
    env = _common.print_header(f"gradient check of sum(sin(x)*x**2), {n} inputs")
    from agrad.check.checker import CheckOptions, check
    from agrad.lang.session import Session

    x0 = np.random.default_rng(0).standard_normal(n)
    exact = 2 * x0 * np.sin(x0) + x0**2 * np.cos(x0)
    np.save("/tmp/agrad_bench_x.npy", x0)
    session = Session.create("sum(sin(x)*x**2)", ["x=@/tmp/agrad_bench_x.npy"], ["x"])

    kinked = Session.create("sum(sin(x)*x**2) + sum(relu(x - 10))",
                            ["x=@/tmp/agrad_bench_x.npy"], ["x"])  # fmt: skip

    def agrad_check(method="auto", fast=False, s=session):
        return check(s, CheckOptions(method=method, fast=fast))

    evaluations = {}

    def numeric_error(method):
        report = agrad_check(method)
        assert report.ok
        v = report.variables["x"]
        evaluations[method] = v.evaluations / v.compared
        return float(np.max(np.abs(v.numeric.reshape(-1) - exact)))

    def plain_loop():
        eps = 1e-6
        grad = np.empty(n)
        x = x0.copy()
        for j in range(n):
            keep = x[j]
            x[j] = keep + eps
            up = np.sum(np.sin(x) * x**2)
            x[j] = keep - eps
            down = np.sum(np.sin(x) * x**2)
            x[j] = keep
            grad[j] = (up - down) / (2 * eps)
        return grad

    rows, results = [], {}
    cases = {
        "agrad check (default: complex step)": lambda: agrad_check(),
        "agrad check --method ridders (adaptive steps)": lambda: agrad_check("ridders"),
        "agrad check, a program with relu (ladder)": lambda: agrad_check(s=kinked),
        "agrad check --method central (one step)": lambda: agrad_check("central"),
        "agrad check --method richardson": lambda: agrad_check("richardson"),
        "agrad check --fast": lambda: agrad_check(fast=True),
        "plain Python loop of central differences": plain_loop,
    }
    import agrad

    xa = agrad.tensor(x0, requires_grad=True)
    cases.update(_gradcheck_cases("agrad", agrad, xa))
    try:
        import torch

        torch.set_num_threads(1)
        cases.update(_gradcheck_cases("torch", torch, torch.tensor(x0, requires_grad=True)))
    except ImportError:
        print("  (torch not installed: its rows are skipped)")
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        assert fn() is not False  # warm-up, and every check passes
    for _ in range(repeat):  # interleaved rounds
        for name, fn in cases.items():
            started = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - started)
    for name, times in samples.items():
        results[name] = statistics.median(times) * 1e3
        rows.append([name, f"{results[name]:.2f}", f"{min(times) * 1e3:.2f}"])
    base = results.get("torch.autograd.gradcheck (slow mode)")
    for row in rows:
        row.append(f"{results[row[0]] / base:.2f}x" if base else "-")
    print()
    _common.print_table(["method", "ms (median)", "min ms", "vs torch slow"], rows)
    accuracy = {
        "auto (complex step)": numeric_error("auto"),
        "ridders": numeric_error("ridders"),
        "central": numeric_error("central"),
        "richardson": numeric_error("richardson"),
        "plain loop (eps 1e-6)": float(np.max(np.abs(plain_loop() - exact))),
    }
    kink_report = agrad_check(s=kinked).variables["x"]
    evaluations["ladder (relu program)"] = kink_report.evaluations / kink_report.compared
    print()
    print(f"max |numeric - exact| over the {n:,} gradient elements:")
    for name, err in accuracy.items():
        print(f"  {name:<24} {err:.2e}")
    print()
    print("function evaluations per compared element:")
    for name, count in evaluations.items():
        print(f"  {name:<24} {count:.2f}")
    _common.write_json(
        _common.json_arg(argv),
        {"env": env, "ms": results, "accuracy": accuracy, "evaluations": evaluations},
    )


def _gradcheck_cases(label: str, lib, x) -> dict:
    """gradcheck of the function, slow and fast mode, and of the same function as a custom
    autograd Function with a hand-written backward (written once for both libraries)."""

    class SinX2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.save_for_backward(v)
            return lib.sin(v) * v**2

        @staticmethod
        def backward(ctx, g):
            (v,) = ctx.saved_tensors
            return g * (2 * v * lib.sin(v) + v**2 * lib.cos(v))

    def f(v):
        return (lib.sin(v) * v**2).sum()

    def custom(v):
        return SinX2.apply(v).sum()

    check = lib.autograd.gradcheck
    return {
        f"{label}.autograd.gradcheck (slow mode)": lambda: check(f, (x,)),
        f"{label}.autograd.gradcheck (fast_mode)": lambda: check(f, (x,), fast_mode=True),
        f"{label}.autograd.gradcheck, custom Function": lambda: check(custom, (x,)),
        f"{label}.autograd.gradcheck, custom Function, fast_mode": lambda: check(
            custom, (x,), fast_mode=True
        ),
    }


if __name__ == "__main__":
    main(sys.argv[1:])
