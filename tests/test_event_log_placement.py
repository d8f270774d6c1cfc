"""Real Spark for issue 49: the affinity plugin's placement in Spark's own event log, from a
plain spark-submit (Spark's script, no numaspark) that uses only what ``numaspark plan
--target standalone --bind node --out DIR`` wrote, against a standalone cluster at another
address; then ``numaspark advise`` and ``analyze`` on that log alone.

The other address is a network namespace on this machine (tests/nscluster.py): a plain Master
and Worker started there with Spark's own classes. This machine has one NUMA node, so node
binding chooses node 0: the test proves that the facts reach the log and are read back, not
that binding pays. Run under the JVM lock (one Spark at a time on this machine).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from history_server import history_server, rest
from nscluster import NamespaceCluster

from numaspark.metrics.eventlog import parse_event_log, read_events
from numaspark.placement.plugin import PLACEMENT_EVENT, jar_path
from numaspark.spark.home import spark_env, spark_home

pytestmark = [pytest.mark.integration, pytest.mark.jvm]
APPS = Path(__file__).resolve().parent / "apps"


def _numaspark(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "numaspark", *args],
        text=True,
        capture_output=True,
        env={**os.environ, "COLUMNS": "300"},
        timeout=300,
    )


def _plain_submit(argv: list[str], here: str) -> subprocess.CompletedProcess[str]:
    """Spark's own spark-submit, as a user runs it (no numaspark in the way). Each of the
    squares app's tasks lasts a second, so that its Python workers are seen by a report."""
    return subprocess.run(
        [str(spark_home() / "bin" / "spark-submit"), *argv],
        text=True,
        capture_output=True,
        env={**spark_env(here), "SQUARES_TASK_S": "1.5"},
        timeout=600,
    )


