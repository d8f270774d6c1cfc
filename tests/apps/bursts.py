"""A PySpark application in three bursts with idle spells between them, for dynamic
allocation: its executors are added for each burst and removed when idle (the event logs of
tests/fixtures/eventlogs/dynamic-allocation were recorded with it).

    spark-submit bursts.py [IDLE_S]

Each burst is one job of 4 tasks that each spin ~1.5 s of CPU; between bursts the driver
sleeps IDLE_S seconds (default 10), longer than an idle timeout of 4 s.
"""

import sys
import time

from pyspark.sql import SparkSession


def spin(index, rows):
    deadline = time.monotonic() + 1.5
    total = 0
    while time.monotonic() < deadline:
        total += 1
    yield sum(rows) + total * 0


idle_s = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
spark = SparkSession.builder.appName("bursts").getOrCreate()
for burst in range(3):
    if burst:
        time.sleep(idle_s)
    spark.sparkContext.parallelize(range(400), 4).mapPartitionsWithIndex(spin).sum()
spark.stop()
