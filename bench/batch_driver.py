"""Benchmark: the batch workloads' test driver (tests/drivers/all_batch.py), its seventeen jobs
one at a time against two at once, on the same tiny inputs, back to back.

    flock /tmp/numaspark-jvm.lock .venv/bin/python bench/batch_driver.py [--pairs N]

It starts Spark (spark-submit, local[2]), so it takes the machine's JVM lock. This machine is
shared: compare the two figures of one pair (wall and CPU of spark-submit and everything
under it), not figures of different runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from numaspark.spark.home import spark_env, spark_home
from numaspark.workloads import all_workloads
from numaspark.workloads.datagen import prepare_input

DRIVER = Path(__file__).resolve().parents[1] / "tests" / "drivers" / "all_batch.py"


def _plan(work: Path) -> Path:
    plan = []
    for w in all_workloads():
        if not w.streaming:
            input_dir, manifest = prepare_input(w, w.size("tiny"), root=work / "data")
            plan.append(
                {
                    "workload": w.name,
                    "job": w.job,
                    "input": str(input_dir),
                    "params": w.job_arguments(manifest["facts"]),
                }
            )
    path = work / "plan.json"
    path.write_text(json.dumps(plan))
    return path


def _run(plan: Path, out: Path, at_once: int) -> tuple[float, float]:
    """Wall and CPU seconds of one driver run (the conf is the test's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        [
            str(spark_home() / "bin" / "spark-submit"),
            "--master",
            "local[2]",
            "--conf",
            "spark.sql.shuffle.partitions=8",
            "--conf",
            "spark.ui.enabled=false",
            "--driver-memory",
            "2g",
            str(DRIVER),
            str(plan),
            str(out),
            str(at_once),
        ],
        env=spark_env(),
        check=True,
        capture_output=True,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1, help="back-to-back pairs to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        plan = _plan(work)
        for pair in range(args.pairs):
            for at_once in (1, 2):
                wall, cpu = _run(plan, work / f"answers-{at_once}.json", at_once)
                load = Path("/proc/loadavg").read_text().split()[0]
                print(
                    f"pair {pair + 1}: {at_once} at once: {wall:.1f} s wall, {cpu:.1f} s CPU "
                    f"(load {load})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
