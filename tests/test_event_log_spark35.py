"""A Spark 3.5 event log with the affinity plugin's placement (issue 49, item 6), no JVM: the
recorded log of a PySpark application on Spark 3.5.9 (Scala 2.12) with the plugin's one jar,
built against Spark 4, at level node (tests/fixtures/eventlogs/make_fixtures.py says how it was
made). Spark 3.5 writes one file per application (here zstd-compressed, its event-log codec),
not Spark 4's rolling directory: ``advise`` and ``analyze`` read it alone, and ``advise`` reads
the directory that holds it as a History Server's log directory."""

from __future__ import annotations

import json

from conftest import FIXTURES, run_cli

from numaspark.decide.advise import Subject
from numaspark.metrics.eventlog import parse_event_log

DIRECTORY = FIXTURES / "eventlogs" / "plugin-spark35"
(LOG,) = DIRECTORY.glob("app-*.zstd")


def test_a_spark35_log_holds_the_executors_placement_and_the_drivers():
    log = parse_event_log(LOG)
    assert log.spark_version == "3.5.9" and log.complete
    jvms = log.placement.jvms(driver=True)
    assert [j.name for j in jvms] == ["executor 0", "driver"]
    executor = jvms[0]
    assert str(executor.nodes) == "0" and str(executor.bound_nodes) == "0"  # level node
    assert executor.latest.numa_balancing == "0" and executor.latest.cpu_s > 0
    assert executor.python  # PySpark's daemon and worker, seen by the executor's reports


def test_advise_assesses_the_placement_rules_from_a_spark35_log():
    proc = run_cli("advise", str(LOG), "--json")
    assert proc.returncode == 0, proc.stderr
    (advice,) = json.loads(proc.stdout)["advice"]
    found = {f["rule"]: f for f in advice["findings"]}
    unassessed = {n["rule"]: n["why"] for n in advice["not_assessed"]}
    for rule in ("numa-straddle", "remote-pages", "numa-balancing", "python-cpu"):
        assert rule in found, (rule, unassessed.get(rule))
    assert found["numa-straddle"]["severity"] == "none"  # one node here: nothing to straddle
    assert found["remote-pages"]["evidence"]["jvm"] == "executor 0"


def test_analyze_shows_the_placement_of_a_spark35_log():
    proc = run_cli("analyze", str(LOG))
    assert proc.returncode == 0, proc.stderr
    lines = [x.strip() for x in proc.stdout.splitlines()]
    executor = next(x for x in lines if x.startswith("executor 0 on"))
    assert "(node 0)" in executor and "2 Python process(es)" in executor, executor
    assert any(x.startswith("driver on") for x in lines), proc.stdout


def test_a_directory_of_spark35_logs_is_read_as_a_history_servers(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path))  # its cache of what it read
    proc = run_cli("advise", str(DIRECTORY))
    assert proc.returncode == 0, proc.stderr
    row = next(x for x in proc.stdout.splitlines() if "app-20261127200936-0000" in x)
    assert "3.5.9" in row and "bound 0" in row, row


def test_a_local_cluster_log_is_judged_by_its_executors_not_its_driver():
    """local-cluster[N,C,M] (this log's master) starts executors of their own: the driver runs
    no tasks there, so the placement rules judge executor 0 only (local mode judges the
    driver, which runs the tasks)."""
    log = parse_event_log(LOG)
    assert log.spark_properties["spark.master"].startswith("local-cluster[")
    subject = Subject(log, None)
    assert not subject.local
    assert [j.name for j in subject.reported()] == ["executor 0"]
