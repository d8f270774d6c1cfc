"""The tuner against random search on recorded configuration tables (issue 7's benchmark).

For every table in bench/tables/ with 50 or more configurations, and seeds 0..19:
`numaspark tune --replay TABLE --minimize wall_s --budget B --seed S --json` (the real CLI,
a process per run), and random search over the same rows without repeats. Reported: the
median number of evaluations to reach within 5% and within 10% of the table's best, for
the tuner with its early stop (and the share of seeds that stopped before reaching it) and
without it (--no-early-stop), next to random search.

    .venv/bin/python bench/tune_replay.py [--seeds 20] [--budget 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from numaspark.decide.tune import evaluations_to, random_search, read_table

HERE = Path(__file__).resolve().parent


def tuner_values(table: Path, seed: int, budget: int, early_stop: bool) -> list[float | None]:
    numaspark = Path(sys.executable).with_name("numaspark")
    argv = [str(numaspark), "tune", "--replay", str(table), "--minimize", "wall_s",
            "--budget", str(budget), "--seed", str(seed), "--json"]  # fmt: skip
    if not early_stop:
        argv.append("--no-early-stop")
    found = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    return [t["value"] for t in found["trials"]]


def median_or_none(values: list[int | None], budget: int) -> str:
    """Median evaluations, counting a seed that never got there as budget + 1 (shown as >)."""
    counted = [v if v is not None else budget + 1 for v in values]
    median = statistics.median(counted)
    return f">{budget}" if median > budget else f"{median:g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--tables", type=Path, default=HERE / "tables")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = []
    for table in sorted(args.tables.glob("*.csv")):
        space, lookup = read_table(table, "wall_s")
        if len(lookup) < 50:
            print(f"skipped {table.name}: {len(lookup)} configurations (< 50)", file=sys.stderr)
            continue
        best = min(lookup.values())
        row = {"table": table.name, "configurations": len(lookup), "best_s": best,
               "within_5pct_rows": sum(v <= 1.05 * best for v in lookup.values()),
               "within_10pct_rows": sum(v <= 1.10 * best for v in lookup.values())}  # fmt: skip
        runs = {
            "tuner": [tuner_values(table, s, args.budget, True) for s in range(args.seeds)],
            "tuner, no early stop": [
                tuner_values(table, s, args.budget, False) for s in range(args.seeds)
            ],  # fmt: skip
            # random search is not cut at the budget: its full order, so its medians are exact
            "random": [random_search(lookup, s) for s in range(args.seeds)],
        }
        for name, sequences in runs.items():
            for share in (0.05, 0.10):
                hits = [evaluations_to(seq, best * (1 + share)) for seq in sequences]
                limit = len(lookup) if name == "random" else args.budget
                row[f"{name}: median evals to {share:.0%}"] = median_or_none(hits, limit)
                row[f"{name}: seeds reaching {share:.0%}"] = sum(h is not None for h in hits)
            if name != "random":
                row[f"{name}: median trials run"] = statistics.median(len(s) for s in sequences)
        report.append(row)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for row in report:
        print(
            f"\n{row['table']}: {row['configurations']} configurations, best {row['best_s']:.3f} s, "
            f"{row['within_5pct_rows']} within 5%, {row['within_10pct_rows']} within 10%"
        )
        for key, value in row.items():
            if ":" in key:
                print(f"  {key:<45} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
