"""The affinity plugin's share of an event log (issue 49's size goal: at most 1% of the log of
an application of 10,000 tasks that runs 5 minutes on 4 executors, at the default report
interval).

A real application: bench/apps/many_tasks.py (PySpark, TASKS tasks that each sleep in their
Python worker) on ``local-cluster[4,1,1024]`` (four executor JVMs of one core, started by
Spark itself), the plugin at level none with its defaults (a report every 5 s from each
executor, a batch in the log every 30 s), the event log uncompressed. Prints the log's bytes,
the plugin's lines' bytes, their share, the batches and reports, and the same for the log
compressed with zstd (Spark 4's default codec).

    .venv/bin/python bench/eventlog_placement.py [--tasks 10000] [--seconds 0.11]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zstandard

from numaspark.placement.plugin import PLACEMENT_EVENT, PLUGIN_CLASS, jar_path
from numaspark.spark.home import spark_env, spark_home

APP = Path(__file__).resolve().parent / "apps" / "many_tasks.py"


def run(tasks: int, seconds: float, logs: Path) -> float:
    """The application, once; its wall time."""
    start = time.monotonic()
    subprocess.run(
        [
            str(spark_home() / "bin" / "spark-submit"),
            "--master",
            "local-cluster[4,1,1024]",
            "--conf",
            f"spark.plugins={PLUGIN_CLASS}",
            "--conf",
            f"spark.driver.extraClassPath={jar_path()}",
            "--conf",
            f"spark.executor.extraClassPath={jar_path()}",
            "--conf",
            "spark.eventLog.enabled=true",
            "--conf",
            "spark.eventLog.compress=false",
            "--conf",  # one file, to measure: Spark 4 rolls at 128 MB by default
            "spark.eventLog.rolling.enabled=false",
            "--conf",
            f"spark.eventLog.dir={logs.as_uri()}",
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            str(APP),
            str(tasks),
            str(seconds),
        ],
        env=spark_env("127.0.0.1"),
        check=True,
        capture_output=True,
    )
    return time.monotonic() - start


def share(log: Path) -> dict:
    raw = log.read_bytes()
    ours = [line for line in raw.splitlines() if PLACEMENT_EVENT.encode() in line[:80]]
    reports = [json.loads(line)["reports"] for line in ours]
    tasks = sum(
        1 for line in raw.splitlines() if line.startswith(b'{"Event":"SparkListenerTaskEnd"')
    )
    compressed = zstandard.ZstdCompressor(level=1).compress(raw)  # Spark's zstd level 1
    ours_compressed = zstandard.ZstdCompressor(level=1).compress(b"\n".join(ours))
    return {
        "tasks": tasks,
        "log_bytes": len(raw),
        "plugin_bytes": sum(len(line) + 1 for line in ours),
        "plugin_share": round(sum(len(line) + 1 for line in ours) / len(raw), 5),
        "batches": len(ours),
        "reports": sum(len(r) for r in reports),
        "log_zstd_bytes": len(compressed),
        "plugin_zstd_bytes_alone": len(ours_compressed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=0.11, help="each task's sleep")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="numaspark-bench-") as tmp:
        logs = Path(tmp)
        wall = run(args.tasks, args.seconds, logs)
        (log,) = [p for p in logs.iterdir() if p.is_file()]
        found = {"wall_s": round(wall, 1), **share(log)}
    print(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
