"""A user's PySpark application that outgrows its executors' heap: every value of one group
is collected into one list, in the JVM, so an executor of a small heap dies of
OutOfMemoryError (Spark's handler ends it with exit code 52) and its task is lost with it.

    spark-submit outgrows.py [ROWS]

The real kill a cluster's executors meet when a configuration asks too little memory for
its tasks (tests/test_real_kill.py).
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 40_000_000
spark = SparkSession.builder.appName("outgrows").getOrCreate()
# collect_list aggregates partially in each map task: each one's list of rows / 2 boxed
# longs is several times the 512m executor's usable heap
spark.range(rows, numPartitions=2).withColumn("k", F.lit(0)).groupBy("k").agg(
    F.collect_list("id")
).collect()
spark.stop()
