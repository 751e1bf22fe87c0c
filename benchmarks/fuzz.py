"""The long fuzz campaign of the CLI's error boundary (the quick one runs in the test suite).

Runs ``-n`` programs (half generated from the grammar, half mutated) in random command
lines through `agrad.cli.run`, in seeded batches, and reports the exit statuses, the
internal errors (each a bug; the known classes listed apart) and any other broken rule
(a traceback, exit 2 without one error line, invalid JSON).

Run: python benchmarks/fuzz.py [-n 100000] [--seed 0] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzzing import Stats, campaign  # noqa: E402

BATCH = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100_000, help="programs to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the summary here")
    args = parser.parse_args()
    stats, start = Stats(), time.perf_counter()
    for batch in range((args.n + BATCH - 1) // BATCH):
        campaign(min(BATCH, args.n - batch * BATCH), args.seed * 10**6 + batch, stats)
        if (batch + 1) % 10 == 0:
            print(f"{stats.runs:,} runs, {len(stats.internal)} internal errors", file=sys.stderr)
    seconds = time.perf_counter() - start
    classes = Counter(err.split("internal error (a bug in agrad): ")[-1][:100]
                      for _, err in stats.internal)  # fmt: skip
    summary = {
        "programs": stats.programs,
        "seconds": round(seconds, 1),
        "exit_statuses": dict(sorted(stats.codes.items())),
        "internal_errors": len(stats.internal),
        "internal_error_classes": dict(classes),
        "known_internal_errors": len(stats.known),
        "other_violations": len(stats.violations),
        "examples": [a for a, _ in stats.internal[:5]] + [v[0] for v in stats.violations[:5]],
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    sys.exit(1 if stats.internal or stats.violations else 0)


if __name__ == "__main__":
    main()
