"""A PySpark application in three bursts with idle spells between them, for dynamic
allocation: its executors are added for each burst and removed when idle (the event logs of
tests/fixtures/eventlogs/dynamic-allocation were recorded with it).

    spark-submit bursts.py [IDLE_S [HOLD_FILE]]

Each burst is one job of 4 tasks that each spin ~1.5 s of CPU; between bursts the driver
sleeps IDLE_S seconds (default 10), longer than an idle timeout of 4 s. With HOLD_FILE the
second burst's tasks wait until that file exists (an hour at most): its executors stay busy
while a test ends some of them (tests/guest/churn.py), however slowly they started.
"""

import os
import sys
import time

from pyspark.sql import SparkSession


def spin(index, rows):
    deadline = time.monotonic() + 1.5
    total = 0
    while time.monotonic() < deadline:
        total += 1
    yield sum(rows) + total * 0


def held(path):
    def wait(index, rows):
        deadline = time.monotonic() + 3600
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.5)
        yield sum(rows)

    return wait


idle_s = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
hold = sys.argv[2] if len(sys.argv) > 2 else None
spark = SparkSession.builder.appName("bursts").getOrCreate()
for burst in range(3):
    if burst:
        time.sleep(idle_s)
    tasks = held(hold) if hold and burst == 1 else spin
    spark.sparkContext.parallelize(range(400), 4).mapPartitionsWithIndex(tasks).sum()
spark.stop()
