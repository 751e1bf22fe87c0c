"""Per-node overhead: a 10,000-node chain of scalar ops, forward+backward.

    y = x;  for i in range(10_000):  y = (y * 1.0001, y + 0.001, sin(y))[i % 3]
    dy/dx by reverse mode

The arrays are 0-d, so this measures only the engine: creating a tensor and a graph
node per op, the topological sort, and one VJP call per node. Compared: agrad, HIPS
autograd, PyTorch, and a pure-Python micrograd-style scalar engine (below) as the floor
for any engine that does Python-level work per node. All gradients are checked against
the chain rule evaluated with plain floats.

Then issue 15's goal table: the chain y = sin(y*1.0001 + 0.001) at 1k, 10k and 100k nodes,
agrad against PyTorch interleaved in one child process, GC on, in a fresh child and in a
busy one (holding BUSY_OBJECTS live GC-tracked objects, as a process that imported other
libraries and holds data does). The ratio is of medians; the min ratio is shown beside it.

Run: python benchmarks/bench_overhead.py [--nodes N] [--repeat N] [--json PATH] [--profile]
                                         [--no-goal] [--goal-only]
"""

import functools
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import math  # noqa: E402
import sys  # noqa: E402

import _common  # noqa: E402  (imports numpy/torch/agrad with the threads pinned)
import autograd  # noqa: E402
import autograd.numpy as anp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import agrad  # noqa: E402

X0 = 0.5
ROUNDS = 4


# ---- the floor: a 40-line iterative scalar engine ---------------------------------------


class Value:
    """A scalar that records its parents and the local derivative towards each."""

    __slots__ = ("data", "grad", "_prev", "_local")

    def __init__(self, data, prev=(), local=()):
        self.data, self.grad, self._prev, self._local = data, 0.0, prev, local

    def __add__(self, other):
        if isinstance(other, Value):
            return Value(self.data + other.data, (self, other), (1.0, 1.0))
        return Value(self.data + other, (self,), (1.0,))

    def __mul__(self, other):
        if isinstance(other, Value):
            return Value(self.data * other.data, (self, other), (other.data, self.data))
        return Value(self.data * other, (self,), (other,))

    def sin(self):
        return Value(math.sin(self.data), (self,), (math.cos(self.data),))

    def backward(self):
        topo, seen, stack = [], set(), [(self, False)]
        while stack:  # iterative DFS: post-order = every node after its inputs
            v, expanded = stack.pop()
            if expanded:
                topo.append(v)
            elif v not in seen:
                seen.add(v)
                stack.append((v, True))
                stack.extend((p, False) for p in v._prev if p not in seen)
        self.grad = 1.0
        for v in reversed(topo):  # consumers before producers
            for p, d in zip(v._prev, v._local, strict=True):
                p.grad += d * v.grad


# ---- the chain, once per framework -------------------------------------------------------


def chain(x, sin, n):
    y = x
    for i in range(n):
        k = i % 3
        if k == 0:
            y = y * 1.0001
        elif k == 1:
            y = y + 0.001
        else:
            y = sin(y)
    return y


def reference(n):
    """(y, dy/dx) by the chain rule on plain floats."""
    y, d = X0, 1.0
    for i in range(n):
        k = i % 3
        if k == 0:
            y, d = y * 1.0001, d * 1.0001
        elif k == 1:
            y = y + 0.001
        else:
            y, d = math.sin(y), d * math.cos(y)
    return y, d


def make_cases(n):
    """name -> (forward_setup, forward, backward, fwd_bwd): forward builds the graph,
    backward consumes one forward's result, fwd_bwd does both and returns dy/dx."""

    # agrad
    def ag_leaf():
        return agrad.tensor(X0, dtype=agrad.float64, requires_grad=True)

    def ag_fwd(x):
        return x, chain(x, agrad.sin, n)

    def ag_bwd(xy):
        xy[1].backward()
        return xy[0].grad

    def ag_fb():
        x = ag_leaf()
        chain(x, agrad.sin, n).backward()
        return x.grad.item()

    # PyTorch
    def th_leaf():
        return torch.tensor(X0, dtype=torch.float64, requires_grad=True)

    def th_fwd(x):
        return x, chain(x, torch.sin, n)

    def th_bwd(xy):
        xy[1].backward()
        return xy[0].grad

    def th_fb():
        x = th_leaf()
        chain(x, torch.sin, n).backward()
        return x.grad.item()

    # HIPS autograd: make_vjp splits the traced forward from the backward pass.
    def hips_f(x):
        return chain(x, anp.sin, n)

    hips_vjp = autograd.make_vjp(hips_f)
    hips_grad = autograd.grad(hips_f)

    def hips_fwd(x):
        return hips_vjp(x)  # (vjp function, value)

    def hips_bwd(vjp_ans):
        return vjp_ans[0](1.0)

    def hips_fb():
        return float(hips_grad(X0))

    # the floor
    def mg_fwd(x):
        return x, chain(x, Value.sin, n)

    def mg_bwd(xy):
        xy[1].backward()
        return xy[0].grad

    def mg_fb():
        x = Value(X0)
        chain(x, Value.sin, n).backward()
        return x.grad

    return {
        "agrad": (ag_leaf, ag_fwd, ag_bwd, ag_fb),
        "HIPS autograd": (lambda: X0, hips_fwd, hips_bwd, hips_fb),
        "PyTorch": (th_leaf, th_fwd, th_bwd, th_fb),
        "pure-Python floor": (lambda: Value(X0), mg_fwd, mg_bwd, mg_fb),
    }


