"""Shared helpers for the benchmark scripts: environment header, timing, tables, JSON.

Every benchmark script sets OMP/OPENBLAS/MKL_NUM_THREADS=1 itself, as its very
first statements, *before* importing this module (which imports NumPy).
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    if os.environ.get(_var) != "1":  # a script forgot to pin threads before importing NumPy
        raise RuntimeError(f"{_var} must be set to 1 before numpy is imported")

import numpy as np  # noqa: E402

# ---- allocator mode ---------------------------------------------------------------------
# With glibc's default malloc, a loop whose temporaries total more than ~2x the largest
# array (here: a few 1-2 MB arrays) gets its heap trimmed at the end of every iteration and
# re-faults it page by page in the next (strace: brk grows ~10 MB and shrinks back once per
# iteration; thousands of minor page faults, +30-70% time). Whether that happens depends on
# the process's history (glibc raises its thresholds after freeing large mmapped chunks), so
# timings in one shared process would depend on which framework ran first. By default we
# therefore tell glibc to keep freed memory ("warm" mode, like any long-running training
# process reaches); ``--malloc default`` leaves glibc's defaults alone.
MALLOC_MODE = (
    "default"
    if "--malloc" in sys.argv and sys.argv[sys.argv.index("--malloc") + 1] == "default"
    else "warm"
)


def _keep_freed_memory() -> str:
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        ok = libc.mallopt(m_mmap_threshold, 32 * 1024 * 1024)  # 32 MB is glibc's maximum
        ok &= libc.mallopt(m_trim_threshold, 1024 * 1024 * 1024)
        return (
            "warm (glibc mallopt: M_MMAP_THRESHOLD=32MB, M_TRIM_THRESHOLD=1GB)"
            if ok
            else "default (mallopt failed)"
        )
    except (OSError, AttributeError):
        return "default (not glibc)"


MALLOC = _keep_freed_memory() if MALLOC_MODE == "warm" else "glibc default"

# `python benchmarks/X.py` from a checkout works without PYTHONPATH=src.
_SRC = Path(__file__).resolve().parent.parent / "src"
try:
    import agrad  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_SRC))
    import agrad  # noqa: F401

import torch  # noqa: E402

torch.set_num_threads(1)
with contextlib.suppress(RuntimeError):  # already set by an earlier import
    torch.set_num_interop_threads(1)


# ---- environment header -----------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def numpy_blas() -> str:
    """Which BLAS NumPy was built against (threadpoolctl's runtime view if installed)."""
    try:
        from threadpoolctl import threadpool_info

        libs = [
            f"{i['internal_api']} {i.get('version')} ({i.get('architecture')}, "
            f"{i['num_threads']} thread(s))"
            for i in threadpool_info()
            if i.get("user_api") == "blas"
        ]
        if libs:
            return "; ".join(libs) + " [threadpoolctl]"
    except ImportError:
        pass
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{cfg.get('name')} {cfg.get('version')} [{cfg.get('openblas configuration', '')}]"
    except Exception as exc:  # pragma: no cover - depends on the NumPy build
        return f"unknown ({exc})"


def torch_blas() -> str:
    for part in torch.__config__.show().replace("\n", ",").split(","):
        if "BLAS_INFO=" in part:
            return part.strip().split("=", 1)[1]
    return "unknown"


def environment() -> dict:
    import autograd as hips

    try:
        hips_version = __import__("importlib.metadata").metadata.version("autograd")
    except Exception:
        hips_version = getattr(hips, "__version__", "?")
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "numpy_blas": numpy_blas(),
        "torch": torch.__version__,
        "torch_blas": torch_blas(),
        "torch_threads": torch.get_num_threads(),
        "autograd": hips_version,
        "agrad": getattr(agrad, "__version__", "?"),
        "malloc": MALLOC,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
        "threads_env": ", ".join(
            f"{v}={os.environ.get(v)}"
            for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        ),
    }


def print_header(title: str) -> dict:
    env = environment()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    env["loadavg_1min"] = load
    print(f"== {title} ==")
    print(
        f"  date {env['date']}   python {env['python']}   cpu {env['cpu']} ({env['cores']} cores)"
    )
    print(f"  numpy {env['numpy']}  BLAS: {env['numpy_blas']}")
    print(f"  OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}   {env['threads_env']}")
    print(
        f"  torch {env['torch']} (BLAS {env['torch_blas']}, {env['torch_threads']} thread)   "
        f"autograd (HIPS) {env['autograd']}   agrad {env['agrad']}"
    )
    print(f"  malloc: {env['malloc']}")
    busy = (
        "  <- other processes are busy: expect noise, compare the min column" if load > 0.5 else ""
    )
    print(f"  load average (1 min) at start: {load:.2f}{busy}")
    return env


# ---- timing -----------------------------------------------------------------------------


def timeit(
    fn: Callable[[], object],
    repeat: int = 15,
    number: int = 1,
    warmup: int = 2,
    setup: Callable[[], object] | None = None,
) -> dict:
    """Seconds per call of ``fn``: median and min over ``repeat`` samples of ``number`` calls.

    ``setup`` (untimed) runs before every call and its result is passed to ``fn``; with a
    ``setup``, freeing ``fn``'s argument and result happens outside the timed region.
    The collector is run between samples, not inside them.
    """
    for _ in range(warmup):
        fn(setup()) if setup else fn()
    samples = []
    faults0 = _minflt()
    for _ in range(repeat):
        gc.collect()
        if setup is None:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - t0) / number)
        else:
            total = 0.0
            for _ in range(number):
                arg = setup()
                t0 = time.perf_counter()
                result = fn(arg)
                total += time.perf_counter() - t0
                del arg, result  # freeing what fn built (e.g. a graph) is not timed
            samples.append(total / number)
    faults = (_minflt() - faults0) / (repeat * number)
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "repeat": repeat,
        "number": number,
        "faults_per_call": faults,
        "samples": samples,
    }


def _minflt() -> int:
    """Minor page faults so far (first touches of freshly mapped memory), 0 if unknown."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


# ---- checks and output ------------------------------------------------------------------


def check_close(name: str, got, ref, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.allclose(got, ref, rtol=rtol, atol=atol):
        err = np.max(np.abs(got - ref)) if got.shape == ref.shape else "shape"
        raise SystemExit(f"MISMATCH {name}: shapes {got.shape} vs {ref.shape}, max err {err}")


def print_table(columns: list[str], rows: list[list], aligns: str | None = None) -> None:
    cells = [[str(c) for c in columns]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    aligns = aligns or "l" + "r" * (len(columns) - 1)

    def fmt(row):
        return "  ".join(
            c.ljust(w) if a == "l" else c.rjust(w)
            for c, w, a in zip(row, widths, aligns, strict=True)
        )

    print(fmt(cells[0]))
    print("  ".join("-" * w for w in widths))
    for r in cells[1:]:
        print(fmt(r))


def write_json(path: str | None, payload: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(payload, indent=1, default=str))


def json_arg(argv: list[str]) -> str | None:
    """``--json PATH``: where to also write the results (used by run_all.py)."""
    if "--json" in argv:
        return argv[argv.index("--json") + 1]
    return None


def str_arg(argv: list[str], flag: str, default: str | None) -> str | None:
    if flag in argv:
        return argv[argv.index(flag) + 1]
    return default


def int_arg(argv: list[str], flag: str, default: int) -> int:
    if flag in argv:
        return int(argv[argv.index(flag) + 1])
    return default
