"""A user's PySpark application that holds its Spark session open until told: the tests
look at what it serves meanwhile (its Spark UI), then release it.

    spark-submit holds.py RELEASE_FILE

It sums 0..999 once, then waits (at most 120 s) until RELEASE_FILE exists, and stops.
"""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

release = Path(sys.argv[1])
spark = SparkSession.builder.appName("holds").getOrCreate()
spark.sparkContext.range(1000, numSlices=2).sum()
deadline = time.monotonic() + 120
while not release.exists() and time.monotonic() < deadline:
    time.sleep(0.2)
spark.stop()
