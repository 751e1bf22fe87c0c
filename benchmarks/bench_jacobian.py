"""Jacobian of f(x) = tanh(A @ x), A nxn, x n (float64), n = 50 and 200: batched vs looped
reverse mode.

agrad.autograd.functional.jacobian pushes all n one-hot cotangents through the graph as
ONE batched backward pass. Compared with PyTorch's three ways (n separate backward passes
with retain_graph=True; torch.func.jacrev; torch.autograd.functional.jacobian with
vectorize=True), HIPS autograd's jacobian, and NumPy by hand: the closed form
J = (1 - y**2)[:, None] * A (the reference), and the same one-hot batched backward that
agrad runs, written out (diag(1 - y**2) @ A, an nxnxn matmul). Goal (issue 15): agrad
<= 2x that one-hot batched backward at n = 50; n = 200 no worse than before.

Run: python benchmarks/bench_jacobian.py [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402

import _common  # noqa: E402  (imports numpy/torch/agrad with the threads pinned)
import autograd  # noqa: E402
import autograd.numpy as anp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import agrad  # noqa: E402

SIZES = (50, 200)
ROUNDS = 5


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def make_cases(A, x):
    N = len(x)
    A_ag, x_ag = agrad.tensor(A), agrad.tensor(x)
    A_th, x_th = torch.tensor(A), torch.tensor(x)
    eye_th = torch.eye(N, dtype=torch.float64)

    def numpy_closed():
        y = np.tanh(A @ x)
        return (1.0 - y * y)[:, None] * A

    def numpy_batched():  # what one batched backward computes: E * (1 - y^2), then @ A
        y = np.tanh(A @ x)
        dz = np.eye(N) * (1.0 - y * y)
        return dz @ A

    def agrad_jac():
        return agrad.autograd.functional.jacobian(lambda v: agrad.tanh(A_ag @ v), x_ag)

    def f_th(v):
        return torch.tanh(A_th @ v)

    def torch_loop():
        xv = x_th.detach().requires_grad_(True)
        y = f_th(xv)
        rows = [torch.autograd.grad(y, xv, eye_th[i], retain_graph=True)[0] for i in range(N)]
        return torch.stack(rows)

    jacrev = torch.func.jacrev(f_th)

    def torch_jacrev():
        return jacrev(x_th)

    def torch_functional():
        return torch.autograd.functional.jacobian(f_th, x_th, vectorize=True)

    hips_jac = autograd.jacobian(lambda v: anp.tanh(anp.dot(A, v)))

    def hips():
        return hips_jac(x)

    return [
        ("numpy closed form (reference)", numpy_closed, lambda J: J),
        ("numpy one-hot batched backward", numpy_batched, lambda J: J),
        ("agrad functional.jacobian (1 batched pass)", agrad_jac, lambda J: J.numpy()),
        (f"torch: {N} x autograd.grad(retain_graph)", torch_loop, lambda J: J.numpy()),
        ("torch.func.jacrev", torch_jacrev, lambda J: J.numpy()),
        ("torch.autograd.functional.jacobian(vectorize)", torch_functional, lambda J: J.numpy()),
        ("HIPS autograd.jacobian", hips, lambda J: J),
    ]


def run(n, repeat):
    A, x = make_data(n)
    cases = make_cases(A, x)
    ref = cases[0][1]()
    for name, fn, to_np in cases:
        _common.check_close(name, to_np(fn()), ref, rtol=1e-9, atol=1e-12)
    print(
        f"\n  n = {n}: all {len(cases)} Jacobians agree with the closed form (rtol 1e-9); "
        f"median/min of {repeat} runs, {ROUNDS} interleaved rounds"
    )
    raw = {name: [] for name, _, _ in cases}
    for _ in range(ROUNDS):
        for name, fn, _ in cases:
            raw[name] += _common.timeit(fn, repeat=max(repeat // ROUNDS, 3), warmup=2)["samples"]
    if n == LOOP_N:  # also back to back, as a loop of Jacobians runs (see `loop_ratio`)
        results_loop = loop_ratio(cases, repeat)
    base = float(np.median(raw[cases[0][0]]))
    onehot = float(np.median(raw[cases[1][0]]))
    ag = float(np.median(raw[cases[2][0]]))
    rows, results = [], {}
    for name, _, _ in cases:
        med = float(np.median(raw[name]))
        results[name] = {
            "ms_median": med * 1e3,
            "ms_min": min(raw[name]) * 1e3,
            "ratio_to_numpy": med / base,
            "ratio_to_onehot": med / onehot,
            "ratio_to_agrad": med / ag,
        }
        rows.append(
            [
                name,
                f"{med * 1e3:.3f}",
                f"{min(raw[name]) * 1e3:.3f}",
                f"{med / base:.1f}x",
                f"{med / onehot:.2f}x",
                f"{med / ag:.2f}x",
            ]
        )
    _common.print_table(
        ["method", "ms (median)", "min ms", "vs numpy closed", "vs numpy one-hot", "vs agrad"],
        rows,
    )
    if n == LOOP_N:
        results["loop"] = results_loop
        ag, onehot = results_loop["agrad_us"], results_loop["onehot_us"]
        print(f"  back to back ({LOOP_NUMBER} calls a sample): agrad {ag:.1f} us, NumPy one-hot "
              f"{onehot:.1f} us, ratio {ag / onehot:.2f}x")  # fmt: skip
    return results


LOOP_N, LOOP_NUMBER = 50, 500


def loop_ratio(cases, repeat):
    """agrad's Jacobian against the NumPy one-hot backward with ``LOOP_NUMBER`` calls back to
    back per sample (caches warm, no collection between calls), rounds interleaved."""
    chosen = {name: fn for name, fn, _ in cases[1:3]}
    samples = {name: [] for name in chosen}
    for _ in range(ROUNDS):
        for name, fn in chosen.items():
            timed = _common.timeit(
                fn, repeat=max(repeat // ROUNDS, 3), number=LOOP_NUMBER, warmup=LOOP_NUMBER
            )
            samples[name] += timed["samples"]
    onehot, ag = (float(np.median(s)) for s in samples.values())
    return {"agrad_us": ag * 1e6, "onehot_us": onehot * 1e6, "ratio_to_onehot": ag / onehot}


def main(argv):
    repeat = _common.int_arg(argv, "--repeat", 35)
    env = _common.print_header("bench_jacobian: J of tanh(A @ x), A nxn, float64")
    sizes = [_common.int_arg(argv, "--n", 0)] if "--n" in argv else SIZES
    by_n = {n: run(n, repeat) for n in sizes}
    # "results" stays the n = 200 table (run_all.py's README table reads it).
    payload = {"benchmark": "jacobian", "env": env, "results": by_n.get(200, by_n[sizes[-1]])}
    payload["results_by_n"] = by_n
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
