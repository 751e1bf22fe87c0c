"""agrad.nn against PyTorch (CPU, one thread), in one process, float32 and float64:

  - resnet18 forward+backward on 1x3x64x64 and 8x3x64x64 (train mode, sum of the logits);
  - one Conv2d layer alone (64 -> 64 channels, 3x3, on 8x64x32x32), forward+backward.

Both models hold the same weights (copied by name), and their losses and gradients are
checked against each other before timing. Then agrad's time is split by op (forward and
VJP of each op-table entry, exclusive of nested ops; "outside ops" is the rest: modules,
the backward loop, Python), next to PyTorch's own profile of the same step.

Run: python benchmarks/bench_nn.py [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import _common  # noqa: E402  (imports numpy/torch/agrad with the threads pinned)
import numpy as np  # noqa: E402
import torch  # noqa: E402

import agrad  # noqa: E402
from agrad import nn, vision  # noqa: E402
from agrad.engine.ops import TABLE  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from torch_resnet import copy_state, torch_resnet  # noqa: E402

GOAL = 3.0  # resnet18 within 3x PyTorch


def _step_agrad(model, x):
    model.zero_grad()
    model(x).sum().backward()


def _step_torch(model, x):
    model.zero_grad()
    model(x).sum().backward()


def _pair_resnet(dtype):
    agrad.manual_seed(0)
    ours = vision.models.resnet18().to(dtype)
    theirs = torch_resnet(torch).to(getattr(torch, np.dtype(dtype).name))
    return ours, copy_state(torch, ours, theirs)


def _pair_conv(dtype):
    agrad.manual_seed(0)
    ours = nn.Conv2d(64, 64, 3, padding=1).to(dtype)
    theirs = torch.nn.Conv2d(64, 64, 3, padding=1).to(getattr(torch, np.dtype(dtype).name))
    copy_state(torch, ours, theirs)
    return ours, theirs


def _verify(name, ours, theirs, x):
    xa, xt = agrad.tensor(x), torch.tensor(x)
    _step_agrad(ours, xa)
    _step_torch(theirs, xt)
    tol = 1e-9 if x.dtype == np.float64 else 1e-3
    for (k, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        ref = q.grad.numpy()
        scale = max(1.0, float(np.abs(ref).max()))  # float32: relative to the largest entry
        _common.check_close(f"{name} grad {k}", p.grad, ref, rtol=tol, atol=tol * scale)


class OpTimer:
    """Exclusive time spent in each op's forward and VJP (nested op calls subtracted)."""

    def __init__(self):
        self.times = defaultdict(float)
        self.stack = []
        self.saved = {}

    def _wrap(self, key, fn):
        def timed(*args, **kwargs):
            self.stack.append(0.0)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t0
                nested = self.stack.pop()
                self.times[key] += spent - nested
                if self.stack:
                    self.stack[-1] += spent

        return timed

    def __enter__(self):
        for name, op in TABLE.items():
            self.saved[name] = (op.forward, op.vjp)
            object.__setattr__(op, "forward", self._wrap((name, "forward"), op.forward))
            if op.vjp is not None:
                object.__setattr__(op, "vjp", self._wrap((name, "backward"), op.vjp))
        from agrad.engine import namespaces

        self._cached = dict(vars(namespaces.NUMPY))
        for key in list(vars(namespaces.NUMPY)):  # cached forwards: look them up again
            if key in TABLE:
                delattr(namespaces.NUMPY, key)
        return self

    def __exit__(self, *exc):
        for name, (forward, vjp) in self.saved.items():
            object.__setattr__(TABLE[name], "forward", forward)
            object.__setattr__(TABLE[name], "vjp", vjp)
        from agrad.engine import namespaces

        for key in list(vars(namespaces.NUMPY)):
            if key in TABLE:
                delattr(namespaces.NUMPY, key)


def op_split(model, x, rounds=5):
    xa = agrad.tensor(x)
    _step_agrad(model, xa)
    with OpTimer() as timer:
        t0 = time.perf_counter()
        for _ in range(rounds):
            _step_agrad(model, xa)
        total = (time.perf_counter() - t0) / rounds
    rows = sorted(timer.times.items(), key=lambda kv: -kv[1])
    split = [(f"{name} {kind}", t / rounds) for (name, kind), t in rows]
    inside = sum(t for _, t in split)
    return total, split, total - inside


def torch_profile(model, x, rounds=5):
    xt = torch.tensor(x)
    _step_torch(model, xt)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(rounds):
            _step_torch(model, xt)
    events = prof.key_averages()
    top = sorted(events, key=lambda e: -e.self_cpu_time_total)[:8]
    return [(e.key, e.self_cpu_time_total / 1e6 / rounds) for e in top]


def main(argv):
    repeat = _common.int_arg(argv, "--repeat", 7)
    env = _common.print_header("agrad.nn vs PyTorch (CPU, 1 thread)")
    rng = np.random.default_rng(0)
    results, rows = {}, []
    cases = [("resnet18 fwd+bwd", _pair_resnet, (1, 3, 64, 64)),
             ("resnet18 fwd+bwd", _pair_resnet, (8, 3, 64, 64)),
             ("Conv2d 64->64 3x3 fwd+bwd", _pair_conv, (8, 64, 32, 32))]  # fmt: skip
    splits = {}
    for dtype in (np.float32, np.float64):
        for name, make, shape in cases:
            ours, theirs = make(dtype)
            x = rng.random(shape).astype(dtype)
            label = f"{name} {'x'.join(map(str, shape))} {np.dtype(dtype).name}"
            _verify(label, ours, theirs, x)
            xa, xt = agrad.tensor(x), torch.tensor(x)
            a = _common.timeit(lambda: _step_agrad(ours, xa), repeat=repeat)  # noqa: B023
            t = _common.timeit(lambda: _step_torch(theirs, xt), repeat=repeat)  # noqa: B023
            ratio = a["median"] / t["median"]
            rows.append([label, f"{a['median'] * 1e3:.1f} ms", f"{t['median'] * 1e3:.1f} ms",
                         f"{ratio:.2f}x"])  # fmt: skip
            results[label] = {"agrad": a, "torch": t, "ratio": ratio}
            if dtype == np.float32 or "Conv2d" in name:
                splits[label] = (op_split(ours, x), torch_profile(theirs, x))
    _common.print_table(["case", "agrad", "PyTorch", "ratio"], rows)
    worst = max(r["ratio"] for k, r in results.items() if "resnet18" in k)
    print(f"\nresnet18: worst ratio {worst:.2f}x (goal <= {GOAL:.1f}x)")
    for label, ((total, split, outside), theirs) in splits.items():
        print(f"\n-- time split, {label}: agrad {total * 1e3:.1f} ms per step")
        table = [[k, f"{v * 1e3:.2f} ms", f"{100 * v / total:.0f}%"] for k, v in split[:10]]
        table.append(["outside ops (modules, backward loop)", f"{outside * 1e3:.2f} ms",
                      f"{100 * outside / total:.0f}%"])  # fmt: skip
        _common.print_table(["agrad op", "time", "share"], table)
        print("  PyTorch's profile (self CPU time per step):")
        _common.print_table(["PyTorch op", "time"], [[k, f"{v * 1e3:.2f} ms"] for k, v in theirs])
        results[label]["split"] = {k: v for k, v in split}
        results[label]["outside_ops"] = outside
        results[label]["torch_profile"] = dict(theirs)
    _common.write_json(_common.json_arg(argv), {"environment": env, "results": results})


if __name__ == "__main__":
    main(sys.argv[1:])
