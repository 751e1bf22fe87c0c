"""The confusion table on the adversarial corpus (tests/check_corpus.py): agrad's checker
beside torch.autograd.gradcheck, on the very same (function, claimed gradient) pairs.

Each claim reaches torch through a custom torch.autograd.Function whose forward runs the
NumPy function and whose backward returns the claim (times the incoming gradient, for
vector outputs the vector-Jacobian product), checked by gradcheck's defaults (eps 1e-6,
atol 1e-5, rtol 1e-3) in float64, and in float32 for the float32 pairs. agrad checks the
pair with `agrad.check.check_numpy` and its defaults.

A false pass is a wrong claim that passed; a false alarm a correct one that failed;
undecided (agrad only) neither passed nor failed. Kinks that agrad notes count as passes.

Run: python benchmarks/bench_corpus.py [--json PATH] [--verbose]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import _common  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from check_corpus import CORRECT, pairs  # noqa: E402


def torch_verdict(pair) -> tuple[str, float]:
    import torch

    dtype = torch.float32 if pair.dtype == "float32" else torch.float64

    class Claimed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            value = np.asarray(pair.func(x.detach().numpy().astype(np.float64)))
            return torch.tensor(value, dtype=dtype)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            claim = np.asarray(pair.claim(x.detach().numpy()), dtype=np.float64)
            out = g.detach().numpy().astype(np.float64).reshape(-1)
            jac = claim.reshape(out.size, -1)
            return torch.tensor((out @ jac).reshape(x.shape), dtype=dtype)

    x = torch.tensor(pair.x, dtype=dtype, requires_grad=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ok = torch.autograd.gradcheck(Claimed.apply, (x,), raise_exception=False)
        except Exception:  # a nan in the check itself counts as a failure
            ok = False
    return ("pass" if ok else "fail"), time.perf_counter() - t0


def agrad_verdict(pair) -> tuple[str, float, float]:
    from agrad.check import check_numpy

    t0 = time.perf_counter()
    report = check_numpy(lambda x: pair.func(x), lambda x: pair.claim(x), {"x": pair.x})
    v = report.variables["x"]
    verdict = {"kink": "pass"}.get(v.verdict, v.verdict)
    return verdict, time.perf_counter() - t0, v.evaluations / max(v.compared, 1)


def tally(outcomes):
    table = {"false pass": 0, "false alarm": 0, "undecided": 0, "right": 0}
    for truth, verdict in outcomes:
        if verdict == "undecided":
            table["undecided"] += 1
        elif (verdict == "pass") == (truth == CORRECT):
            table["right"] += 1
        else:
            table["false pass" if verdict == "pass" else "false alarm"] += 1
    return table


def main(argv: list[str]) -> None:
    verbose = "--verbose" in argv
    env = _common.print_header("confusion table on the adversarial corpus (tests/check_corpus.py)")
    result = {"env": env}
    for dtype in ("float64", "float32"):
        corpus = pairs(dtype)
        ours, theirs, evals = [], [], []
        seconds = {"agrad": 0.0, "torch": 0.0}
        for pair in corpus:
            a, ta, per = agrad_verdict(pair)
            t, tt = torch_verdict(pair)
            seconds["agrad"] += ta
            seconds["torch"] += tt
            ours.append((pair.truth, a))
            theirs.append((pair.truth, t))
            evals.append(per)
            if verbose or (a == "pass") != (pair.truth == CORRECT) or a == "undecided":
                print(f"  {pair.name:48s} truth {pair.truth:7s}  agrad {a:9s}  torch {t}")
        rows = []
        for name, outcomes in (("agrad check", ours), ("torch.autograd.gradcheck", theirs)):
            t = tally(outcomes)
            rows.append([name, t["right"], t["false pass"], t["false alarm"], t["undecided"]])
        correct = sum(p.truth == CORRECT for p in corpus)
        print(f"\n{dtype}: {len(corpus)} pairs ({correct} correct claims, "
              f"{len(corpus) - correct} wrong)")  # fmt: skip
        _common.print_table(["checker", "right", "false pass", "false alarm", "undecided"], rows)
        print(f"  agrad: {np.mean(evals):.1f} evaluations per element on average; "
              f"{seconds['agrad']:.2f} s in all (torch {seconds['torch']:.2f} s)")  # fmt: skip
        result[dtype] = {"rows": rows, "evaluations_per_element": float(np.mean(evals)),
                         "seconds": seconds}  # fmt: skip
    _common.write_json(_common.json_arg(argv), result)


if __name__ == "__main__":
    main(sys.argv[1:])
