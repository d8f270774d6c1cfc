"""wordcount (RDD): spark-submit wordcount.py INPUT OUTPUT RESULT_JSON."""

import json
import sys
import time
from operator import add

from pyspark.sql import SparkSession

input_dir, output_dir, result_path = sys.argv[1:4]
spark = SparkSession.builder.appName("numaspark-wordcount").getOrCreate()
started = time.time()
counts = (
    spark.sparkContext.textFile(input_dir)
    .flatMap(lambda line: line.split())
    .map(lambda word: (word, 1))
    .reduceByKey(add)
)
counts.saveAsTextFile(output_dir)
summary = spark.read.text(output_dir).count()  # one line per distinct word
total = counts.map(lambda kv: kv[1]).sum()
with open(result_path, "w") as out:
    json.dump(
        {"total_words": int(total), "distinct_words": int(summary), "job_s": time.time() - started},
        out,
    )
spark.stop()