def test_a_plain_spark_submit_writes_placement_into_its_event_log(tmp_path, no_spark_left):
    plan, events = tmp_path / "plan", tmp_path / "events"
    events.mkdir()
    made = _numaspark("plan", "--target", "standalone", "--bind", "node", "--out", str(plan))
    assert made.returncode == 0, made.stderr
    with NamespaceCluster(tmp_path / "cluster", cores=2, memory="2g") as host:
        proc = _plain_submit(
            [
                "--master",
                host.master,
                "--properties-file",
                str(plan / "spark-defaults.conf"),
                "--conf",
                "spark.executor.memory=1g",
                "--conf",
                "spark.eventLog.enabled=true",
                "--conf",
                f"spark.eventLog.dir=file://{events}",
                "--conf",
                f"spark.driver.host={host.here}",
                "--conf",
                f"spark.pyspark.python={sys.executable}",
                "--conf",  # the app lasts seconds: a report every second, a batch every two
                "spark.numaspark.affinity.reportIntervalMs=1000",
                "--conf",
                "spark.numaspark.affinity.eventLogIntervalMs=2000",
                str(APPS / "squares.py"),
                str(tmp_path / "answer.json"),
                "2000",
            ],
            host.here,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
    (log,) = list(events.iterdir())
    batches = [e for e in read_events(log) if e["Event"] == PLACEMENT_EVENT]
    assert batches, "no placement event in the log"
    reports = [r for b in batches for r in b["reports"]]
    executors = {r["executor"] for r in reports}
    assert "driver" in executors and executors - {"driver"}, executors
    first = next(r for r in reports if r["executor"] != "driver")
    assert first["host_topology"]["nodes"] and first["chosen_nodes"] == "0", first
    assert first["numa_balancing"] in ("0", "1", "2") and first["cpu_s"] > 0, first
    parsed = parse_event_log(log)
    assert [j.name for j in parsed.placement.jvms()] == ["executor 0"]

    assert len(batches) >= 2, "one batch: the interval did not apply"
    advised = _numaspark("advise", str(log), "--json")
    assert advised.returncode == 0, advised.stderr
    (advice,) = json.loads(advised.stdout)["advice"]
    found = {f["rule"]: f for f in advice["findings"]}
    unassessed = {n["rule"]: n["why"] for n in advice["not_assessed"]}
    for rule in ("numa-straddle", "remote-pages", "numa-balancing", "python-cpu"):
        assert rule in found, (rule, unassessed.get(rule))
    assert found["numa-straddle"]["severity"] == "none"  # one node here: no executor spans two

    analyzed = _numaspark("analyze", str(log))
    assert analyzed.returncode == 0, analyzed.stderr
    line = next(x for x in analyzed.stdout.splitlines() if x.strip().startswith("executor 0"))
    assert "(node 0)" in line and "Python process" in line, analyzed.stdout


# a scenario of a minute, run by the long lane to keep CI short:
# numaspark's own --deploy-mode cluster test stays in the default lane
@pytest.mark.long(script="bash scripts/test.sh --long")
def test_a_plain_cluster_mode_submit_of_a_jar_writes_placement_into_its_event_log(
    tmp_path, no_spark_left
):
    """The same with a JAR in cluster deploy mode: the driver runs on the worker over there
    (the plugin's jar and the event-log directory at paths that host shares), and `advise`
    judges the placement from the log alone. The worker has a third core: the plan's
    executor takes two, the driver one (numaspark run leaves it by itself; a plain
    spark-submit does not)."""
    from test_applications import _java_app

    plan, events, jar = tmp_path / "plan", tmp_path / "events", _java_app(tmp_path)
    events.mkdir()
    made = _numaspark("plan", "--target", "standalone", "--bind", "node", "--out", str(plan))
    assert made.returncode == 0, made.stderr
    with NamespaceCluster(tmp_path / "cluster", cores=3, memory="3g") as host:
        proc = _plain_submit(
            [
                "--master",
                host.master,
                "--deploy-mode",
                "cluster",
                "--properties-file",
                str(plan / "spark-defaults.conf"),
                "--conf",
                "spark.executor.memory=512m",
                "--conf",
                "spark.standalone.submit.waitAppCompletion=true",
                "--conf",
                "spark.eventLog.enabled=true",
                "--conf",
                f"spark.eventLog.dir=file://{events}",
                "--class",
                "Squares",
                str(jar),
                str(tmp_path / "answer.json"),
                "1000",
            ],
            host.here,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
    (log,) = list(events.iterdir())
    reports = [r for e in read_events(log) if e["Event"] == PLACEMENT_EVENT for r in e["reports"]]
    assert {r["executor"] for r in reports} == {"driver", "0"}, reports
    advised = _numaspark("advise", str(log), "--json")
    assert advised.returncode == 0, advised.stderr
    (advice,) = json.loads(advised.stdout)["advice"]
    found = {f["rule"] for f in advice["findings"]}
    assert {"numa-straddle", "remote-pages"} <= found, advice["not_assessed"]


RECORDED = Path(__file__).resolve().parent / "fixtures" / "eventlogs" / "plugin-standalone"


def _history_server(logs: Path, classpath: str | None, out: Path, home: Path | None = None) -> dict:
    """What Spark's own History Server over ``logs`` (tests/history_server.py) says of the one
    application there: its entry, executors, jobs and the server's version."""
    with history_server(logs, out, classpath, home) as base:
        (app,) = rest(base, "applications")
        return {
            "app": app,
            "executors": rest(base, f"applications/{app['id']}/allexecutors"),
            "jobs": rest(base, f"applications/{app['id']}/jobs"),
            "version": rest(base, "version"),
        }


@pytest.mark.parametrize("with_jar", [False, True], ids=["without-the-jar", "with-the-jar"])
def test_the_history_server_replays_a_log_with_placement_events(tmp_path, no_spark_left, with_jar):
    """Without the plugin's jar the History Server skips the events (a class it cannot load);
    with it, it reads them back and goes on: either way the whole application replays, its
    executors listed and its job ended."""
    logs = tmp_path / "logs"
    (status,) = RECORDED.glob("appstatus_*")  # Spark reads a rolling log by its name
    shutil.copytree(RECORDED, logs / f"eventlog_v2_{status.name.removeprefix('appstatus_')}")
    said = _history_server(logs, str(jar_path()) if with_jar else None, tmp_path / "hs.log")
    assert said["app"]["attempts"][0]["completed"] is True
    assert {e["id"] for e in said["executors"]} == {"driver", "0"}
    assert [j["status"] for j in said["jobs"]] == ["SUCCEEDED"]
    log = (tmp_path / "hs.log").read_text()
    dropped = f"Drop unrecognized event: {PLACEMENT_EVENT}" in log  # Spark's ReplayListenerBus
    assert dropped is not with_jar, log[-3000:]
    assert "Exception" not in log, log[-3000:]


def test_cluster_deploy_mode_of_a_jar_on_a_standalone_master(tmp_path, no_spark_left):
    """`numaspark run --master spark://OTHER:7077 -- spark-submit --deploy-mode cluster
    --class C app.jar ARGS`: the driver runs on the worker over there; numaspark waits for it,
    reads its end from the master and its executors' placement from the event log it wrote
    (the run directory is on a file system the namespace host shares, as a cluster's NFS).
    A driver that fails there (a negative N) is a failed run, with the master's word for it."""
    from test_applications import _java_app

    jar, answer, out = _java_app(tmp_path), tmp_path / "answer.json", tmp_path / "out"

    def submit(n: int) -> subprocess.CompletedProcess[str]:
        return _numaspark(
            "run",
            "--master",
            host.master,
            "--master-ui",
            host.ui,
            "--bind",
            "node",
            "--out",
            str(out),
            "--",
            "spark-submit",
            "--deploy-mode",
            "cluster",
            "--class",
            "Squares",
            str(jar),
            str(answer),
            str(n),
        )

    with NamespaceCluster(tmp_path / "cluster", cores=2, memory="2g") as host:
        ok, failed = submit(1000), submit(-1)
        assert not host.executors()
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert "cluster deploy mode: the driver runs on a worker of" in ok.stderr
    assert "1 core(s) and 1024 MB of a worker are left to the driver" in ok.stderr, ok.stderr
    assert json.loads(answer.read_text())["sum"] == sum(x * x for x in range(1000))
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["ok", "failed"], records[-1]["failure_reason"]
    effective = records[0]["effective_placement"]
    assert effective and all(e["source"] == "plugin" for e in effective), effective
    # the driver, over there, took a node slot of its host itself (the driver plugin, at
    # level node): its reports in the event log say which node and what it applied
    (driver,) = [
        j
        for j in parse_event_log(records[0]["artifacts"]["event_log"]).placement.jvms(driver=True)
        if j.name == "driver"
    ]
    assert driver.latest.chosen_nodes == "0", driver.latest  # unbound, it would be None
    assert failed.returncode != 0
    assert "ended FAILED on the cluster" in records[1]["failure_reason"], records[1]
