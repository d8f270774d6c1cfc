"""The application of the guest's plugin check (checks.py ``plugin_node_binding``), run with
``numaspark run holdjob.py --master spark://... --bind node -- DIR EXECUTORS WAIT_S``.

Its first job makes every executor work in the JVM (a cached DataFrame, no Python workers),
then it writes ``DIR/first-job-done`` and holds its executors until ``DIR/go`` exists (at most
WAIT_S seconds), so the check reads their /proc after the first job, while they still run.
"""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

directory, executors, wait_s = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
spark = SparkSession.builder.appName("guest-plugin-node").getOrCreate()
frame = spark.range(0, 100_000 * executors, numPartitions=4 * executors).selectExpr(
    "id", "repeat(cast(id AS string), 8) AS text"
)
cached = frame.cache()
rows = cached.count()
(directory / "first-job-done").write_text(f"{rows}\n")
print(f"first job done: {rows} rows cached", flush=True)
deadline = time.monotonic() + wait_s
while not (directory / "go").exists() and time.monotonic() < deadline:
    time.sleep(1)
cached.unpersist()
spark.stop()
