"""The loop every job runs: iterations in one Spark application, each its own job group.

A job script is ``spark-submit JOB INPUT OUTPUT ANSWERS ITERATIONS PARAMS_JSON``. Warm-up
and measured repetitions run in the same application, so warm-ups really warm
the JIT and the caches, and the ~8-15 s of starting Spark is paid once. Each
iteration runs under the job group ``numaspark-iteration-<i>`` (which the
event-log parser uses to split the metrics per iteration) and appends one JSON
line to ANSWERS the moment it ends: its wall time, its start and end (epoch
seconds) and its answer.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable

from numaspark.jsonlines import read_json_lines  # noqa: F401 - jobs/streaming.py reads its ledger

JOB_GROUP_PREFIX = "numaspark-iteration-"


def run_iterations(app_name: str, body: Callable[[object, str, str, dict], dict]) -> None:
    """Parse the job's argv, start Spark, run ``body(spark, input, output, params)`` per iteration."""
    from pyspark.sql import SparkSession

    input_dir, output_dir, answers_path = sys.argv[1], sys.argv[2], sys.argv[3]
    iterations = int(sys.argv[4])
    params = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
    spark = SparkSession.builder.appName(app_name).getOrCreate()
    context = spark.sparkContext
    try:
        for iteration in range(iterations):
            context.setJobGroup(
                f"{JOB_GROUP_PREFIX}{iteration}", f"numaspark iteration {iteration}"
            )
            target = os.path.join(output_dir, f"iteration-{iteration}")
            began = time.time()  # epoch: collectors' samples are cut to this window
            started = time.perf_counter()
            answer = body(spark, input_dir, target, params)
            wall = time.perf_counter() - started
            line = {
                "iteration": iteration,
                "wall_s": wall,
                "answer": answer,
                "started": began,
                "ended": time.time(),
            }
            with open(answers_path, "a") as out:
                out.write(json.dumps(line) + "\n")
                out.flush()
                os.fsync(out.fileno())
            shutil.rmtree(target, ignore_errors=True)  # checked through the answer; keep disk free
    finally:
        spark.stop()
