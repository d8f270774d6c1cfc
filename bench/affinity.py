"""The affinity plugin's cost and gain (issue 8's benchmark).

1. Pinning cost: `PinCost` (jvm/) does what the plugin does per task (take a slot, pin the
   thread, read the CPU twice, give the whole set back, return the slot) 20,000 times a round;
   microseconds per task, median of 11 rounds.
2. core vs none on a CPU-bound workload at 2 task slots: `numaspark run kmeans --size small
   --mode local` with --bind core and with --bind none, alternating, --pairs pairs (>= 5);
   the median of the per-pair ratios core/none of the measured iteration's wall time.

    .venv/bin/python bench/affinity.py [--pairs 5] [--workload kmeans] [--size small]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from runs import alternating_pairs, measured_wall

from numaspark.spark.affinity import build_jar


def pin_cost() -> dict:
    jar = build_jar()
    proc = subprocess.run(
        ["java", "-cp", str(jar), "io.numaspark.affinity.example.PinCost"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workload", default="kmeans")
    parser.add_argument("--size", default="small")
    args = parser.parse_args()
    cost = pin_cost()
    print(
        f"pinning cost: {cost['median_us']:.2f} us per task (median of {cost['rounds']} "
        f"rounds of {cost['tasks_per_round']}; {cost['min_us']:.2f}-{cost['max_us']:.2f})"
    )
    ratios = alternating_pairs(
        args.pairs,
        "core",
        "none",
        lambda binding, out, data: measured_wall(
            [
                args.workload,
                "--size",
                args.size,
                "--mode",
                "local",
                "--bind",
                binding,
                "--data",
                str(data),
            ],
            out,
        ),
    )
    print(
        f"core / none: median ratio {statistics.median(ratios):.3f} over {len(ratios)} pairs "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}; below 1 = core faster)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
