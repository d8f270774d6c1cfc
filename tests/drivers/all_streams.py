"""Test driver: every streaming query in one Spark application, the word queries one after
another beside the click queries one after another.

``spark-submit all_streams.py WORDS_DIR CLICKS_DIR OUT_JSON PARAMS_JSON`` where
PARAMS_JSON maps each workload to its job parameters. The i-th query of a kind
reads connection i of that kind's source. One application instead of eight
saves seven Spark start-ups of CI time; each query runs as it does under
``numaspark run``. The two kinds' sources are separate processes, so each kind runs
from a Python thread of its own (PySpark pins it to a JVM thread: its job group is its
own) in a session of its own (its query names and memory tables apart): two queries at
once, half the time of eight in a row.
"""

import json
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import SparkSession

from numaspark.workloads.harness import JOB_GROUP_PREFIX
from numaspark.workloads.jobs.streaming import QUERIES, stream

words_dir, clicks_dir, out_path = sys.argv[1:4]
params = json.loads(sys.argv[4])
spark = SparkSession.builder.appName("numaspark-test-streams").getOrCreate()
answers = {}
written = threading.Lock()


def run_kind(kind: str, source: str) -> None:
    """This kind's queries in the suite's order: the i-th reads connection i."""
    session = spark.newSession()
    names = [name for name, (k, _) in QUERIES.items() if k == kind]
    for connection, name in enumerate(names):
        spark.sparkContext.setJobGroup(f"{JOB_GROUP_PREFIX}{connection}", name)
        with tempfile.TemporaryDirectory() as output:
            answer = stream(session, source, output, params[name])
        with written:
            answers[name] = answer
            with open(out_path, "w") as out:
                json.dump(answers, out)


try:
    with ThreadPoolExecutor(max_workers=2) as pool:
        kinds = [
            pool.submit(run_kind, "words", words_dir),
            pool.submit(run_kind, "clicks", clicks_dir),
        ]
        for kind in kinds:
            kind.result()  # a query's exception fails the application
finally:
    spark.stop()
