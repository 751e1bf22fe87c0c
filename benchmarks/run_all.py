"""Run every benchmark (each in its own process) and print their tables, then a Markdown
summary in the format of the table in benchmarks/README.md (paste it there to refresh it).

It ends with the performance goals (the rows of the README's performance table that have
one), each measured in this run beside its reference, and whether it is met.

Run: python benchmarks/run_all.py [--profile]     (--profile: also agrad's cProfile hotspots)
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    "bench_dense.py",
    "bench_overhead.py",
    "bench_jacobian.py",
    "bench_startup.py",
    "bench_fit.py",
    "bench_parse.py",
    "bench_scale.py",
    "bench_check.py",
    "bench_check_numpy.py",
    "bench_nn.py",
    "bench_linalg.py",
]


def run(script: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        print(f"\n$ python benchmarks/{script} {' '.join(extra)}".rstrip(), flush=True)
        subprocess.run(
            [sys.executable, str(HERE / script), "--json", str(out), *extra],
            check=True,
            env=os.environ.copy(),
        )
        return json.loads(out.read_text())


def markdown(dense: dict, overhead: dict, jac: dict, startup: dict, scale: dict) -> str:
    env = dense["env"]
    lines = [
        f"Measured {env['date']} on {env['cpu']} ({env['cores']} cores), Python "
        f"{env['python']}, NumPy {env['numpy']} ({env['numpy_blas'].split(' [')[0]}, "
        f"OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}), torch {env['torch']} "
        f"({env['torch_blas']}), HIPS autograd {env['autograd']}, agrad {env['agrad']}; "
        f"one BLAS thread everywhere; load average at start {env.get('loadavg_1min', 0):.2f}.",
        "",
        "**bench_dense** (fwd+bwd of the tanh layer, float64, median ms):",
        "",
        "| implementation | warm malloc, one process (min) | ratio | glibc default, fresh "
        "process each | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    iso = dense.get("isolated_default_malloc", {})
    for name, r in dense["results"].items():
        i = iso.get(name)
        lines.append(
            f"| {name} | {r['fwd_bwd_ms_median']:.2f} ({r['fwd_bwd_ms_min']:.2f}) | "
            f"{r['ratio_to_numpy']:.2f}x | "
            + (f"{i['fwd_bwd_ms_median']:.2f} | {i['ratio_to_numpy']:.2f}x |" if i else "- | - |")
        )
    lines += [
        "",
        f"**bench_overhead** ({overhead['nodes']}-node scalar chain, microseconds per node):",
        "",
        "| engine | fwd+bwd us/node (min) | fwd us/node | bwd us/node | vs pure-Python floor |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in overhead["results"].items():
        lines.append(
            f"| {name} | {r['us_per_node']:.2f} ({r['min_us_per_node']:.2f}) | "
            f"{r['fwd_us_per_node']:.2f} | "
            f"{r['bwd_us_per_node']:.2f} | {r['ratio_to_floor']:.2f}x |"
        )
    lines += [
        "",
        "**bench_jacobian** (200x200 Jacobian of tanh(A @ x), median ms):",
        "",
        "| method | ms (min) | vs NumPy closed form | vs agrad |",
        "|---|---:|---:|---:|",
    ]
    for name, r in jac["results"].items():
        lines.append(
            f"| {name} | {r['ms_median']:.3f} ({r['ms_min']:.3f}) | "
            f"{r['ratio_to_numpy']:.1f}x | "
            f"{r['ratio_to_agrad']:.2f}x |"
        )
    lines += ["", startup_markdown(startup), "", scale_markdown(scale)]
    return "\n".join(lines)


def startup_markdown(startup: dict) -> str:
    env = startup["env"]
    lines = [
        f"Measured {env['date']}; load average at start {env.get('loadavg_1min', 0):.2f}.",
        "",
        "**bench_startup** (wall time of a fresh process, median ms):",
        "",
        "| command | ms (min) | vs import numpy | ms over `python -c pass` |",
        "|---|---:|---:|---:|",
    ]
    for name, r in startup["results"].items():
        lines.append(
            f"| {name} | {r['ms_median']:.1f} ({r['ms_min']:.1f}) | "
            f"{r['ratio_to_numpy']:.2f}x | {r['ms_over_interpreter']:+.1f} |"
        )
    lines += [
        "",
        "One `agrad eval --format json` step by step (perf_counter in a fresh process, median "
        "ms; each import adds to the ones above it):",
        "",
        "| step | warm cache | cold cache |",
        "|---|---:|---:|",
    ]
    for step, r in startup["breakdown"].items():
        lines.append(f"| {step} | {r['warm_ms']:.2f} | {r['cold_ms']:.2f} |")
    return "\n".join(lines)


def fit_markdown(fit: dict) -> str:
    env = fit["env"]
    lines = [
        f"Measured {env['date']}; load average at start {env.get('loadavg_1min', 0):.2f}.",
        "",
        f"**bench_fit** ({fit['steps']:,} SGD steps of mean((w*x+b-y)**2), 32 points, "
        "us per step, median of interleaved rounds):",
        "",
        "| implementation | us/step (min) | vs PyTorch |",
        "|---|---:|---:|",
    ]
    for name, r in fit["results"].items():
        lines.append(
            f"| {name} | {r['us_per_step_median']:.1f} ({r['us_per_step_min']:.1f}) | "
            f"{r['ratio_to_torch']:.2f}x |"
        )
    return "\n".join(lines)


def parse_markdown(parse: dict) -> str:
    env = parse["env"]
    lines = [
        f"Measured {env['date']}; load average at start {env.get('loadavg_1min', 0):.2f}.",
        "",
        "**bench_parse** (x*1.5 + x*1.5 + ..., median ms; the ratio is to Lark's bare LALR "
        "parse of the same text, the process rows to a process doing that parse; x10 is the "
        "growth from 10,000 to 100,000 terms):",
        "",
        "| stage | 10,000 terms | 100,000 terms | vs Lark bare (100,000) | growth |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in parse["results"].items():
        ms = r["ms"]
        lines.append(
            f"| {name} | {ms['10000']:.0f} | {ms['100000']:.0f} | {r['ratio_to_bare']:.2f}x | "
            f"x{r['growth_10x']:.1f} |"
        )
    return "\n".join(lines)


def scale_markdown(scale: dict) -> str:
    lines = [
        "**bench_scale** (median ms, with us per term or level; xN is the ratio to the "
        "previous size, 10x larger):",
        "",
        "| program | Lark alone | agrad parse | Session.create | evaluate |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, r in scale["results"].items():
        cells = []
        for stage in ("Lark alone", "agrad parse", "Session.create", "evaluate"):
            s = r["stages"][stage]
            ratio = s.get("ratio_to_previous")
            cells.append(
                f"{s['ms_median']:.1f} ({s['us_per_term']:.2f} us"
                + (f", x{ratio:.1f}" if ratio else "")
                + ")"
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        off = r.get("gc_disabled")
        if off:
            lines.append(
                "| same, cyclic GC disabled | "
                + " | ".join(
                    f"{off[st]['ms_median']:.1f} ({off[st]['us_per_term']:.2f} us)"
                    for st in ("Lark alone", "agrad parse", "Session.create", "evaluate")
                )
                + " |"
            )
    return "\n".join(lines)


def check_markdown(check: dict) -> str:
    base = check["ms"].get("torch.autograd.gradcheck (slow mode)")
    lines = [
        "**bench_check** (the check of sum(sin(x)*x**2), 1,000 inputs, in-process, median ms):",
        "",
        "| method | ms | vs torch slow mode |",
        "|---|---:|---:|",
    ]
    for name, ms in check["ms"].items():
        ratio = f"{ms / base:.2f}x" if base else "-"
        lines.append(f"| {name} | {ms:.2f} | {ratio} |")
    lines += [
        "",
        "Max |numeric - exact| over the gradient: "
        + ", ".join(f"{k} {v:.1e}" for k, v in check["accuracy"].items())
        + ".",
    ]
    return "\n".join(lines)


def goals_markdown(
    dense: dict, small: dict, overhead: dict, jac: dict, startup: dict, fit: dict, parse: dict
) -> str:
    """One row per goal: what agrad measured in this run, against what, and whether it is met."""
    rows: list[tuple[str, float, float, str]] = []  # (workload, ratio, goal, reference)
    for mode, result in overhead.get("goal", {}).items():
        for n, s in result["samples"].items():
            ratio = statistics.median(s["agrad"]) / statistics.median(s["PyTorch"])
            rows.append((f"scalar chain, {int(n):,} nodes, {mode} process, GC on", ratio, 1.0,
                         "PyTorch"))  # fmt: skip
    iso = dense.get("isolated_default_malloc", {}).get("agrad")
    if iso:
        rows.append(("dense MLP, fresh plain process", iso["ratio_to_numpy"], 1.10, "hand NumPy"))
    rows.append(("dense MLP 32x64, one process", small["results"]["agrad"]["ratio_to_numpy"],
                 2.0, "hand NumPy"))  # fmt: skip
    iso = small.get("isolated_default_malloc", {}).get("agrad")
    if iso:
        rows.append(("dense MLP 32x64, fresh process", iso["ratio_to_numpy"], 2.0, "hand NumPy"))
    loop = small.get("loop")
    if loop:
        ratio = loop["agrad"]["fwd_bwd_ms_median"] / loop["numpy (by hand)"]["fwd_bwd_ms_median"]
        rows.append(("dense MLP 32x64, calls back to back", ratio, 2.0, "hand NumPy"))
    by_cmd = startup["results"]
    for name, goal in (
        ("agrad eval --format json (warm cache)", 1.8),
        ("agrad eval, table output (warm cache)", 2.0),
        ("agrad jacobian n=200 --format json (warm cache)", 2.0),
    ):
        rows.append((name + ", whole process", by_cmd[name]["ratio_to_numpy"], goal,
                     "`python -c \"import numpy\"`"))  # fmt: skip
    agrad_fit = fit["results"]["agrad fit (agrad.lang.fit.fit on the program)"]
    rows.append(("agrad fit, per step", agrad_fit["ratio_to_torch"], 1.0, "PyTorch loop"))
    api_loop = fit["results"]["agrad Python-API loop (import agrad as torch)"]
    rows.append(("agrad fit, per step", agrad_fit["ratio_to_torch"] / api_loop["ratio_to_torch"],
                 1.0, "agrad's Python-API loop"))  # fmt: skip
    process = parse["results"]["process: agrad eval --file --format json"]
    rows.append(("100,000-term program, whole process", process["ratio_to_bare"], 1.3,
                 "Lark's bare parse, whole process"))  # fmt: skip
    at50 = jac.get("results_by_n", {}).get("50")
    if at50:
        r = at50["agrad functional.jacobian (1 batched pass)"]["ratio_to_onehot"]
        rows.append(("Jacobian of tanh(A@x), n = 50", r, 2.0, "NumPy one-hot batched backward"))
        if "loop" in at50:
            back_to_back = at50["loop"]["ratio_to_onehot"]
            rows.append(("Jacobian of tanh(A@x), n = 50, calls back to back", back_to_back,
                         2.0, "NumPy one-hot backward"))  # fmt: skip
    lines = [
        "**Goals** (median ratios measured in this run; load average at start "
        f"{dense['env'].get('loadavg_1min', 0):.2f}):",
        "",
        "| workload | agrad | goal | reference | met |",
        "|---|---:|---:|---|---|",
    ]
    for name, ratio, goal, ref in rows:
        met = "yes" if ratio <= goal else "**no**"
        lines.append(f"| {name} | {ratio:.2f}x | <= {goal:.2f}x | {ref} | {met} |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    dense = run("bench_dense.py", [])
    small = run("bench_dense.py", ["--small"])
    overhead = run("bench_overhead.py", ["--profile"] if "--profile" in argv else [])
    jac = run("bench_jacobian.py", [])
    startup = run("bench_startup.py", [])
    fit = run("bench_fit.py", [])
    parse = run("bench_parse.py", [])
    scale = run("bench_scale.py", [])
    check = run("bench_check.py", [])
    for script in ("bench_check_numpy.py", "bench_nn.py", "bench_linalg.py"):
        run(script, [])  # their own tables above (not in the summary yet)
    print("\n==== Markdown summary (for benchmarks/README.md) ====\n")
    print(markdown(dense, overhead, jac, startup, scale))
    print()
    print(check_markdown(check))
    print()
    print(fit_markdown(fit))
    print()
    print(parse_markdown(parse))
    print()
    print(goals_markdown(dense, small, overhead, jac, startup, fit, parse))


if __name__ == "__main__":
    main(sys.argv[1:])
