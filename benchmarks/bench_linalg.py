"""The matrix-calculus ops against PyTorch (CPU, one thread) and hand-written NumPy, in one
process, float64: forward + backward of a scalar of each op (logdet, det, inv, solve,
cholesky, einsum), at n = 3 (Python overhead dominates) and n = 100 (LAPACK/BLAS does).
The hand NumPy column computes the same value and its closed-form gradient (inv(A).T for
logdet, ...). Gradients are checked against PyTorch's before timing.

Run: python benchmarks/bench_linalg.py [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402

import _common  # noqa: E402  (imports numpy/torch/agrad with the threads pinned)
import numpy as np  # noqa: E402
import torch  # noqa: E402

import agrad  # noqa: E402


def _hand_logdet(a):
    return np.linalg.slogdet(a)[1], np.linalg.inv(a).T


def _hand_inv(a):
    inv = np.linalg.inv(a)
    ones = np.ones_like(a)
    return inv.sum(), -(inv.T @ ones @ inv.T)


def _hand_solve(a, b):
    x = np.linalg.solve(a, b)
    gb = np.linalg.solve(a.T, np.ones_like(x))
    return x.sum(), -gb @ x.T


def _hand_einsum(a):
    return np.einsum("ij,jk->", a, a), (a.sum(0)[None, :] + a.sum(1)[:, None]).T


# name: (agrad function, torch function, hand NumPy value-and-gradient) of A (and B)
CASES = {
    "logdet": (agrad.logdet, torch.logdet, _hand_logdet),
    "inv (sum)": (lambda a: agrad.linalg.inv(a).sum(), lambda a: torch.linalg.inv(a).sum(),
                  _hand_inv),
    "solve (sum)": (None, None, _hand_solve),
    "cholesky (sum)": (lambda a: agrad.linalg.cholesky(a).sum(),
                       lambda a: torch.linalg.cholesky(a).sum(), None),
    "einsum ij,jk->": (lambda a: agrad.einsum("ij,jk->", a, a),
                       lambda a: torch.einsum("ij,jk->", a, a), _hand_einsum),
}  # fmt: skip


def main(argv):
    repeat = _common.int_arg(argv, "--repeat", 30)
    env = _common.print_header("bench_linalg: forward + backward of matrix ops, float64")
    rows, results = [], {}
    for n in (3, 100):
        rng = np.random.default_rng(n)
        m = rng.standard_normal((n, n))
        spd = m @ m.T + n * np.eye(n)
        rhs = rng.standard_normal((n, 4))
        for name, (ours, theirs, hand) in CASES.items():
            if name.startswith("solve"):
                tb = torch.tensor(rhs)
                ab = agrad.tensor(rhs)

                def ours(a, ab=ab):
                    return agrad.linalg.solve(a, ab).sum()

                def theirs(a, tb=tb):
                    return torch.linalg.solve(a, tb).sum()

                def hand(a, b=rhs):
                    return _hand_solve(a, b)

            def run_agrad(ours=ours, spd=spd):
                a = agrad.tensor(spd, requires_grad=True)
                ours(a).backward()
                return a.grad.numpy()

            def run_torch(theirs=theirs, spd=spd):
                a = torch.tensor(spd, requires_grad=True)
                theirs(a).backward()
                return a.grad.numpy()

            _common.check_close(f"{name} n={n}", run_agrad(), run_torch(), rtol=1e-9, atol=1e-12)
            times = {"agrad": _common.timeit(run_agrad, repeat=repeat)["median"],
                     "torch": _common.timeit(run_torch, repeat=repeat)["median"]}  # fmt: skip
            if hand is not None:
                _common.check_close(f"{name} n={n} (hand)", hand(spd)[1], run_torch(), rtol=1e-9)
                times["numpy"] = _common.timeit(
                    lambda hand=hand, spd=spd: hand(spd), repeat=repeat
                )["median"]
            results[f"{name} n={n}"] = {k: v * 1e6 for k, v in times.items()}
            numpy_us = f"{times['numpy'] * 1e6:.0f}" if "numpy" in times else "-"
            rows.append([f"{name}, n={n}", f"{times['agrad'] * 1e6:.0f}",
                         f"{times['torch'] * 1e6:.0f}", numpy_us,
                         f"{times['agrad'] / times['torch']:.2f}x"])  # fmt: skip
    _common.print_table(["op", "agrad µs", "torch µs", "hand NumPy µs", "agrad/torch"], rows)
    payload = {"benchmark": "linalg", "env": env, "results": results}
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
