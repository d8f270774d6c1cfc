"""A user's PySpark application that says which Spark, pyspark and Java ran it: the driver's
pyspark, each Python worker's pyspark, Spark's version and the driver JVM's Java, as JSON.

    spark-submit versions.py OUT.json [TASK_SECONDS]

Its four tasks each last TASK_SECONDS (default 1.5), so that the plugin's reports see them.
"""

import json
import sys
import time

import pyspark
from pyspark.sql import SparkSession

out = sys.argv[1]
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
spark = SparkSession.builder.appName("versions").getOrCreate()
context = spark.sparkContext


def worker_version(part):
    time.sleep(pause)
    import pyspark as worker_pyspark

    yield worker_pyspark.__version__


workers = sorted(set(context.parallelize(range(4), 4).mapPartitions(worker_version).collect()))
found = {
    "driver_pyspark": pyspark.__version__,
    "worker_pyspark": workers,
    "spark": context.version,
    "java": context._jvm.java.lang.System.getProperty("java.version"),
}
spark.stop()
with open(out, "w") as handle:
    json.dump(found, handle)
