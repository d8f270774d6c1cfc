"""Benchmark: how fast numaspark's input generators write data (MB/s per core).

    .venv/bin/python bench/generators.py [--size small] [--repeat 3] [--workloads a,b]

Each workload's input is generated with one process (MB/s per core) and with
one process per allowed CPU (MB/s in all, and the speed-up: record inputs are
written in parallel parts, graphs are built whole). It prints the median of
--repeat generations, in a fresh temporary directory each time (so nothing is
reused), and the rows/s of the parallel generation.
Compare with the wall time of one run of the workload at the same size
(`numaspark run WORKLOAD --size SIZE`): the goal is that generating an input
takes less time than one run on it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from numaspark.workloads import all_workloads, get_workload
from numaspark.workloads.datagen import prepare_input


def measure(name: str, size: str, repeat: int, workers: int) -> dict:
    os.environ["NUMASPARK_GEN_WORKERS"] = str(workers)
    workload = get_workload(name)
    chosen = workload.size(size)
    seconds, written = [], 0
    for attempt in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            _, manifest = prepare_input(workload, chosen, seed=attempt, root=Path(tmp))
            seconds.append(time.perf_counter() - started)
            written = manifest["bytes"]
    median = statistics.median(seconds)
    return {
        "workload": name,
        "rows": chosen.rows,
        "bytes": written,
        "seconds": median,
        "mb_per_s": written / 2**20 / median,
        "rows_per_s": chosen.rows / median,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--workloads", default=",".join(w.name for w in all_workloads() if not w.streaming)
    )
    args = parser.parse_args()
    cpus = len(os.sched_getaffinity(0))
    print(
        f"{'workload':<22}{'rows':>12}{'MB':>9}{'1 core s':>9}{'MB/s/core':>11}"
        f"{f'{cpus} cores s':>11}{'MB/s':>8}{'speed-up':>9}{'rows/s':>12}"
    )
    for name in args.workloads.split(","):
        one = measure(name, args.size, args.repeat, 1)
        r = measure(name, args.size, args.repeat, cpus)
        print(
            f"{r['workload']:<22}{r['rows']:>12,}{r['bytes'] / 2**20:>9.1f}{one['seconds']:>9.2f}"
            f"{one['mb_per_s']:>11.1f}{r['seconds']:>11.2f}{r['mb_per_s']:>8.1f}"
            f"{one['seconds'] / r['seconds']:>8.2f}x{r['rows_per_s']:>12,.0f}"
        )


if __name__ == "__main__":
    main()
