"""Start-up cost of the `agrad` command: whole-process wall time of one small `agrad eval`.

Each command runs as a fresh process (subprocess, stdout to /dev/null), and the cases are
interleaved in rounds so that drift affects them all alike. The reference is
`python -c "import numpy"` with the same interpreter; `python -c pass` is the floor (the
interpreter alone, plus the cost of spawning a process). The parts: `agrad --version`, and
`python -c "import X"` for agrad, typer, lark and rich.table, and for all the modules
`agrad eval` imports, exiting normally and with os._exit(0) (no interpreter shutdown).
`agrad eval` runs with a warm parser-table cache (a private $XDG_CACHE_HOME, filled once
before timing) and with a fresh, empty one per run (cold: the LALR tables are built from
the grammar and then stored).

A second table breaks one process down step by step: a fresh child process (warm or cold
cache) times each step with time.perf_counter, in order: import numpy, import agrad,
import agrad.cli.app and agrad.cli.direct (the commands' definitions), import
agrad.lang.session, Session.create of the example, evaluate(), then the rest of the
command: import agrad.cli.render and agrad.cli.run([eval ..., --format json]) (option
parsing without Typer, a second, cheap Session.create + evaluate, the JSON output).
Typer is not imported by such a command line (only by --help, usage errors and the
like): `python -c "import typer"` in table [A] is what it would cost. Each import's time
is what it adds on top of
the steps above it. The parent times the rest on the same clock (CLOCK_MONOTONIC): from
the spawn to the script's first line (interpreter start-up), and from its last line to the
exit (interpreter shutdown), so the rows add up to the child's wall time.

`--agrad PATH` times that console script instead of the one next to this interpreter (an
editable install's script runs the checkout; a regular `pip install` is what users run).

Run: python benchmarks/bench_startup.py [--repeat N] [--agrad PATH] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import _common  # noqa: E402

ROUNDS = 5
PROGRAM = "sum((w*x+b-y)**2)"
SETS = ["x=[1,2]", "y=[5,7]", "w=1", "b=0"]
EVAL_ARGS = ["eval", PROGRAM, "--wrt", "w,b", *(a for s in SETS for a in ("--set", s))]
# The Jacobian of tanh(A@x), 200x200, as JSON: 40,000 numbers to render.
JACOBIAN_ARGS = ["jacobian", "tanh(A@x)", "--set", "A=randn(200,200)", "--set", "x=randn(200)",
                 "--wrt", "x", "--format", "json"]  # fmt: skip
# Rows of the breakdown measured around the script rather than inside it.
STARTUP_ROW = "process start (spawn to the script's first line)"
BETWEEN_ROW = "between the steps (import json, io; bookkeeping)"
EXIT_ROW = "exit (last line to the parent seeing the exit)"
TOTAL_ROW = "total wall time of this child"
# What `agrad eval` imports; timed with a normal exit and with os._exit(0), which skips
# the interpreter's shutdown (freeing every module), to show what that shutdown costs.
CLI_MODULES = "agrad.cli.app, agrad.lang.session, agrad.cli.render"
# value 41; d/dw = 2*sum((w*x+b-y)*x) = -28; d/db = 2*sum(w*x+b-y) = -18
EXPECTED = {"value": 41.0, "w": -28.0, "b": -18.0}

# Runs in a fresh child process: times each step of one `agrad eval`, prints JSON.
BREAKDOWN = r"""
import sys, time
p = time.perf_counter  # CLOCK_MONOTONIC on Linux: comparable with the parent's clock
T_FIRST_LINE = p()
import json
t = {}
t0 = p(); import numpy; t["import numpy"] = p() - t0
t0 = p(); import agrad; t["import agrad"] = p() - t0
t0 = p(); import agrad.cli.app, agrad.cli.direct; agrad.cli.app._register_commands()
t["import agrad.cli.app, direct (the commands' definitions)"] = p() - t0
t0 = p(); import agrad.lang.session; t["import agrad.lang.session"] = p() - t0
from agrad.lang.session import Session
t0 = p(); s = Session.create(sys.argv[1], json.loads(sys.argv[2]), ["w,b"])
t["Session.create (parse, compile, --set)"] = p() - t0
t0 = p(); e = s.evaluate(); t["evaluate (forward + backward)"] = p() - t0
check = {"value": float(e.value), "w": float(e.variables["w"].grad),
         "b": float(e.variables["b"].grad)}