def check(cases, n):
    y_ref, d_ref = reference(n)
    for name, (leaf, fwd, bwd, fb) in cases.items():
        _common.check_close(f"{name} dy/dx (fwd+bwd)", fb(), d_ref, rtol=1e-9, atol=0)
        _common.check_close(
            f"{name} dy/dx (split)", float(bwd(fwd(leaf()))), d_ref, rtol=1e-9, atol=0
        )
    return y_ref, d_ref


def profile_agrad(n, top=12):
    """cProfile of agrad's forward and backward passes separately, top functions by tottime.

    Note: cyclic-GC passes triggered by allocating a node are charged to whatever function
    allocated (typically Node.__init__); compare with gc disabled to separate them.
    """
    import cProfile
    import gc
    import pstats

    leaf, fwd, bwd, fb = make_cases(n)["agrad"]
    fb()
    for label, gc_on in (("gc enabled", True), ("gc disabled", False)):
        graphs = [fwd(leaf()) for _ in range(3)]
        del graphs
        if not gc_on:
            gc.disable()
        pf = cProfile.Profile()
        pf.enable()
        graphs = [fwd(leaf()) for _ in range(3)]
        pf.disable()
        pb = cProfile.Profile()
        pb.enable()
        for g in graphs:
            bwd(g)
        pb.disable()
        gc.enable()
        del graphs
        for phase, prof in (("forward", pf), ("backward", pb)):
            print(
                f"\ncProfile, agrad {phase} only ({n} nodes x 3 runs, {label}), "
                f"top {top} by tottime:"
            )
            stats = pstats.Stats(prof)
            stats.sort_stats("tottime").print_stats(top)


# ---- issue 15's goal: per node vs PyTorch, at three sizes, fresh and busy -----------------

GOAL_SIZES = (1_000, 10_000, 100_000)
BUSY_OBJECTS = 1_000_000


