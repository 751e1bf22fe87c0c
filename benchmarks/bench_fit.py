"""`agrad fit` against the same training loop in PyTorch and in agrad's Python API.

The workload: a least-squares line through 32 points, ``mean((w*x+b-y)**2)`` over the
scalars w and b, 10,000 steps of SGD (lr 0.1, momentum 0.9), reading the loss of every
step as a float (fit records the curve; the loops do the same). Three implementations,
interleaved in rounds in one process, each checked to reach the same w and b:

- a PyTorch loop (zero_grad, forward, backward, step): the reference;
- the same loop written with ``import agrad as torch``;
- `agrad.lang.fit.fit` on the program, which is what `agrad fit` runs after parsing (the
  command adds start-up and output, which bench_startup measures).

Run: python benchmarks/bench_fit.py [--steps N] [--rounds N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import gc  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402

PROGRAM = "mean((w*x+b-y)**2)"
LR, MOMENTUM = 0.1, 0.9
X = np.linspace(-1.0, 1.0, 32)
Y = 3.0 * X - 0.5 + 0.1 * np.sin(7.0 * X)  # a line plus a wiggle: the fit is not exact


def _loop(torch: Any, steps: int) -> tuple[float, float, float]:
    """The training loop as a PyTorch user writes it; run on torch and on agrad."""
    x, y = torch.tensor(X), torch.tensor(Y)
    w = torch.zeros((), dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=LR, momentum=MOMENTUM)
    loss = 0.0
    for _ in range(steps):
        opt.zero_grad()
        out = ((w * x + b - y) ** 2).mean()
        loss = float(out.detach())
        out.backward()
        opt.step()
    return float(w.detach()), float(b.detach()), loss


def torch_loop(steps: int) -> tuple[float, float, float]:
    import torch

    return _loop(torch, steps)


def agrad_loop(steps: int) -> tuple[float, float, float]:
    import agrad  # the same code as torch_loop (import agrad as torch)

    return _loop(agrad, steps)


def agrad_fit(steps: int) -> tuple[float, float, float]:
    from agrad.lang.fit import fit
    from agrad.lang.session import Session

    sets = [f"x={X.tolist()}", f"y={Y.tolist()}", "w=0", "b=0"]
    session = Session.create(PROGRAM, sets, ["w,b"])
    # fit takes steps+1 loss evaluations (the last one reports the final loss) and
    # `steps` updates; the loops take `steps` of both.
    result = fit(session, steps - 1, LR, MOMENTUM, "sgd")
    return float(result.values["w"]), float(result.values["b"]), result.loss


CASES = {
    "PyTorch loop (reference)": torch_loop,
    "agrad Python-API loop (import agrad as torch)": agrad_loop,
    "agrad fit (agrad.lang.fit.fit on the program)": agrad_fit,
}


def main(argv: list[str]) -> dict:
    steps = _common.int_arg(argv, "--steps", 10_000)
    rounds = _common.int_arg(argv, "--rounds", 3)
    env = _common.print_header(f"bench_fit: {steps:,} SGD steps of {PROGRAM}, 32 points")
    finals = {name: fn(steps) for name, fn in CASES.items()}  # warm-up, and the answers
    ref = finals["PyTorch loop (reference)"]
    for name, got in finals.items():
        _common.check_close(name, got[:2], ref[:2], rtol=1e-9, atol=1e-12)
    print(f"  all three reach w={ref[0]:.6f}, b={ref[1]:.6f} (loss {ref[2]:.6g})")
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(rounds):
        for name, fn in CASES.items():
            gc.collect()
            t0 = time.perf_counter()
            fn(steps)
            samples[name].append((time.perf_counter() - t0) / steps)
    base = statistics.median(samples["PyTorch loop (reference)"])
    results, rows = {}, []
    for name, s in samples.items():
        med = statistics.median(s)
        results[name] = {
            "us_per_step_median": med * 1e6,
            "us_per_step_min": min(s) * 1e6,
            "ratio_to_torch": med / base,
        }
        rows.append([name, f"{med * 1e6:.1f}", f"{min(s) * 1e6:.1f}", f"{med / base:.2f}x"])
    print(f"\n  {rounds} interleaved rounds of {steps:,} steps each\n")
    _common.print_table(["implementation", "us/step (median)", "min", "vs PyTorch"], rows)
    payload = {"env": env, "steps": steps, "results": results}
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
