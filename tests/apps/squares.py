"""A user's PySpark application, as the tests hand it to numaspark: sums the squares of
0..N-1 with an RDD and writes what it was given and what it found as JSON.

    spark-submit squares.py OUT.json N [ANY ARGUMENTS...]

A negative N fails the way a user's job fails: an exception in the driver.
SQUARES_TASK_S=SECONDS in the driver's environment makes each task (and its Python worker)
last that long at least, so that a watch sampling every half second sees every worker.
"""

import json
import os
import sys
import time

from pyspark.sql import SparkSession

out, rows, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
if rows < 0:
    raise ValueError(f"N must be at least 0, not {rows}")
spark = SparkSession.builder.appName("squares").getOrCreate()
pause = float(os.environ.get("SQUARES_TASK_S", "0"))


def squared(part):
    time.sleep(pause)
    return (x * x for x in part)


total = spark.sparkContext.range(rows, numSlices=4).mapPartitions(squared).sum()
conf = dict(spark.sparkContext.getConf().getAll())
spark.stop()
with open(out, "w") as handle:
    json.dump(
        {"args": extra, "sum": total, "app_name": conf.get("spark.app.name"), "conf": conf}, handle
    )