def sin_chain(x, sin, n):
    """y = sin(y*1.0001 + 0.001), ``n`` recorded nodes (3 per step)."""
    y = x
    for _ in range(n // 3):
        y = sin(y * 1.0001 + 0.001)
    return y


def goal_child(mode, repeat):
    """One child process: agrad and PyTorch interleaved sample by sample, per size."""
    import gc
    import time

    hold = [[i] for i in range(BUSY_OBJECTS)] if mode == "busy" else []  # noqa: F841
    engines = {
        "agrad": (lambda: agrad.tensor(X0, dtype=agrad.float64, requires_grad=True), agrad.sin),
        "PyTorch": (lambda: torch.tensor(X0, dtype=torch.float64, requires_grad=True), torch.sin),
    }
    out = {}
    for n in GOAL_SIZES:
        reps = max(3, repeat * 10_000 // max(n, 10_000)) if n > 10_000 else repeat
        samples = {name: [] for name in engines}
        grads = {}
        for i in range(reps + 1):
            for name, (leaf, sin) in engines.items():
                gc.collect()
                t0 = time.process_time()  # CPU time: less noise from busy neighbours
                x = leaf()
                sin_chain(x, sin, n).backward()
                g = x.grad.item()
                del x
                dt = time.process_time() - t0
                if i:  # the first round warms up
                    samples[name].append(dt)
                grads[name] = g
        _common.check_close(f"sin chain {n}", grads["agrad"], grads["PyTorch"], rtol=1e-12)
        out[n] = {name: s for name, s in samples.items()}
    return {"objects": len(gc.get_objects()), "samples": out}


def goal_table(repeat):
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    print(
        "\n[goal] y = sin(y*1.0001 + 0.001), fwd+bwd+free per node (CPU time), agrad vs PyTorch "
        "interleaved in one child process, GC on (goal <= 1.0x)"
    )
    rows, payload = [], {}
    for mode in ("fresh", "busy"):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmd = [sys.executable, __file__, "--goal-child", mode, "--repeat", str(repeat)]
            subprocess.run([*cmd, "--json", f.name], check=True)
            result = json.loads(Path(f.name).read_text())
        payload[mode] = result
        for n, s in result["samples"].items():
            ag, th = np.median(s["agrad"]), np.median(s["PyTorch"])
            rows.append(
                [
                    f"{mode} ({result['objects']:,} live objects)",
                    f"{int(n):,}",
                    f"{ag / int(n) * 1e6:.2f}",
                    f"{th / int(n) * 1e6:.2f}",
                    f"{ag / th:.2f}x",
                    f"{min(s['agrad']) / min(s['PyTorch']):.2f}x",
                ]
            )
    _common.print_table(
        ["process", "nodes", "agrad us/node", "PyTorch us/node", "ratio", "min ratio"], rows
    )
    return payload


def main(argv):
    if "--goal-child" in argv:
        mode = argv[argv.index("--goal-child") + 1]
        result = goal_child(mode, _common.int_arg(argv, "--repeat", 20))
        _common.write_json(_common.json_arg(argv), result)
        return result
    if "--goal-only" in argv:
        _common.print_header("bench_overhead: issue 15 goal table")
        return goal_table(_common.int_arg(argv, "--repeat", 20))
    n = _common.int_arg(argv, "--nodes", 10_000)
    repeat = _common.int_arg(argv, "--repeat", 20)
    env = _common.print_header("bench_overhead: scalar op chain, per-node cost")
    cases = make_cases(n)
    y_ref, d_ref = check(cases, n)
    print(
        f"  {n} nodes (y*1.0001, y+0.001, sin(y) repeated), x={X0}, y={y_ref:.6g}, "
        f"dy/dx={d_ref:.6g}; all gradients agree (rtol 1e-9)"
    )
    print(
        f"  median of {repeat} runs ({ROUNDS} interleaved rounds); gc enabled; fwd-only and"
        " bwd-only exclude freeing the graph\n"
    )
    raw = {name: {"fb": [], "fwd": [], "bwd": []} for name in cases}
    per_round = max(repeat // ROUNDS, 2)
    for _ in range(ROUNDS):
        for name, (leaf, fwd, bwd, fb) in cases.items():
            r = raw[name]
            r["fb"] += _common.timeit(fb, repeat=per_round, warmup=1)["samples"]
            r["fwd"] += _common.timeit(fwd, repeat=per_round, warmup=1, setup=leaf)["samples"]
            setup = functools.partial(_forward_of, fwd, leaf)  # binds this iteration's pair
            r["bwd"] += _common.timeit(bwd, repeat=per_round, warmup=1, setup=setup)["samples"]
    floor = float(np.median(raw["pure-Python floor"]["fb"]))
    results, rows = {}, []
    for name, r in raw.items():
        fb, fwd, bwd = (float(np.median(r[k])) for k in ("fb", "fwd", "bwd"))
        fb_min = min(r["fb"])
        results[name] = {
            "fwd_bwd_ms": fb * 1e3,
            "us_per_node": fb / n * 1e6,
            "min_us_per_node": fb_min / n * 1e6,
            "fwd_us_per_node": fwd / n * 1e6,
            "bwd_us_per_node": bwd / n * 1e6,
            "ratio_to_floor": fb / floor,
        }
        rows.append(
            [
                name,
                f"{fb * 1e3:.1f}",
                f"{fb / n * 1e6:.2f}",
                f"{fb_min / n * 1e6:.2f}",
                f"{fwd / n * 1e6:.2f}",
                f"{bwd / n * 1e6:.2f}",
                f"{fb / floor:.2f}x",
            ]
        )
    _common.print_table(
        [
            "engine",
            "fwd+bwd ms",
            "us/node",
            "min us/node",
            "fwd us/node",
            "bwd us/node",
            "vs floor",
        ],
        rows,
    )
    if "--profile" in argv:
        profile_agrad(n)
    payload = {"benchmark": "overhead", "env": env, "nodes": n, "results": results}
    if "--no-goal" not in argv:
        payload["goal"] = goal_table(repeat)
    _common.write_json(_common.json_arg(argv), payload)
    return payload


def _forward_of(fwd, leaf):
    return fwd(leaf())


if __name__ == "__main__":
    main(sys.argv[1:])
