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
    .cache()
)
counts.saveAsTextFile(output_dir)
distinct, total = counts.map(lambda kv: (1, kv[1])).reduce(lambda a, b: (a[0] + b[0], a[1] + b[1]))
with open(result_path, "w") as out:
    json.dump(
        {
            "total_words": int(total),
            "distinct_words": int(distinct),
            "job_s": time.time() - started,
        },
        out,
    )
spark.stop()
