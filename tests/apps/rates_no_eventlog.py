"""rates.py with its event log turned off in its own code (which wins over spark-submit's
--conf): `--duration` must still count from its start, here its Spark UI's.

    spark-submit rates_no_eventlog.py ROWS_PER_SECOND
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import window

spark = (
    SparkSession.builder.appName("rates-no-eventlog")
    .config("spark.eventLog.enabled", "false")
    .getOrCreate()
)
assert spark.conf.get("spark.eventLog.enabled") == "false"
spark.conf.set("spark.sql.shuffle.partitions", "2")
rows = spark.readStream.format("rate").option("rowsPerSecond", int(sys.argv[1])).load()
counts = rows.groupBy(window("timestamp", "2 seconds")).count()
query = counts.writeStream.outputMode("update").format("noop").start()
query.awaitTermination()