# The rest of what `agrad eval --format json` does: the renderer, then the CLI itself
# (reads the options without Typer, see agrad.cli.direct, and runs the eval again, now
# with the parser already built in this process, and writes the JSON).
t0 = p(); import agrad.cli.render; t["import agrad.cli.render"] = p() - t0
import contextlib, io
from agrad.cli import run
buf = io.StringIO()
t0 = p()
with contextlib.redirect_stdout(buf):
    code = run(json.loads(sys.argv[3]))
t["agrad.cli.run(eval ... --format json)"] = p() - t0
got = json.loads(buf.getvalue())
cli = {"value": float(got["value"]), "w": float(got["grads"]["w"]),
       "b": float(got["grads"]["b"])}
print(json.dumps({"times": t, "check": check, "cli": cli, "code": code,
                  "first_line": T_FIRST_LINE, "last_line": p()}), flush=True)
"""


def agrad_command(argv: list[str] = ()) -> list[str]:
    """The console script given with --agrad, else the one next to this interpreter (else
    `python -m agrad`)."""
    if "--agrad" in argv:
        return [argv[argv.index("--agrad") + 1]]
    exe = Path(sys.executable).parent / "agrad"
    if exe.is_file() and os.access(exe, os.X_OK):
        return [str(exe)]
    print(f"  note: no {exe}; timing `{sys.executable} -m agrad` instead")
    return [sys.executable, "-m", "agrad"]


def child_env(cache_dir: str) -> dict:
    env = os.environ.copy()  # includes the pinned *_NUM_THREADS=1
    # An installed agrad has its bytecode compiled (pip does it); a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 would compile every module in every child instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["XDG_CACHE_HOME"] = cache_dir
    if _common._SRC.is_dir() and str(_common._SRC) in sys.path:  # agrad is not installed
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(_common._SRC), env.get("PYTHONPATH")])
        )
    return env


def run_quiet(cmd: list[str], env: dict) -> None:
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)


def cache_files(cache_dir: str) -> list[Path]:
    return sorted((Path(cache_dir) / "agrad").glob("grammar-*.json"))


def check_outputs(agrad: list[str], warm: str) -> None:
    """The eval output is right (JSON and table), and the cold run really builds the cache."""
    out = subprocess.run(
        [*agrad, *EVAL_ARGS, "--format", "json"],
        env=child_env(warm),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    got = json.loads(out)
    got = {
        "value": float(got["value"]),
        "w": float(got["grads"]["w"]),
        "b": float(got["grads"]["b"]),
    }
    if got != EXPECTED:
        raise SystemExit(f"MISMATCH agrad eval --format json: {got} != {EXPECTED}")
    table = subprocess.run(
        [*agrad, *EVAL_ARGS], env=child_env(warm), capture_output=True, text=True, check=True
    ).stdout
    for text in ("41", "-28", "-18"):
        if text not in table:
            raise SystemExit(f"MISMATCH agrad eval (table): {text!r} not in its output")
    if not cache_files(warm):
        raise SystemExit(f"the warm cache {warm} holds no parser tables after a run")
    cold = fresh_cache()
    run_quiet([*agrad, *EVAL_ARGS, "--format", "json"], child_env(cold))
    if not cache_files(cold):
        raise SystemExit("a run with an empty XDG_CACHE_HOME did not store parser tables")


def make_cases(agrad: list[str], warm: str) -> list[tuple[str, list[str], bool]]:
    """(label, argv, cold cache?)"""
    py = sys.executable
    return [
        ('python -c "import numpy" (reference)', [py, "-c", "import numpy"], False),
        ("python -c pass (interpreter floor)", [py, "-c", "pass"], False),
        ("agrad eval --format json (warm cache)", [*agrad, *EVAL_ARGS, "--format", "json"], False),
        ("agrad eval, table output (warm cache)", [*agrad, *EVAL_ARGS], False),
        ("agrad eval --format json (cold cache)", [*agrad, *EVAL_ARGS, "--format", "json"], True),
        ("agrad jacobian n=200 --format json (warm cache)", [*agrad, *JACOBIAN_ARGS], False),
        ("agrad --version", [*agrad, "--version"], False),
        ("agrad --help", [*agrad, "--help"], False),
        ('python -c "import agrad"', [py, "-c", "import agrad"], False),
        ('python -c "import typer"', [py, "-c", "import typer"], False),
        ('python -c "import lark"', [py, "-c", "import lark"], False),
        ('python -c "import rich.table"', [py, "-c", "import rich.table"], False),
        ("python: import eval's modules", [py, "-c", f"import {CLI_MODULES}"], False),
        (
            "same, then os._exit(0) (no shutdown)",
            [py, "-c", f"import {CLI_MODULES}, os; os._exit(0)"],
            False,
        ),
    ]


_ROOT = [""]  # this run's private temporary directory (all cache dirs live in it)


def fresh_cache() -> str:
    """A new, empty cache directory (removed with the rest at the end)."""
    return tempfile.mkdtemp(prefix="cold-", dir=_ROOT[0])


def time_processes(cases, warm: str, repeat: int) -> dict[str, list[float]]:
    warm_env = child_env(warm)
    raw: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    per_round = max(repeat // ROUNDS, 1)
    for r in range(ROUNDS):
        for label, argv, cold in cases:
            if cold:  # a new empty cache dir per run, made outside the timing (removed at the end)
                t = _common.timeit(
                    lambda d, argv=argv: run_quiet(argv, child_env(d)) or d,
                    setup=fresh_cache,
                    repeat=per_round,
                    warmup=0,
                )
            else:
                t = _common.timeit(
                    lambda argv=argv: run_quiet(argv, warm_env),
                    repeat=per_round,
                    warmup=2 if r == 0 else 0,
                )
            raw[label] += t["samples"]
    return raw


def breakdown(warm: str, repeat: int) -> dict[str, dict[str, list[float]]]:
    """Per-step seconds from fresh child processes, warm and cold cache interleaved."""
    argv = [
        sys.executable,
        "-c",
        BREAKDOWN,
        PROGRAM,
        json.dumps(SETS),
        json.dumps([*EVAL_ARGS, "--format", "json"]),
    ]
    samples: dict[str, dict[str, list[float]]] = {"warm": {}, "cold": {}}
    for i in range(repeat + 1):
        for mode in ("warm", "cold"):
            cache = warm if mode == "warm" else fresh_cache()
            env = child_env(cache)
            t_spawn = time.perf_counter()
            out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
            t_exited = time.perf_counter()
            if mode == "cold":
                shutil.rmtree(cache, ignore_errors=True)
            result = json.loads(out)
            if result["check"] != EXPECTED or result["cli"] != EXPECTED or result["code"]:
                raise SystemExit(f"MISMATCH in-process: {result}")
            if i == 0:
                continue  # warm-up (bytecode caches, page cache)
            times = {STARTUP_ROW: result["first_line"] - t_spawn, **result["times"]}
            times[BETWEEN_ROW] = (
                result["last_line"] - result["first_line"] - sum(result["times"].values())
            )
            times[EXIT_ROW] = t_exited - result["last_line"]
            times[TOTAL_ROW] = t_exited - t_spawn
            for step, sec in times.items():
                samples[mode].setdefault(step, []).append(sec)
    return samples


def main(argv: list[str]) -> dict:
    repeat = _common.int_arg(argv, "--repeat", 15)
    env = _common.print_header("bench_startup: wall time of one small `agrad eval` process")
    agrad = agrad_command(argv)
    _ROOT[0] = tempfile.mkdtemp(prefix="agrad-bench-startup-")
    warm = os.path.join(_ROOT[0], "warm")
    try:
        run_quiet([*agrad, *EVAL_ARGS, "--format", "json"], child_env(warm))  # fill the cache
        check_outputs(agrad, warm)
        cases = make_cases(agrad, warm)
        per_round = max(repeat // ROUNDS, 1)
        print(
            f"  program: agrad {' '.join(EVAL_ARGS[:2])!s} ... (value 41, grads -28, -18: "
            f"checked, JSON and table)\n  agrad: {' '.join(agrad)}\n"
            f"  eval's modules: {CLI_MODULES}\n"
            f"  {per_round * ROUNDS} fresh processes per command, {ROUNDS} interleaved rounds; "
            "stdout to /dev/null; *_NUM_THREADS=1 in the children too\n"
        )
        raw = time_processes(cases, warm, repeat)
        steps = breakdown(warm, repeat)
    finally:
        shutil.rmtree(_ROOT[0], ignore_errors=True)

    ref = statistics.median(raw[cases[0][0]])
    floor = statistics.median(raw[cases[1][0]])
    rows, results = [], {}
    for label, _, _ in cases:
        med, low = statistics.median(raw[label]), min(raw[label])
        results[label] = {
            "ms_median": med * 1e3,
            "ms_min": low * 1e3,
            "ratio_to_numpy": med / ref,
            "ms_over_interpreter": (med - floor) * 1e3,
            "samples_ms": [s * 1e3 for s in raw[label]],
        }
        rows.append(
            [
                label,
                f"{med * 1e3:.1f}",
                f"{low * 1e3:.1f}",
                f"{med / ref:.2f}x",
                f"{(med - floor) * 1e3:+.1f}",
            ]
        )
    print("[A] whole process, wall time")
    _common.print_table(
        ["command", "ms (median)", "min ms", "vs import numpy", "ms over `python -c pass`"], rows
    )

    rows2, table2 = [], {}
    for step in steps["warm"]:
        w = statistics.median(steps["warm"][step]) * 1e3
        c = statistics.median(steps["cold"][step]) * 1e3
        table2[step] = {"warm_ms": w, "cold_ms": c, "warm_min_ms": min(steps["warm"][step]) * 1e3}
        rows2.append([step, f"{w:.2f}", f"{table2[step]['warm_min_ms']:.2f}", f"{c:.2f}"])
    print(
        f"\n[B] one process step by step (perf_counter in a fresh child, median of {repeat}; "
        "each import adds to the ones above it)"
    )
    _common.print_table(["step", "warm cache ms", "min ms", "cold cache ms"], rows2)
    goals = {  # issue 15's goals, as ratios to `python -c "import numpy"`
        "agrad eval --format json (warm cache)": 1.8,
        "agrad eval, table output (warm cache)": 2.0,
        "agrad jacobian n=200 --format json (warm cache)": 2.0,
    }
    for label, goal in goals.items():
        ratio = results[label]["ratio_to_numpy"]
        verdict = "meets" if ratio <= goal else "misses"
        print(f"  {label}: {ratio:.2f}x import numpy, {verdict} the goal of {goal:.1f}x")
    json_ms = results[cases[2][0]]["ms_median"]
    shutdown = results[cases[-2][0]]["ms_median"] - results[cases[-1][0]]["ms_median"]
    print(
        f"\n  The child does the work of `agrad eval --format json` (plus a second, cheap "
        f"evaluation) in {table2[TOTAL_ROW]['warm_ms']:.1f} ms; table [A]: {json_ms:.1f} ms.\n"
        f"  Interpreter shutdown: exiting normally after importing eval's modules costs "
        f"{shutdown:.1f} ms more than os._exit(0)."
    )
    payload = {
        "benchmark": "startup",
        "env": env,
        "agrad_command": agrad,
        "results": results,
        "breakdown": table2,
    }
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
