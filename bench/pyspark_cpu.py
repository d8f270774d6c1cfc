"""Measure: where a PySpark job's CPU time goes, as numaspark's readings say it (issue 40).

    .venv/bin/python bench/pyspark_cpu.py [--mode local|standalone] [--keep DIR] [ALS ARGS]

Runs bench/apps/als.py (numpy ALS in the Python workers) once through ``numaspark run``
and prints, from the stored record: the JVMs' CPU time, their Python workers' CPU time and
Spark's executorCpuTime, the readings' CPU and memory lines, each Python process read back
(role, CPUs, policy, CPU time) and the process-tree memory Spark logged. Starts JVMs: hold
/tmp/numaspark-jvm.lock on a shared machine (flock /tmp/numaspark-jvm.lock ...).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from numaspark import records
from numaspark.decide.readings import readings
from numaspark.experiment.result import RunResult

ALS = Path(__file__).parent / "apps" / "als.py"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="local", choices=("local", "standalone"))
    parser.add_argument("--bind", default="node")
    parser.add_argument("--keep", type=Path, help="keep the run's directory here")
    parser.add_argument("args", nargs="*", default=["200", "500", "10", "5", "2"])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = options.keep or Path(tmp) / "out"
        argv = [
            str(Path(sys.executable).parent / "numaspark"),
            "run",
            str(ALS),
            "--mode",
            options.mode,
            "--bind",
            options.bind,
            "--interval",
            "0.5s",
            "--out",
            str(out),
            "--",
            *options.args,
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"numaspark run failed: {done.stderr.strip().splitlines()[-1:]}")
        (line,) = (out / "results.jsonl").read_text().splitlines()
        run = records.load(RunResult, json.loads(line))
    gap = run.figures.cpu_gap or {}
    print(f"mode {options.mode}, bind {options.bind}, ALS {' '.join(options.args)}")
    print(
        f"JVM CPU {gap.get('os_cpu_s')} s, Python workers' CPU {gap.get('python_cpu_s')} s, "
        f"Spark executorCpuTime {gap.get('spark_executor_cpu_s')} s"
    )
    for reading in readings(run):
        if "CPU time" in reading or "memory" in reading:
            print("reading:", reading)
    for jvm in run.effective_placement:
        print(
            f"{jvm.jvm} (pid {jvm.pid}): CPUs {jvm.cpus}, policy {jvm.policy}, "
            f"{len(jvm.python)} Python processes, at most {jvm.python_at_once} workers at once"
        )
        for proc in jvm.python:
            print(
                f"  {proc.role} {proc.pid}: CPUs {proc.cpus}, policy {proc.policy}, "
                f"{proc.cpu_s} s CPU, pages {proc.bytes_per_node}"
            )
    print("process tree:", json.dumps(run.figures.process_tree))
    for warning in run.warnings:
        print("warning:", warning)


if __name__ == "__main__":
    main()
