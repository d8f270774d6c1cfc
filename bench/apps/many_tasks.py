"""A PySpark application of many short tasks for bench/eventlog_placement.py: N tasks, each
sleeping S seconds in its Python worker, in one job (the event log's size grows with the
tasks; the plugin's events with the run's length and its executors).

    spark-submit many_tasks.py TASKS SECONDS_PER_TASK
"""

import sys
import time

from pyspark.sql import SparkSession

tasks, pause = int(sys.argv[1]), float(sys.argv[2])
spark = SparkSession.builder.appName("many-tasks").getOrCreate()


def held(part):
    time.sleep(pause)
    return [sum(part)]


total = spark.sparkContext.range(tasks * 10, numSlices=tasks).mapPartitions(held).sum()
spark.stop()
print(total)
