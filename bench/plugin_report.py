"""What the plugin's placement reports cost (issue 18's benchmark).

1. Per report: `ReportCost` (jvm/) reads /proc/self (status, numa_maps) as each executor
   does every 5 s, in a JVM with 256 MB of touched heap; microseconds per report, median
   of 11 rounds of 200.
2. Per task: what the plugin does per task when it does not pin (level none: the task's
   record, its thread id and CPU at start and end, the counters), timed by `ReportCost` too
   (the pinning itself is bench/affinity.py's).
3. Whole runs: `numaspark run WORKLOAD --mode local --bind none` with the plugin loaded
   (reporting every 5 s, the default) and without it, alternating, --pairs pairs; the median
   of the per-pair ratios on/off of the measured iteration's wall time (goal: within 1%).

    .venv/bin/python bench/plugin_report.py [--pairs 7] [--workload wordcount] [--size small]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from runs import alternating_pairs, measured_wall

from numaspark.placement.plugin import PLUGIN_CLASS
from numaspark.spark.affinity import build_jar


def report_cost() -> dict:
    proc = subprocess.run(
        ["java", "-cp", str(build_jar()), "io.numaspark.affinity.example.ReportCost"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def wall(plugin: str, workload: str, size: str, out: Path, data: Path) -> float:
    conf = (
        [
            "--conf",
            f"spark.plugins={PLUGIN_CLASS}",
            "--conf",
            f"spark.driver.extraClassPath={build_jar()}",
        ]
        if plugin == "on"
        else []
    )
    return measured_wall(
        [workload, "--size", size, "--mode", "local", "--data", str(data), *conf], out
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--workload", default="wordcount")
    parser.add_argument("--size", default="small")
    args = parser.parse_args()
    cost = report_cost()
    print(
        f"one report: {cost['median_us']:.0f} us (median of {cost['rounds']} rounds of "
        f"{cost['reports_per_round']}; {cost['min_us']:.0f}-{cost['max_us']:.0f}) with "
        f"{cost['resident_mb']} MB resident; every 5 s that is "
        f"{cost['median_us'] / 5e6:.4%} of one CPU"
    )
    print(f"per task (level none): {cost['task_us']:.2f} us")
    ratios = alternating_pairs(
        args.pairs,
        "on",
        "off",
        lambda plugin, out, data: wall(plugin, args.workload, args.size, out, data),
    )
    print(
        f"plugin on / off: median ratio {statistics.median(ratios):.3f} over {len(ratios)} "
        f"pairs (range {min(ratios):.3f}-{max(ratios):.3f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
