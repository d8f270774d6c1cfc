"""A user's PySpark application for dynamic allocation: two bursts of work with an idle
spell between them, longer than the executors' idle timeout the test gives (4 s), so the
executors of the first burst are removed and the second burst's are added again.

    spark-submit two_bursts.py OUT.json [IDLE_S]

Each burst is 4 tasks of ~2 s: with one core per executor, Spark asks for more than one.
"""

import json
import sys
import time

from pyspark.sql import SparkSession

out = sys.argv[1]
idle = float(sys.argv[2]) if len(sys.argv) > 2 else 12.0
spark = SparkSession.builder.appName("two-bursts").getOrCreate()


def slow(part):
    time.sleep(2)
    return (x * x for x in part)


sums = []
for burst in range(2):
    if burst:
        time.sleep(idle)  # idle: executors go after spark.dynamicAllocation.executorIdleTimeout
    sums.append(spark.sparkContext.range(400, numSlices=4).mapPartitions(slow).sum())
spark.stop()
with open(out, "w") as handle:
    json.dump({"sums": sums}, handle)
