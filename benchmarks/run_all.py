"""Run every benchmark (each in its own process) and print their tables, then a Markdown
summary in the format of the table in benchmarks/README.md (paste it there to refresh it).

Run: python benchmarks/run_all.py [--profile]     (--profile: also agrad's cProfile hotspots)
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
SCRIPTS = ["bench_dense.py", "bench_overhead.py", "bench_jacobian.py"]


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


def markdown(dense: dict, overhead: dict, jac: dict) -> str:
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
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    dense = run("bench_dense.py", [])
    overhead = run("bench_overhead.py", ["--profile"] if "--profile" in argv else [])
    jac = run("bench_jacobian.py", [])
    print("\n==== Markdown summary (for benchmarks/README.md) ====\n")
    print(markdown(dense, overhead, jac))


if __name__ == "__main__":
    main(sys.argv[1:])
