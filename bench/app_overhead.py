"""Benchmark: what `numaspark run -- spark-submit LINE` costs over the user's LINE run by plain
spark-submit (goal, on the long application: median wall-time ratio at most 1.05 with the
collectors on and 1.02 with them off).

    .venv/bin/python bench/app_overhead.py [--pairs 3] [--short-rows N] [--long-rows N]

The application is a user's own (tests/apps/squares.py: an RDD sums the squares of N
numbers), given as the same spark-submit line to both sides: ``--master local[2]``. The
baseline runs that line verbatim with pyspark's spark-submit (no plugin, no event log, none
of numaspark's settings); numaspark runs it with ``--bind none`` (its default). The two
alternate in pairs (baseline first, then numaspark first) so that drift falls on both sides,
collectors on and off, on a short application (about 10 s) and a long one.

Reported per application and collector setting: the median wall time of each side and the
median of the pairs' ratios, and the seconds numaspark adds, split into
- start-up: the Python interpreter and numaspark's imports (a ``numaspark version``);
- planning: the rest until the application's plan is written (topology, plan, environment);
- run: numaspark's spark-submit wall time over the baseline's (event log, collectors,
  the watcher, numaspark's conf);
- analysis: from spark-submit's end to numaspark's exit (event-log parsing, assembly,
  storing, the tables it prints).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from numaspark.spark.home import spark_env, spark_home

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "tests" / "apps" / "squares.py"


def line(rows: int, answer: Path) -> list[str]:
    """The user's line: what both sides run."""
    return [
        str(spark_home() / "bin" / "spark-submit"),
        "--master",
        "local[2]",
        str(APP),
        str(answer),
        str(rows),
    ]


def baseline(rows: int, tmp: Path) -> float:
    started = time.monotonic()
    subprocess.run(
        line(rows, tmp / "base.json"), check=True, capture_output=True, env=spark_env("127.0.0.1")
    )
    return time.monotonic() - started


def numaspark(rows: int, tmp: Path, collect: bool) -> dict[str, float]:
    out = tmp / f"out-{time.monotonic_ns()}"
    argv = [
        sys.executable,
        "-m",
        "numaspark",
        "run",
        "--out",
        str(out),
        "--collect" if collect else "--no-collect",
        "--",
        *line(rows, tmp / "ns.json"),
    ]
    started = time.time()
    subprocess.run(argv, check=True, capture_output=True)
    ended = time.time()
    (run_dir,) = (out / "runs").iterdir()
    (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    submit_s = record["app"]["wall_time_s"]
    app_done = (run_dir / "app.json").stat().st_mtime
    return {
        "wall": ended - started,
        "submit": submit_s,
        "before": (run_dir / "plan.json").stat().st_mtime - started,
        "analysis": ended - app_done,
    }


def startup_s() -> float:
    times = []
    for _ in range(5):
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "numaspark", "version"], check=True, capture_output=True
        )
        times.append(time.monotonic() - started)
    return statistics.median(times)


def measure(rows: int, collect: bool, pairs: int, tmp: Path, startup: float) -> dict:
    base, ours, ratios = [], [], []
    for pair in range(pairs):
        if pair % 2 == 0:
            b, n = baseline(rows, tmp), numaspark(rows, tmp, collect)
        else:
            n, b = numaspark(rows, tmp, collect), baseline(rows, tmp)
        base.append(b)
        ours.append(n)
        ratios.append(n["wall"] / b)
        print(
            f"  pair {pair}: baseline {b:.2f} s, numaspark {n['wall']:.2f} s "
            f"(ratio {n['wall'] / b:.3f})",
            flush=True,
        )
    median_base = statistics.median(base)
    median = {k: statistics.median(o[k] for o in ours) for k in ours[0]}
    return {
        "baseline_s": median_base,
        "numaspark_s": median["wall"],
        "ratio": statistics.median(ratios),
        "startup_s": startup,
        "planning_s": median["before"] - startup,
        "run_s": median["submit"] - median_base,
        "analysis_s": median["analysis"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--short-rows", type=int, default=2_000_000)
    parser.add_argument("--long-rows", type=int, default=400_000_000)
    parser.add_argument("--only", choices=("short", "long"), default=None)
    args = parser.parse_args()
    startup = startup_s()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, count in (("short", args.short_rows), ("long", args.long_rows)):
            if args.only not in (None, name):
                continue
            for collect in (True, False):
                print(
                    f"{name} application ({count:,} rows), collectors "
                    f"{'on' if collect else 'off'}:",
                    flush=True,
                )
                found = measure(count, collect, args.pairs, Path(tmp), startup)
                rows.append((name, count, collect, found))
    print(
        "\n| application | collectors | baseline s | numaspark s | ratio (median of pairs) "
        "| start-up s | planning s | run s | analysis s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, count, collect, f in rows:
        print(
            f"| {name} ({count:,} rows) | {'on' if collect else 'off'} | {f['baseline_s']:.2f} "
            f"| {f['numaspark_s']:.2f} | {f['ratio']:.3f} | {f['startup_s']:.2f} "
            f"| {f['planning_s']:.2f} | {f['run_s']:.2f} | {f['analysis_s']:.2f} |"
        )
    goals = {True: 1.05, False: 1.02}
    for name, _, collect, f in rows:
        if name == "long":
            met = "met" if f["ratio"] <= goals[collect] else "NOT met"
            print(
                f"goal, long, collectors {'on' if collect else 'off'}: ratio {f['ratio']:.3f} "
                f"<= {goals[collect]}: {met}"
            )


if __name__ == "__main__":
    main()
