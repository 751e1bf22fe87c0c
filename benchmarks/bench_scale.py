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
most 3 samples.

Run: python benchmarks/bench_scale.py [--repeat N] [--json PATH]
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

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
        {"family": "flat", "label": f"x+...+x, {n:,} terms", "size": n, "source": flat(n),
         "value": 2.0 * n, "grad": float(n)}
        for n in FLAT
    ]
    out += [
        {"family": "nested", "label": f"(...(x)...)*2, {d:,} deep", "size": d,
         "source": nested(d), "value": 4.0, "grad": 2.0}
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


def check(case: dict, plain: lark.Lark) -> None:
    result = Session.create(case["source"], ["x=2"], ["x"]).evaluate()
    got = (float(result.value), float(result.variables["x"].grad))
    if got != (case["value"], case["grad"]):
        raise SystemExit(f"MISMATCH {case['label']}: (value, grad) {got}, expected "
                         f"{(case['value'], case['grad'])}")
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
            f"  {case['label']:<30} "
            + "  ".join(f"{st} {med[st]:.1f} ms" for st in STAGES),
            flush=True,
        )

    for family, unit in (("flat", "term"), ("nested", "level")):
        labels = [k for k, r in results.items() if r["family"] == family]
        print(f"\n[{family}] median ms (min), us per {unit}, and the ratio to the previous size")
        rows = []
        prev = None
        for label in labels:
            r = results[label]
            row = [label]
            for stage in STAGES:
                s = r["stages"][stage]
                ratio = (
                    f" x{s['ms_median'] / prev['stages'][stage]['ms_median']:.1f}" if prev else ""
                )
                s["ratio_to_previous"] = (
                    s["ms_median"] / prev["stages"][stage]["ms_median"] if prev else None
                )
                row.append(f"{s['ms_median']:.2f} ({s['ms_min']:.2f}){ratio}")
                row.append(f"{s['us_per_term']:.2f}")
            lark_ms = r["stages"]["Lark alone"]["ms_median"]
            r["parse_vs_lark"] = r["stages"]["agrad parse"]["ms_median"] / lark_ms
            row.append(f"{r['parse_vs_lark']:.2f}x")
            rows.append(row)
            prev = r
        columns = ["program"]
        for stage in STAGES:
            columns += [f"{stage} ms (min) xprev", f"us/{unit}"]
        columns.append("parse / Lark")
        _common.print_table(columns, rows)
    print(
        "\n  Lark alone = lexer + LALR + tree; agrad parse = lexer + LALR + lowering to IR "
        "(no tree).\n  Session.create includes agrad parse. For a size 10x larger, linear "
        "scaling gives x10.0."
    )
    payload = {"benchmark": "scale", "env": env, "repeat": repeat, "results": results}
    _common.write_json(_common.json_arg(argv), payload)
    return payload


if __name__ == "__main__":
    main(sys.argv[1:])
