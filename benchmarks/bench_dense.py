"""Dense layer forward+backward: is agrad's per-op overhead invisible next to BLAS work?

    loss = sum((tanh(X @ W1 + b1) @ W2 - Y) ** 2)      X 256x512, W1 512x512, b1 512,
                                                       W2 512x10, Y 256x10, float64
Gradients of W1, b1, W2 by (a) hand-written NumPy forward+backward (the reference),
(b) agrad, (c) HIPS autograd, (d) PyTorch (CPU, MKL). All four are checked against
each other before timing. Goal for agrad: <= 1.10x the NumPy reference.

At the small size (``--small``: X 32x64, W1 64x64, b1 64, W2 64x10) the per-op overhead is
what shows; the goal there is <= 2x.

Run: python benchmarks/bench_dense.py [--repeat N] [--json PATH] [--small] [--no-isolated]
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

SMALL_SIZE = "--small" in sys.argv
N, D, H, K = (32, 64, 64, 10) if SMALL_SIZE else (256, 512, 512, 10)
ROUNDS = 5
GOAL = 2.0 if SMALL_SIZE else 1.10


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    W1 = rng.standard_normal((D, H)) / np.sqrt(D)
    b1 = 0.1 * rng.standard_normal(H)
    W2 = rng.standard_normal((H, K)) / np.sqrt(H)
    Y = rng.standard_normal((N, K))
    return X, W1, b1, W2, Y


# ---- (a) NumPy by hand --------------------------------------------------------------------


def numpy_forward(X, W1, b1, W2, Y):
    Hh = np.tanh(X @ W1 + b1)
    R = Hh @ W2 - Y
    return (R * R).sum()


def numpy_fwd_bwd(X, W1, b1, W2, Y):
    Hh = np.tanh(X @ W1 + b1)
    R = Hh @ W2 - Y
    loss = (R * R).sum()
    dR = 2.0 * R
    dW2 = Hh.T @ dR
    dH = dR @ W2.T
    dZ = dH * (1.0 - Hh * Hh)
    dW1 = X.T @ dZ
    db1 = dZ.sum(0)
    return loss, dW1, db1, dW2


# ---- (b) agrad ----------------------------------------------------------------------------


def agrad_setup(X, W1, b1, W2, Y):
    return (
        agrad.tensor(X),
        agrad.tensor(W1, requires_grad=True),
        agrad.tensor(b1, requires_grad=True),
        agrad.tensor(W2, requires_grad=True),
        agrad.tensor(Y),
    )


def agrad_forward(X, W1, b1, W2, Y):
    return ((agrad.tanh(X @ W1 + b1) @ W2 - Y) ** 2).sum()


def agrad_fwd_bwd(X, W1, b1, W2, Y):
    W1.grad = b1.grad = W2.grad = None
    loss = agrad_forward(X, W1, b1, W2, Y)
    loss.backward()
    return loss, W1.grad, b1.grad, W2.grad


# ---- (c) HIPS autograd --------------------------------------------------------------------


def hips_loss(W1, b1, W2, X, Y):
    return anp.sum((anp.tanh(anp.dot(X, W1) + b1) @ W2 - Y) ** 2)


hips_grad = autograd.grad(hips_loss, argnum=(0, 1, 2))


def hips_fwd_bwd(X, W1, b1, W2, Y):
    return hips_grad(W1, b1, W2, X, Y)


# ---- (d) PyTorch --------------------------------------------------------------------------


def torch_setup(X, W1, b1, W2, Y):
    return (
        torch.tensor(X),
        torch.tensor(W1, requires_grad=True),
        torch.tensor(b1, requires_grad=True),
        torch.tensor(W2, requires_grad=True),
        torch.tensor(Y),
    )


def torch_forward(X, W1, b1, W2, Y):
    return ((torch.tanh(X @ W1 + b1) @ W2 - Y) ** 2).sum()


def torch_fwd_bwd(X, W1, b1, W2, Y):
    W1.grad = b1.grad = W2.grad = None
    loss = torch_forward(X, W1, b1, W2, Y)
    loss.backward()
    return loss, W1.grad, b1.grad, W2.grad


def check(data, ag, th) -> None:
    loss, *ref = numpy_fwd_bwd(*data)
    got = {
        "agrad": [g.numpy() for g in agrad_fwd_bwd(*ag)[1:]],
        "HIPS autograd": list(hips_fwd_bwd(*data)),
        "PyTorch": [g.detach().numpy() for g in torch_fwd_bwd(*th)[1:]],
    }
    for name, grads in got.items():
        for pname, g, r in zip(("dW1", "db1", "dW2"), grads, ref, strict=True):
            _common.check_close(f"{name} {pname}", g, r, rtol=1e-9, atol=1e-9)
    _common.check_close("agrad loss", agrad_forward(*ag).item(), loss)
    _common.check_close("torch loss", torch_forward(*th).item(), loss)
    _common.check_close("hips loss", hips_loss(*data[1:4], data[0], data[4]), loss)


def measure(cases, repeat: int) -> dict:
    """Median/min fwd+bwd and fwd-only seconds per case, frameworks interleaved in rounds."""
    # Warm every case up first (caches, lazy imports, the allocator's free lists).
    for _name, fb, fwd in cases:
        for _ in range(10):
            fb()
            fwd()
    results: dict = {}
    # Interleave in rounds so that drifts (thermal, busy neighbours) hit all cases alike;
    # statistics are over all samples pooled.
    for _ in range(ROUNDS):
        for name, fb, fwd in cases:
            t = _common.timeit(fb, repeat=max(repeat // ROUNDS, 3), warmup=2)
            f = _common.timeit(fwd, repeat=max(repeat // ROUNDS, 3), warmup=1)
            r = results.setdefault(name, {"fb": [], "fwd": [], "flt": []})
            r["flt"].append(t["faults_per_call"])
            r["fb"] += t["samples"]
            r["fwd"] += f["samples"]
    out = {}
    for name, *_fns in cases:
        r = results[name]
        out[name] = {
            "fwd_bwd_ms_median": float(np.median(r["fb"])) * 1e3,
            "fwd_bwd_ms_min": min(r["fb"]) * 1e3,
            "fwd_ms_median": float(np.median(r["fwd"])) * 1e3,
            "minor_faults_per_iter": float(np.mean(r["flt"])),
        }
    return out


def table(out: dict) -> None:
    base = out[NUMPY]["fwd_bwd_ms_median"]
    rows = []
    for name, r in out.items():
        r["ratio_to_numpy"] = ratio = r["fwd_bwd_ms_median"] / base
        note = ""
        if name == "agrad":
            note = f"OK (goal <= {GOAL:.2f}x)" if ratio <= GOAL else f"ABOVE goal {GOAL:.2f}x"
        rows.append(
            [
                name,
                f"{r['fwd_bwd_ms_median']:.3f}",
                f"{r['fwd_bwd_ms_min']:.3f}",
                "-" if np.isnan(r["fwd_ms_median"]) else f"{r['fwd_ms_median']:.3f}",
                f"{ratio:.3f}x",
                "-"
                if np.isnan(r["minor_faults_per_iter"])
                else f"{r['minor_faults_per_iter']:.0f}",
                note,
            ]
        )
    _common.print_table(
        [
            "implementation",
            "fwd+bwd ms (median)",
            "min ms",
            "fwd-only ms",
            "ratio vs numpy",
            "page faults/iter",
            "",
        ],
        rows,
        "lrrrrrl",
    )


def loop_measure(cases, repeat: int, number: int = 200) -> dict:
    """Fwd+bwd per call when ``number`` calls run back to back, as in a training loop: no
    collection or other work between them, so caches stay warm (the one-call samples of
    `measure` follow a full collection each, which leaves them cold). At the small size the
    two conditions give different ratios; both are reported."""
    samples: dict = {name: [] for name, *_ in cases}
    for _ in range(ROUNDS):
        for name, fb, _fwd in cases:
            samples[name] += _common.timeit(fb, repeat=max(repeat // ROUNDS, 3), number=number,
                                            warmup=number)["samples"]  # fmt: skip
    return {
        name: {
            "fwd_bwd_ms_median": float(np.median(s)) * 1e3,
            "fwd_bwd_ms_min": min(s) * 1e3,
            "fwd_ms_median": float("nan"),
            "minor_faults_per_iter": float("nan"),
        }
        for name, s in samples.items()
    }


def isolated(repeat: int) -> dict:
    """Each implementation alone in a fresh process with glibc's default malloc."""
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    out = {}
    for name in NAMES:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--only",
                    name,
                    "--malloc",
                    "default",
                    "--repeat",
                    str(repeat),
                    "--json",
                    f.name,
                    "--quiet",
                    *(["--small"] if SMALL_SIZE else []),
                ],
                check=True,
            )
            out[name] = json.loads(Path(f.name).read_text())["results"][name]
    return out


