"""How agrad's language front end scales with program size: parse, compile and run.

Programs: flat sums `x+x+...+x` of 1,000, 10,000 and 100,000 terms, and parentheses nested
1,000 and 10,000 deep, `((...(x)...))*2`. Stages, each timed on its own:

- Lark alone: a plain `lark.Lark(grammar_text(), parser="lalr")`, no transformer, `.parse()`
  (lexing, LALR and building Lark's parse tree); the baseline for the front end;
- agrad.lang.parser.parse: lexing, LALR, and lowering to agrad's flat IR in callbacks;
- Session.create(source, ["x=2"], ["x"]): parse + compile + the --set value, in total;
- Session.evaluate(): run the program forward and backward (the gradient of x).

The values and gradients are checked first (sum of n x's at x=2: value 2n, gradient n;
nested: value 4, gradient 2). The stages are interleaved sample by sample. Freeing each
stage's result (the tree, the IR, the session) is not timed; freeing the autograd graph
inside evaluate() is. Cases of 100,000 terms take about a second per stage, so they use at
most 3 samples. The cyclic GC stays enabled, as everywhere; a last table repeats the
100,000-term case with it disabled, to show how much of any growth beyond linear is the
collector's.

Run: python benchmarks/bench_scale.py [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import gc  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import _common  # noqa: E402  (imports numpy/agrad with the threads pinned)
import lark  # noqa: E402

from agrad.lang.parser import grammar_text, parse  # noqa: E402
from agrad.lang.session import Session  # noqa: E402

FLAT = (1_000, 10_000, 100_000)
NESTED = (1_000, 10_000)
BIG = 100_000  # cases at least this large get at most 3 samples
STAGES = ("Lark alone", "agrad parse", "Session.create", "evaluate")


def flat(n: int) -> str:
    return "+".join(["x"] * n)


def nested(depth: int) -> str:
    return "(" * depth + "x" + ")" * depth + "*2"


def cases() -> list[dict]:
    out = [
        {
            "family": "flat",
            "label": f"x+...+x, {n:,} terms",
            "size": n,
            "source": flat(n),
            "value": 2.0 * n,
            "grad": float(n),
        }
        for n in FLAT
    ]
    out += [
        {
            "family": "nested",
            "label": f"(...(x)...)*2, {d:,} deep",
            "size": d,
            "source": nested(d),
            "value": 4.0,
            "grad": 2.0,
        }
        for d in NESTED
    ]
    return out


def stage_functions(case: dict, plain: lark.Lark) -> dict:
    """Each stage as (fn, setup) for _common.timeit; setup builds what the stage needs."""
    source = case["source"]
    session = Session.create(source, ["x=2"], ["x"])
    return {
        "Lark alone": (lambda _: plain.parse(source), lambda: None),
        "agrad parse": (lambda _: parse(source), lambda: None),
        "Session.create": (lambda _: Session.create(source, ["x=2"], ["x"]), lambda: None),
        "evaluate": (lambda s: s.evaluate(), lambda: session),
    }


def without_gc(fn):
    def run(arg):
        gc.disable()
        try:
            return fn(arg)
        finally:
            gc.enable()

    return run


def check(case: dict, plain: lark.Lark) -> None:
    result = Session.create(case["source"], ["x=2"], ["x"]).evaluate()
    got = (float(result.value), float(result.variables["x"].grad))
    if got != (case["value"], case["grad"]):
        raise SystemExit(
            f"MISMATCH {case['label']}: (value, grad) {got}, expected "
            f"{(case['value'], case['grad'])}"
        )
    plain.parse(case["source"])  # Lark alone accepts the same text


def main(argv: list[str]) -> dict:
    repeat = _common.int_arg(argv, "--repeat", 7)
    env = _common.print_header("bench_scale: parse, compile and run large agrad programs")
    plain = lark.Lark(grammar_text(), parser="lalr")  # no transformer: builds a tree
    all_cases = cases()
    for case in all_cases:
        check(case, plain)
    print(
        f"  values and gradients checked for all {len(all_cases)} programs; median/min of "
        f"{repeat} samples ({min(repeat, 3)} for {BIG:,} terms), stages interleaved\n"
    )

    results = {}
    for case in all_cases:
        n_samples = min(repeat, 3) if case["size"] >= BIG else repeat
        fns = stage_functions(case, plain)
        raw = {stage: [] for stage in STAGES}
        for i in range(n_samples):
            for stage in STAGES:
                fn, setup = fns[stage]
                t = _common.timeit(fn, repeat=1, warmup=1 if i == 0 else 0, setup=setup)
                raw[stage] += t["samples"]
        del fns
        results[case["label"]] = {
            "family": case["family"],
            "size": case["size"],
            "samples": n_samples,
            "stages": {
                stage: {
                    "ms_median": statistics.median(s) * 1e3,
                    "ms_min": min(s) * 1e3,
                    "us_per_term": statistics.median(s) * 1e6 / case["size"],
                }
                for stage, s in raw.items()
            },
        }
        med = {st: results[case["label"]]["stages"][st]["ms_median"] for st in STAGES}
        print(
            f"  {case['label']:<30} " + "  ".join(f"{st} {med[st]:.1f} ms" for st in STAGES),
            flush=True,
        )

    for family, unit in (("flat", "term"), ("nested", "level")):
        labels = [k for k, r in results.items() if r["family"] == family]
        print(
            f"\n[{family}] per stage, by size (xprev: ratio to the previous size; linear = x10.0)"
        )
        rows = []
        for stage in STAGES:
            prev = None
            for label in labels:
                r = results[label]
                st = r["stages"][stage]
                st["ratio_to_previous"] = st["ms_median"] / prev["ms_median"] if prev else None
                st["ratio_to_lark"] = (  # parsing stages only: evaluate parses nothing
                    st["ms_median"] / r["stages"]["Lark alone"]["ms_median"]
                    if stage != "evaluate"
                    else None
                )
                rows.append(
                    [
                        stage if prev is None else "",
                        f"{r['size']:,}",
                        f"{st['ms_median']:.2f}",
                        f"{st['ms_min']:.2f}",
                        f"x{st['ratio_to_previous']:.1f}" if prev else "",
                        f"{st['us_per_term']:.2f}",
                        f"{st['ratio_to_lark']:.2f}x" if st["ratio_to_lark"] else "",
                    ]
                )
                prev = st
        _common.print_table(
            ["stage", f"{unit}s", "ms (median)", "min ms", "xprev", f"us/{unit}", "vs Lark alone"],
            rows,
            aligns="lrrrrrr",
        )
    print(
        "\n  Lark alone = lexer + LALR + Lark's tree; agrad parse = lexer + LALR + lowering to "
        "the flat IR\n  (no tree); Session.create includes agrad parse."
    )

    # Is growth beyond linear the cyclic GC? The largest flat case again, collector off.
    big = next(c for c in all_cases if c["family"] == "flat" and c["size"] == max(FLAT))
    fns = stage_functions(big, plain)
    no_gc = {stage: [] for stage in STAGES}
    for i in range(min(repeat, 3)):
        for stage in STAGES:
            fn, setup = fns[stage]
            t = _common.timeit(without_gc(fn), repeat=1, warmup=1 if i == 0 else 0, setup=setup)
            no_gc[stage] += t["samples"]
    del fns
    small = results[next(c["label"] for c in all_cases if c["family"] == "flat")]
    rows = []
    gc_off = {}
    for stage in STAGES:
        on = results[big["label"]]["stages"][stage]
        off = statistics.median(no_gc[stage]) * 1e3
        gc_off[stage] = {"ms_median": off, "us_per_term": off * 1e3 / big["size"]}
        rows.append(
            [
                stage,
                f"{small['stages'][stage]['us_per_term']:.2f}",
                f"{on['us_per_term']:.2f}",
                f"{gc_off[stage]['us_per_term']:.2f}",
                f"{on['ms_median']:.0f}",
                f"{off:.0f}",
            ]
        )
    results[big["label"]]["gc_disabled"] = gc_off
    print(
        f"\n[GC] {big['size']:,} terms with the cyclic GC disabled during each sample "
        f"(median of {min(repeat, 3)})"
    )
    _common.print_table(
        [
            "stage",
            f"us/term at {small['size']:,}",
            f"us/term at {big['size']:,}",
            "same, GC off",
            "ms",
            "ms, GC off",
        ],
        rows,
    )
    payload = {"benchmark": "scale", "env": env, "repeat": repeat, "results": results}
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
