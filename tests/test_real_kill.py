"""A configuration a real cluster kills for its memory (issue 48, item 4): the tuner learns
from a failure only where its words say the cluster refused or killed it
(decide/steer.py's `refusal`). The other tests feed it recorded words; here a real
standalone cluster on this machine (one bound worker, started by numaspark) gives an
executor of a 512m heap a task that outgrows it (tests/apps/outgrows.py): the executor dies
of OutOfMemoryError, Spark loses its task, and the run's own failure, as the run record
keeps it, is read as the cluster's ("memory"), so a tune would leave out every configuration
that asks as much. Run under the JVM lock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from numaspark import records
from numaspark.decide.steer import observe, refusal
from numaspark.experiment.result import RunResult

APPS = Path(__file__).resolve().parent / "apps"


@pytest.mark.jvm
@pytest.mark.integration
def test_an_executor_killed_for_its_memory_is_read_as_the_clusters_refusal(tmp_path, no_spark_left):
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        str(APPS / "outgrows.py"),
        "--mode",
        "standalone",
        "--executors",
        "1",
        "--cores-per-executor",
        "1",
        "--memory-per-executor",
        "512m",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--conf",
        "spark.task.maxFailures=1",  # one lost task fails the job: no second executor
        "--out",
        str(out),
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    (line,) = (out / "results.jsonl").read_text().splitlines()
    result = records.load(RunResult, json.loads(line))
    assert not result.ok and result.failure_reason, line[:2000]
    print(f"\nthe run's failure: {result.failure_reason[:300]}")
    assert refusal(result.failure_reason) == "memory", result.failure_reason
    observed = observe([], failed=[result])
    assert observed.value is None and observed.refused == "memory"


def test_a_pyspark_driver_s_java_error_keeps_its_cause(tmp_path):
    """PySpark prints a Java failure as py4j's "An error occurred while calling", the cause
    on the next line after ": ": the run's failure keeps both (the cause is what says the
    cluster killed an executor; the first line alone said nothing, found by the test above)."""
    from numaspark.spark.logs import last_error_line

    log = tmp_path / "spark-submit.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "outgrows.py", line 22, in <module>\n'
        "py4j.protocol.Py4JJavaError: An error occurred while calling o53.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Lost task 0.0 "
        "(TID 0) (127.0.0.1 executor 0): java.lang.OutOfMemoryError: Java heap space\n"
        "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages\n"
    )
    line = last_error_line(log)
    assert line.startswith("py4j.protocol.Py4JJavaError: An error occurred while calling o53")
    assert line.endswith("java.lang.OutOfMemoryError: Java heap space")
    assert refusal(line) == "memory"
    log.write_text("ValueError: N must be at least 0, not -5\n")
    assert last_error_line(log) == "ValueError: N must be at least 0, not -5"