NUMPY = "numpy (by hand)"
NAMES = [NUMPY, "agrad", "HIPS autograd", "PyTorch"]


def main(argv: list[str]) -> dict:
    repeat = _common.int_arg(argv, "--repeat", 35)
    only = _common.str_arg(argv, "--only", None)
    quiet = "--quiet" in argv
    data = make_data()
    ag = agrad_setup(*data)
    th = torch_setup(*data)
    hips_fwd = lambda: hips_loss(data[1], data[2], data[3], data[0], data[4])  # noqa: E731
    cases = [
        (NUMPY, lambda: numpy_fwd_bwd(*data), lambda: numpy_forward(*data)),
        ("agrad", lambda: agrad_fwd_bwd(*ag), lambda: agrad_forward(*ag)),
        ("HIPS autograd", lambda: hips_fwd_bwd(*data), hips_fwd),
        ("PyTorch", lambda: torch_fwd_bwd(*th), lambda: torch_forward(*th)),
    ]
    if only:  # child mode of isolated(): one implementation, results as JSON only
        out = measure([c for c in cases if c[0] == only], repeat)
        _common.write_json(_common.json_arg(argv), {"results": out})
        if not quiet:
            print(out)
        return {"results": out}

    env = _common.print_header("bench_dense: tanh MLP layer, forward+backward, float64")
    print(
        f"  X {N}x{D}, W1 {D}x{H}, b1 {H}, W2 {H}x{K}, Y {N}x{K}; "
        f"median/min of {repeat} runs ({ROUNDS} interleaved rounds)"
    )
    check(data, ag, th)
    print("  gradients dW1, db1, dW2 agree across all four (np.allclose rtol=atol=1e-9)")
    print(f"\n[A] one process, all four interleaved; malloc {_common.MALLOC_MODE}")
    shared = measure(cases, repeat)
    table(shared)
    payload = {"benchmark": "dense", "env": env, "results": shared}
    if SMALL_SIZE:
        print("\n[C] one process, 200 calls back to back per sample (a training loop); malloc "
              f"{_common.MALLOC_MODE}")  # fmt: skip
        payload["loop"] = loop = loop_measure(cases, repeat)
        table(loop)
    if "--no-isolated" not in argv:
        print(
            "\n[B] each implementation alone in a fresh process, glibc default malloc "
            "(what a plain script sees:\n    heap trimmed and re-faulted every iteration)"
        )
        iso = isolated(repeat)
        table(iso)
        payload["isolated_default_malloc"] = iso
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
