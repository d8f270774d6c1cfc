"""Test driver: batch workloads' jobs one after another in one Spark application.

``spark-submit all_batch.py PLAN_JSON OUT_JSON [AT_ONCE]``: PLAN_JSON lists
``{"workload", "job", "input", "params"}``; each job module's body (the
function its ``__main__`` hands to ``run_iterations``) runs once on its input
and its answer is written to OUT_JSON as soon as it ends. One application
instead of seventeen saves sixteen Spark start-ups of CI time; ``numaspark
run`` itself is tested on kmeans, pagerank and wordcount.

Two jobs run at once, each from a Python thread of its own (PySpark pins each to a JVM
thread, so each keeps its own job group) and in a session of its own (its temporary views
and SQL settings apart: sql-join and sql-aggregation both name a view "uservisits"): on
tiny inputs a job's time is mostly the driver's planning and scheduling, which the other
job's tasks fill. Each job's answer is its own, checked the same way. AT_ONCE (default 2)
is how many run at once: bench/batch_driver.py compares 1 and 2.
"""

import importlib
import json
import re
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyspark.sql import SparkSession

from numaspark.workloads.harness import JOB_GROUP_PREFIX

plan = json.loads(Path(sys.argv[1]).read_text())
out_path = Path(sys.argv[2])
at_once = int(sys.argv[3]) if len(sys.argv) > 3 else 2
spark = SparkSession.builder.appName("numaspark-test-batch").getOrCreate()
answers = {}
written = threading.Lock()


def run(index: int, entry: dict) -> None:
    module = importlib.import_module(f"numaspark.workloads.jobs.{Path(entry['job']).stem}")
    source = Path(module.__file__).read_text()
    body = getattr(module, re.search(r"run_iterations\([^,]+,\s*(\w+)\)", source).group(1))
    spark.sparkContext.setJobGroup(f"{JOB_GROUP_PREFIX}{index}", entry["workload"])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as output:
        answer = body(
            spark.newSession(), entry["input"], str(Path(output) / "result"), entry["params"]
        )
    with written:
        answers[entry["workload"]] = {"answer": answer, "wall_s": time.perf_counter() - started}
        out_path.write_text(json.dumps(answers))


try:
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        for done in [pool.submit(run, i, entry) for i, entry in enumerate(plan)]:
            done.result()  # a job's exception fails the application
finally:
    spark.stop()
