"""Test driver: every streaming query, one after another, in one Spark application.

``spark-submit all_streams.py WORDS_DIR CLICKS_DIR OUT_JSON PARAMS_JSON`` where
PARAMS_JSON maps each workload to its job parameters. The i-th query of a kind
reads connection i of that kind's source. One application instead of eight
saves seven Spark start-ups of CI time; each query runs as it does under
``numaspark run``.
"""

import json
import sys
import tempfile

from pyspark.sql import SparkSession

from numaspark.workloads.harness import JOB_GROUP_PREFIX
from numaspark.workloads.jobs.streaming import QUERIES, stream

words_dir, clicks_dir, out_path = sys.argv[1:4]
params = json.loads(sys.argv[4])
spark = SparkSession.builder.appName("numaspark-test-streams").getOrCreate()
answers = {}
used = {"words": 0, "clicks": 0}
try:
    for name, (kind, _) in QUERIES.items():
        spark.sparkContext.setJobGroup(f"{JOB_GROUP_PREFIX}{used[kind]}", name)
        used[kind] += 1
        with tempfile.TemporaryDirectory() as output:
            source = words_dir if kind == "words" else clicks_dir
            answers[name] = stream(spark, source, output, params[name])
        with open(out_path, "w") as out:
            json.dump(answers, out)
finally:
    spark.stop()
