"""A long fuzz of the checker: random functions (tests/check_fuzz.py) with their exact
gradients from PyTorch's autograd, claimed right and broken three ways each; smooth trees,
trees with relu/abs at random points, and float32 claims. Prints the confusion counts.

Run: python benchmarks/fuzz_check.py [--functions N] [--seed S]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from check_fuzz import exact_gradient, random_function, wrong_claims  # noqa: E402


def main(argv: list[str]) -> None:
    count = _common.int_arg(argv, "--functions", 2000)
    seed = _common.int_arg(argv, "--seed", 1)
    _common.print_header(f"checker fuzz: {count} random functions x 4 claims")
    from agrad.check import check_numpy

    tally: Counter = Counter()
    bad = []
    started = time.perf_counter()
    for k in range(count):
        rng = np.random.default_rng(seed * 1_000_003 + k)
        kinks, dtype = k % 3 == 1, (np.float32 if k % 3 == 2 else np.float64)
        fn = random_function(rng, kinks=kinks)
        x = rng.uniform(-2, 2, fn.n).astype(dtype)
        g = exact_gradient(fn, x.astype(np.float64))
        claims = {"right": g, **wrong_claims(g, rng)}
        for name, claim in claims.items():
            claim = claim.astype(dtype)
            report = check_numpy(lambda x, f=fn: f.numpy(x), lambda x, c=claim: c, {"x": x})
            verdict = report.variables["x"].verdict
            truth = "right" if name == "right" else "wrong"
            if verdict == "undecided":
                outcome = "undecided"
            elif (verdict in ("pass", "kink")) == (truth == "right"):
                outcome = "right"
            else:
                outcome = "false pass" if truth == "wrong" else "false alarm"
            tally[outcome] += 1
            if outcome != "right":
                bad.append((outcome, fn.text, name, np.dtype(dtype).name, x.tolist()))
    seconds = time.perf_counter() - started
    print(f"{sum(tally.values())} checks in {seconds:.1f} s: " + ", ".join(
        f"{k} {v}" for k, v in sorted(tally.items())))  # fmt: skip
    for item in bad[:20]:
        print("  ", *item)


if __name__ == "__main__":
    main(sys.argv[1:])
