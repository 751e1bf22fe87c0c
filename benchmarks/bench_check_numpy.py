"""Checking a hand-written gradient of a NumPy function with 1,000 inputs, in-process.

The function is the mean softmax cross-entropy of a linear layer, loss(W) for a fixed
batch (W: 50 x 20 = 1,000 inputs), and its hand-derived gradient. Side by side on the
same function and machine: agrad's checker (`agrad.check.check_numpy`, defaults),
`scipy.optimize.check_grad` (one forward difference per element), and
`torch.autograd.gradcheck` (slow mode, 2 calls per element; fast mode) on a custom
torch.autograd.Function whose forward calls the NumPy function and whose backward returns
the hand gradient. Accuracy: each numeric gradient against the exact one.

Run: python benchmarks/bench_check_numpy.py [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((32, 50))
Y = np.eye(20)[RNG.integers(0, 20, size=32)]
W0 = 0.1 * RNG.standard_normal((50, 20))


def loss(W):
    z = X @ W
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def grad(W):
    z = X @ W
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return X.T @ (p - Y) / X.shape[0]


def main(argv: list[str]) -> None:
    repeat = _common.int_arg(argv, "--repeat", 5)
    env = _common.print_header("check of a hand-written NumPy gradient, 1,000 inputs")
    from agrad.check import check_numpy

    exact = grad(W0)
    rows, results, accuracy = [], {}, {}

    def agrad_check():
        report = check_numpy(loss, grad, {"W": W0})
        assert report.ok
        return report

    v = agrad_check().variables["W"]
    accuracy["agrad check"] = float(np.max(np.abs(v.numeric.reshape(W0.shape) - exact)))
    per_element = v.evaluations / v.compared
    cases = {"agrad check (adaptive steps)": agrad_check}

    import scipy.optimize

    def scipy_check():
        return scipy.optimize.check_grad(
            lambda w: loss(w.reshape(W0.shape)),
            lambda w: grad(w.reshape(W0.shape)).ravel(),
            W0.ravel(),
        )

    cases["scipy.optimize.check_grad"] = scipy_check  # fmt: skip
    approx = scipy.optimize.approx_fprime(W0.ravel(), lambda w: loss(w.reshape(W0.shape)))
    accuracy["scipy (forward, eps 1.5e-8)"] = float(np.max(np.abs(approx - exact.ravel())))

    import torch

    class Loss(torch.autograd.Function):
        @staticmethod
        def forward(ctx, w):
            ctx.save_for_backward(w)
            return torch.tensor(loss(w.detach().numpy()), dtype=w.dtype)

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return g * torch.from_numpy(grad(w.detach().numpy()))

    wt = torch.tensor(W0, requires_grad=True)
    cases["torch.autograd.gradcheck (slow mode)"] = lambda: torch.autograd.gradcheck(
        Loss.apply, (wt,)
    )
    cases["torch.autograd.gradcheck (fast_mode)"] = lambda: torch.autograd.gradcheck(
        Loss.apply, (wt,), fast_mode=True
    )
    numeric = torch.autograd.gradcheck_numerical = None  # (no public API: measured below)
    del numeric
    h = 1e-6
    central = np.empty(W0.size)
    flat = W0.ravel().copy()
    for j in range(flat.size):  # what gradcheck's slow mode computes: central, eps 1e-6
        keep = flat[j]
        flat[j] = keep + h
        up = loss(flat.reshape(W0.shape))
        flat[j] = keep - h
        down = loss(flat.reshape(W0.shape))
        flat[j] = keep
        central[j] = (up - down) / (2 * h)
    accuracy["torch (central, eps 1e-6)"] = float(np.max(np.abs(central - exact.ravel())))
    for name, fn in cases.items():
        t = _common.timeit(fn, repeat=repeat, warmup=1)
        results[name] = t["median"] * 1e3
        rows.append([name, f"{t['median'] * 1e3:.2f}", f"{t['min'] * 1e3:.2f}"])
    base = results["torch.autograd.gradcheck (slow mode)"]
    for row in rows:
        row.append(f"{results[row[0]] / base:.2f}x")
    print()
    _common.print_table(["checker", "ms (median)", "min ms", "vs torch slow"], rows)
    print()
    print("max |numeric - exact| over the 1,000 gradient elements:")
    for name, err in accuracy.items():
        print(f"  {name:<30} {err:.2e}")
    print(f"\nagrad: {per_element:.2f} evaluations of the function per element")
    _common.write_json(
        _common.json_arg(argv),
        {"env": env, "ms": results, "accuracy": accuracy, "evaluations_per_element": per_element},
    )


if __name__ == "__main__":
    main(sys.argv[1:])
