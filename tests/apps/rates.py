"""A user's Structured Streaming application, as the tests hand it to numaspark: counts the
rows of Spark's rate source in 2-second windows, forever (it never ends by itself).

    spark-submit rates.py ROWS_PER_SECOND
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import window

spark = SparkSession.builder.appName("rates").getOrCreate()
spark.conf.set("spark.sql.shuffle.partitions", "2")
rows = spark.readStream.format("rate").option("rowsPerSecond", int(sys.argv[1])).load()
counts = rows.groupBy(window("timestamp", "2 seconds")).count()
query = (
    counts.writeStream.outputMode("update")
    .format("noop")
    .trigger(processingTime="1 second")
    .start()
)
query.awaitTermination()
