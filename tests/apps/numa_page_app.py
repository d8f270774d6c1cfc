"""Holds a PySpark application open while tests/test_ui_page.py reads its NUMA page: runs one
job whose Python workers live a few seconds, then waits until the file DONE exists (the test
has read the page) or LIMIT seconds have passed, and stops.

    spark-submit numa_page_app.py DONE [LIMIT_S]
"""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

done, limit = Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 180.0
spark = SparkSession.builder.appName("numa-page").getOrCreate()


def squared(part):
    time.sleep(1.0)  # the workers live past a report or two
    return (x * x for x in part)


total = spark.sparkContext.range(400, numSlices=4).mapPartitions(squared).sum()
print(f"sum {total}", flush=True)
deadline = time.monotonic() + limit
while not done.exists() and time.monotonic() < deadline:
    time.sleep(0.2)
spark.stop()
