"""Executors that die as they start: the driver's log read, the one line, the wait's progress.

The fixtures are real (tests/fixtures/deaths): the driver's log of ``numaspark run wordcount
--master spark://10.215.128.2:7077`` from the root namespace, with the cluster in a network
namespace of its own (tests/nscluster.py) and the driver on 127.0.0.1, and the first dead
executor's stderr from the worker's work directory. The clock is faked; the master's status
page and the worker's log page are served by the test over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from statuspage import pages, recorded_status
from test_yarn import site

from numaspark.placement import Layout, plan
from numaspark.spark.executor_deaths import DriverLog, explain
from numaspark.spark.first_executor import FirstExecutorWait, cannot_hold
from numaspark.topology import load_synthetic

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "deaths"
DRIVER_LOG = FIXTURES / "standalone-driver.log"
STDERR = (FIXTURES / "executor-stderr.txt").read_text()
MASTER = "spark://10.215.128.2:7077"
APP = "app-20261126160222-0000"
WORKER = "worker-20261126160200-10.215.128.2-7078"
UNREACHABLE = (
    "executors on 10.215.128.2 could not reach the driver at 127.0.0.1:46423 "
    '("Connection refused"): give --driver-host an address they can reach'
)


def _placement(cores: int = 1):
    return plan(
        load_synthetic(f"package:1 numa:1 core:{cores} pu:1"),
        Layout(executors=1, cores_per_executor=1, memory_per_executor=512 << 20),
    )


@contextlib.contextmanager
def _cluster_pages(status: dict, stderr: dict[str, str]) -> Iterator[str]:
    """A master's /json/ and a worker's /log (an executor's stderr by its id), on one port;
    ``{ui}`` in the status is replaced by the served base URL."""
    asked: list[str] = []

    def answer(url, base: str) -> bytes | None:
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/json/":
            return json.dumps(status).replace("{ui}", base).encode()
        if url.path == "/log" and query.get("executorId") in stderr:
            asked.append(f"{query['appId']}/{query['executorId']}/{query['logType']}")
            return stderr[query["executorId"]].encode()
        return None

    with pages(answer) as base:
        yield base
    assert not stderr or asked, "the worker's log page was never asked"


def _status(**worker) -> dict:
    status = recorded_status()
    status["workers"][0].update(
        {
            "id": WORKER,
            "host": "10.215.128.2",
            "cores": 1,
            "memory": 1024,
            "webuiaddress": "{ui}",
            **worker,
        }
    )
    return status


def test_the_driver_log_names_the_launches_the_deaths_and_the_driver():
    log = DriverLog.read(DRIVER_LOG)
    assert log.app_id == APP
    assert log.driver == "127.0.0.1:46423"
    assert list(log.launched) == [f"{APP}/0", f"{APP}/1", f"{APP}/2"]
    assert {host for host, _ in log.launched.values()} == {"10.215.128.2"}
    assert [(d.executor, d.host, d.reason, d.worker) for d in log.deaths] == [
        (f"{APP}/0", "10.215.128.2", "Command exited with code 1", WORKER),
        (f"{APP}/1", "10.215.128.2", "Command exited with code 1", WORKER),
    ]
    assert log.hosts() == ["10.215.128.2"]
    assert DriverLog.read(FIXTURES / "missing.log").deaths == []


def test_the_line_quotes_the_executors_own_error():
    log = DriverLog.read(DRIVER_LOG)
    assert explain(log, {f"{APP}/1": STDERR}, MASTER) == UNREACHABLE


def test_without_their_stderr_the_line_says_where_it_is_and_where_the_driver_listens():
    line = explain(DriverLog.read(DRIVER_LOG), {}, MASTER)
    assert line.startswith(
        f"executors on 10.215.128.2 died as they started (2 of them, the "
        f'cluster at {MASTER}: "Command exited with code 1") (the driver '
        "listens on 127.0.0.1:46423); their own error is in their stderr"
    ), line
    other = STDERR.replace("Failed to connect to /127.0.0.1:46423", "Something else")
    other = "\n".join(line for line in other.splitlines() if "Connection refused" not in line)
    line = explain(DriverLog.read(DRIVER_LOG), {f"{APP}/1": other}, MASTER)
    assert "could not reach" not in line and "died as they started (2 of them" in line
    assert line.endswith(
        '(the driver listens on 127.0.0.1:46423): "Caused by: java.io.IOException: Something else"'
    ), line


def test_two_deaths_stop_the_wait_at_once_with_the_stderr_the_worker_serves(tmp_path):
    now = [0.0]
    with _cluster_pages(_status(), {"0": STDERR, "1": STDERR}) as ui:
        wait = FirstExecutorWait(
            MASTER, 300, tmp_path / "reports", DRIVER_LOG, _placement(), ui=ui, clock=lambda: now[0]
        )
        assert wait() == UNREACHABLE
    assert wait.app_id == APP


def test_one_death_stops_the_wait_ten_seconds_later_without_the_workers_page(tmp_path):
    text = DRIVER_LOG.read_text()
    one = text[: text.index(f"Executor updated: {APP}/1 is now EXITED")]
    log = tmp_path / "spark-submit.log"
    log.write_text(one.rsplit("\n", 1)[0] + "\n")
    now = [0.0]
    wait = FirstExecutorWait(
        MASTER,
        300,
        tmp_path / "reports",
        log,
        _placement(),
        ui="http://127.0.0.1:1",
        clock=lambda: now[0],
    )
    assert wait() is None
    now[0] = 9.9
    assert wait() is None
    now[0] = 10.0
    line = wait()
    assert line.startswith("executors on 10.215.128.2 died as they started (1 of them"), line


def test_a_reported_executor_ends_the_wait_for_good(tmp_path):
    reports = tmp_path / "placement.jsonl"
    reports.write_text('{"executor": "0"}\n')
    now = [0.0]
    wait = FirstExecutorWait(MASTER, 300, reports, DRIVER_LOG, _placement(), clock=lambda: now[0])
    assert wait() is None
    reports.unlink()
    now[0] = 1000.0
    assert wait() is None


def test_while_it_waits_it_says_what_for_every_30_s(tmp_path):
    log = tmp_path / "spark-submit.log"
    said: list[str] = []
    now = [0.0]
    wait = FirstExecutorWait(
        MASTER, 300, tmp_path / "reports", log, _placement(), say=said.append, clock=lambda: now[0]
    )
    for t in (1.0, 29.9):
        now[0] = t
        assert wait() is None
    assert said == []
    now[0] = 30.0
    wait()
    assert said == [
        f"waiting for a first executor from {MASTER}: 30 s of --executor-wait 300 s; "
        "the application has not reached the cluster yet"
    ]
    text = DRIVER_LOG.read_text()
    log.write_text(text[: text.index(f"Executor updated: {APP}/0 is now EXITED")])
    now[0] = 45.0
    wait()
    now[0] = 60.5
    wait()
    assert len(said) == 2 and said[1].endswith(
        "60 s of --executor-wait 300 s; 1 launched on 10.215.128.2, none started yet"
    ), said


def test_cannot_hold_only_when_the_masters_status_says_so(tmp_path):
    placement = _placement()
    assert cannot_hold(_status(), placement) is None
    assert cannot_hold(None, placement) is None  # unknown: not claimed
    busy = _status(coresused=1)
    assert cannot_hold(busy, placement) == (
        "room for 0 of 1 executor(s) of 1 core(s) and 512 MB heap; its alive workers: "
        "10.215.128.2: 0 cores, 1024 MB free"
    )
    now = [0.0]
    log = tmp_path / "spark-submit.log"
    for status, said in (
        (busy, "cannot hold the plan now (room for 0 of 1"),
        (_status(), "gave the application none (the application has not"),
    ):
        with _cluster_pages(status, {}) as ui:
            wait = FirstExecutorWait(
                MASTER,
                300,
                tmp_path / "reports",
                log,
                placement,
                ui=ui,
                has="1 alive worker(s)",
                clock=lambda: now[0],
            )
            now[0] = 300.0
            line = wait()
        assert line.startswith(
            f"no executor started within 300 s: the cluster at {MASTER} (it "
            f"has 1 alive worker(s)) {said}"
        ), line
        now[0] = 0.0


@contextlib.contextmanager
def _resourcemanager(nodes: dict, apps: dict[str, dict]) -> Iterator[str]:
    """A ResourceManager's REST API: its running nodes, and each application's report."""

    def answer(url, base: str) -> bytes | None:
        if url.path == "/ws/v1/cluster/nodes":
            return json.dumps(nodes).encode()
        app = url.path.removeprefix("/ws/v1/cluster/apps/")
        return json.dumps({"app": apps[app]}).encode() if app in apps else None

    with pages(answer) as base:
        yield base


def test_yarn_cannot_hold_counts_a_granted_application_master_once(tmp_path, monkeypatch):
    """An application still ACCEPTED whose application master's container YARN has granted
    (896 MB of the node's 4096, not yet registered: seen on the mini YARN in a namespace): the
    3200 MB left hold the executor's container, so "cannot hold" is not said; before a grant,
    3500 MB free cannot hold both the master's 896 MB and the executor's 3200."""
    app = "application_1795718620485_0001"
    log = tmp_path / "spark-submit.log"
    log.write_text(
        f"26/11/26 18:44:45 INFO Client: Application report for {app} (state: ACCEPTED)\n"
    )
    node = {"id": "localhost:39387", "nodeHostName": "localhost", "state": "RUNNING"}
    heap = 2816 << 20  # a container of 3200 MB: 2816 MB + 384 overhead
    placement = replace(
        _placement(),
        jvms=tuple(replace(j, heap=heap) if j.runs_tasks else j for j in _placement().jvms),
    )
    now = [0.0]
    for free_mb, granted, said in (
        (3200, 896, "gave the application none"),
        (3500, 0, "cannot hold the plan now"),
    ):
        nodes = {
            "nodes": {
                "node": [
                    {
                        **node,
                        "availableVirtualCores": 2 if not granted else 1,
                        "availMemoryMB": free_mb,
                    }
                ]
            }
        }
        with _resourcemanager(nodes, {app: {"id": app, "allocatedMB": granted}}) as rm:
            monkeypatch.setenv("HADOOP_CONF_DIR", str(site(tmp_path / f"conf{granted}", rm)))
            wait = FirstExecutorWait(
                "yarn",
                300,
                tmp_path / "reports",
                log,
                placement,
                has="1 running node(s)",
                clock=lambda: now[0],
            )
            now[0] = 300.0
            line = wait()
            now[0] = 0.0
        assert line.startswith(
            "no executor started within 300 s: the cluster at yarn (it has "
            f"1 running node(s)) {said}"
        ), line


def test_yarn_containers_whose_java_did_not_start_are_deaths_with_their_own_error():
    """A real driver's log (tests/fixtures/deaths/yarn-driver.log, its first 190 lines):
    ``numaspark run squares.py --master yarn`` from the root namespace, the mini YARN on a host
    of its own at 10.217.247.11 (tests/test_yarn_hosts.py), every executor container given a
    JAVA_HOME that does not exist. Spark's YarnAllocator says "Container from a bad node" for
    exit status 127, not "marked as failed": both are deaths, with the container's stderr."""
    log = DriverLog.read(FIXTURES / "yarn-driver.log")
    assert [d.executor for d in log.deaths] == [
        f"container_1795722366601_0002_01_00000{n}" for n in (2, 3, 4)
    ]
    assert {d.host for d in log.deaths} == {"localhost"}
    assert all(
        "/nonexistent-java/bin/java: No such file or directory" in d.reason for d in log.deaths
    )
    line = explain(log, {}, "yarn")
    assert line.startswith(
        "executors on localhost died as they started (3 of them, the cluster at yarn)"
    ), line
    assert "No such file or directory" in line and "\n" not in line
