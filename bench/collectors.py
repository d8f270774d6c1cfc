"""Benchmark: what the collectors cost a run (goal: at most 3% of its wall time).

    .venv/bin/python bench/collectors.py [--workload wordcount] [--size small] [--pairs 5]

Runs the same workload with every collector on (OS, NUMA, perf; 1 s interval)
and with all off, alternating on/off and off/on so that drift (page cache,
thermal, other load) falls on both sides, for --pairs pairs. Prints each
pair's iteration wall times and ratio, and the median ratio (on / off) of the
measured iteration and of the whole application.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from numaspark.experiment.runner import RunRequest, run_workload
from numaspark.topology import load_machine


def one(workload: str, size: str, collect: bool, out: Path) -> tuple[float, float]:
    request = RunRequest(
        workload=workload,
        size=size,
        collect=collect,
        out=out,
        spark_conf={"spark.sql.shuffle.partitions": "8"},
    )
    (result,) = run_workload(request, load_machine())
    if not result.ok:
        raise SystemExit(f"run failed: {result.failure_reason}")
    return result.wall_time_s, result.app.wall_time_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="wordcount")
    parser.add_argument("--size", default="small")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    ratios, app_ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        one(args.workload, args.size, False, out)  # generate the input and warm the page cache
        print(
            f"{'pair':>4} {'on s':>8} {'off s':>8} {'ratio':>7} {'app on s':>9} {'app off s':>10}"
        )
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 == 0 else (False, True)
            times = {collect: one(args.workload, args.size, collect, out) for collect in order}
            (on, app_on), (off, app_off) = times[True], times[False]
            ratios.append(on / off)
            app_ratios.append(app_on / app_off)
            print(
                f"{pair + 1:>4} {on:>8.2f} {off:>8.2f} {on / off:>7.3f} {app_on:>9.2f} "
                f"{app_off:>10.2f}",
                flush=True,
            )
    print(
        f"median ratio, iteration: {statistics.median(ratios):.3f} "
        f"(overhead {statistics.median(ratios) - 1:+.1%}); application: "
        f"{statistics.median(app_ratios):.3f} (overhead {statistics.median(app_ratios) - 1:+.1%})"
    )


if __name__ == "__main__":
    main()
