"""The application of the guest's Python-worker checks (pyworkers.py ``python_workers``), run with
``numaspark run pythonhold.py --master spark://... --bind node|core -- DIR SLOTS WAIT_S``.

Its one job has SLOTS tasks (one per executor core), each run by a PySpark Python worker: it
allocates and writes 48 MiB of numpy arrays (so the worker's anonymous pages are resident where
it first touched them), writes ``DIR/task-PARTITION`` with its worker's pid, and holds until
``DIR/go`` exists (at most WAIT_S seconds). The driver writes ``DIR/first-job-done`` once every
task holds (the name checks.py ``hold_job`` waits for), so the check reads the workers' /proc
while they run, with their arrays resident.
"""

import sys
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

directory, slots, wait_s = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
MIB_PER_TASK = 48


def hold(partition: int, _rows) -> list:
    import os

    import numpy as np

    # two arrays, written through (np.empty alone leaves the pages untouched)
    arrays = [np.empty(MIB_PER_TASK * (1 << 20) // 16, dtype=np.float64) for _ in range(2)]
    for i, a in enumerate(arrays):
        a[:] = partition + i
    total = float(sum(a.sum() for a in arrays))
    (directory / f"task-{partition}").write_text(f"{os.getpid()}\n")
    deadline = time.monotonic() + wait_s
    while not (directory / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    return [(partition, os.getpid(), total)]


spark = SparkSession.builder.appName("guest-python-workers").getOrCreate()
result: list = []
job = threading.Thread(
    target=lambda: result.extend(
        spark.sparkContext.parallelize(range(slots), slots).mapPartitionsWithIndex(hold).collect()
    )
)
job.start()
while len(list(directory.glob("task-*"))) < slots and job.is_alive():
    time.sleep(1)
if len(list(directory.glob("task-*"))) == slots:
    (directory / "first-job-done").write_text(f"{slots} tasks hold\n")
    print(f"every one of {slots} tasks holds its arrays", flush=True)
job.join()
print(f"tasks done: {sorted(r[:2] for r in result)}", flush=True)
spark.stop()
if len(result) != slots:
    sys.exit(f"{len(result)} results, want {slots}")
