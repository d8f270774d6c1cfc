"""Real Spark on this machine: local and standalone runs, bindings read from /proc,
interruption, executor relaunch loops, a kept cluster, and Spark's own REST API.

This machine has one NUMA node and a few CPUs: these tests check the real
path on what exists (per-CPU binding, membind to node 0); multi-node plans are
tested on shared/topologies in test_planner.py.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from conftest import FIXTURES, run_cli

from numaspark.metrics.aggregate import aggregate
from numaspark.metrics.eventlog import parse_event_log
from numaspark.spark.home import DAEMON_JAVA_OPTS, free_port, spark_env, spark_home
from numaspark.supervise.processes import ProcessTracker
from numaspark.topology import CpuSet

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_spark_left")]
CPUS = CpuSet(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 allowed CPUs")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def _results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.jvm
def test_local_run_bound_to_the_node(tmp_path, data):
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        "wordcount",
        "--mode",
        "local",
        "--bind",
        "node",
        "--warmup",
        "1",
        "--repeat",
        "2",
        "--out",
        str(out),
        "--data",
        str(data),
    )
    assert proc.returncode == 0, proc.stderr
    assert "executorRunTime =>" in proc.stdout
    runs = _results(out)
    assert [r["spec"]["warmup"] for r in runs] == [True, False, False]
    assert all(r["status"] == "ok" and r["check"]["passed"] for r in runs)
    assert len({r["app_id"] for r in runs}) == 1  # one application ran the three iterations
    (driver,) = runs[0]["effective_placement"]
    assert CpuSet.parse(driver["cpus"]) == CPUS
    assert driver["policy"] == "bind:0" and driver["differences"] == []
    assert all(r["metrics"]["executorRunTime"] > 0 for r in runs)
    assert runs[0]["environment"]["topology_fingerprint"]
    _assert_measured(runs[-1], proc.stdout)


@pytest.mark.jvm
def test_local_run_bound_by_numasparks_own_binder(local_core_run):
    """Where numactl is not installed (docs/install.md): the driver started under
    ``python -m numaspark.bindexec``, its CPUs and preferred node read back from /proc. The
    run (NUMASPARK_BINDER=numaspark) is the one test_affinity.py's local pinning reads too."""
    proc, run = local_core_run
    assert proc.returncode == 0, proc.stderr
    assert run["status"] == "ok" and run["check"]["passed"]
    (planned,) = [j for j in run["spec"]["placement"]["jvms"] if j["runs_tasks"]]
    assert planned["prefix"] == [
        sys.executable,
        "-m",
        "numaspark.bindexec",
        "--cpus",
        planned["cpus"],
        "--policy",
        "preferred",
        "--nodes",
        "0",
        "--",
    ]
    (driver,) = run["effective_placement"]
    assert driver["cpus"] == planned["cpus"] and driver["policy"] == "prefer:0"
    assert driver["differences"] == []


def _assert_measured(run: dict, stdout: str) -> None:
    """What the collectors must record for a node-bound run on this one-node machine."""
    m = run["measurements"]
    (numa,) = m["numa"]["jvms"]
    assert set(numa["bytes_per_node"]) == {"0"} and numa["share_on_bound_nodes"] == 1.0
    (jvm,) = m["os"]["jvms"]
    assert jvm["voluntary_switches"] + jvm["involuntary_switches"] > 0
    assert jvm["cpu_user_s"] > 0 and m["os"]["cpu_user_share"] > 0
    assert m["os"]["cpu_system_share"] >= 0 and m["os"]["cpu_iowait_share"] >= 0
    assert m["gc"][0]["gc_share"] is not None and run["metrics"]["gcShare"] is not None
    assert m["executor_cpu_gap"]["ratio"] > 0
    perf = m["perf"]
    if "problem" not in perf:  # perf is installed by setup where apt allows
        assert "cycles" in perf["unsupported"]  # a KVM guest: no hardware counters
        assert perf["events"]["task-clock"]["status"] == "measured"
    assert "IPC: unavailable" in stdout or "hardware counters: unavailable" in stdout
    assert "of its resident pages on its bound node(s) 0" in stdout


def _wait_for_answers(out: Path, count: int, proc: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = sum(len(p.read_text().splitlines()) for p in out.glob("runs/*/answers.jsonl"))
        if lines >= count:
            return
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.5)
    raise AssertionError("no iteration finished in time")


@pytest.mark.parametrize(
    ("mode", "sig"), [("local", signal.SIGINT), ("standalone", signal.SIGTERM)]
)
@pytest.mark.jvm
def test_interrupted_run_stops_every_jvm_and_keeps_finished_iterations(tmp_path, data, mode, sig):
    out = tmp_path / "out"
    args = [
        "run",
        "wordcount",
        "--mode",
        mode,
        "--repeat",
        "200",
        "--out",
        str(out),
        "--data",
        str(data),
    ]
    if mode == "standalone":
        args += ["--executors", "1", "--cores-per-executor", "1", "--bind", "core"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "numaspark", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_answers(out, 2, proc)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Interrupted" in stderr and "Traceback" not in stderr
    runs = _results(out)
    assert len(runs) >= 2 and all(r["status"] == "ok" for r in runs)


@pytest.mark.jvm
def test_executors_that_keep_dying_fail_the_run(tmp_path, data):
    out = tmp_path / "out"
    started = time.monotonic()
    proc = run_cli(
        "run",
        "wordcount",
        "--mode",
        "standalone",
        "--executors",
        "1",
        "--cores-per-executor",
        "1",
        "--conf",
        "spark.executor.extraJavaOptions=-Xss1k",
        "--out",
        str(out),
        "--data",
        str(data),
    )
    assert proc.returncode == 1
    assert time.monotonic() - started < 120  # detected, not a hang
    (run,) = _results(out)
    assert run["status"] == "failed"
    assert "executors keep dying" in run["failure_reason"]
    assert "Could not create the Java Virtual Machine" in run["failure_reason"]


@pytest.mark.jvm
@needs_two_cpus
def test_kept_cluster_serves_runs_with_its_layout(tmp_path, data):
    """A kept cluster of two core-bound executors, its status, and a profiled run on it (the
    run path that starts its own cluster is in the interrupted and dying-executor tests)."""
    cluster = tmp_path / "cluster"
    layout = ["--executors", "2", "--cores-per-executor", "1", "--bind", "core"]
    up = run_cli("cluster", "up", str(cluster), *layout)
    try:
        assert up.returncode == 0, up.stderr
        state = json.loads((cluster / "cluster.json").read_text())
        assert state["schema"] == "numaspark.cluster/2" and state["kept"] and state["local"]
        # the daemons run with the light JVM options of daemon_env (executors keep the
        # defaults), detached from the command that started them
        pids = [p["pid"] for p in state["processes"]]
        for pid in pids:
            assert DAEMON_JAVA_OPTS.split()[0] in psutil.Process(pid).cmdline()
        status = run_cli("cluster", "status", str(cluster))
        assert status.stdout.count("ALIVE") == 3  # the master and both workers
        assert "--physcpubind" in status.stdout
        seen = json.loads(run_cli("cluster", "status", str(cluster), "--json").stdout)
        assert [w["state"] for w in seen["workers"]] == ["ALIVE", "ALIVE"]
        # each worker JVM really runs on its own core (read from /proc), its pages counted
        assert [w["effective"]["cpus"] for w in seen["workers"]] == ["0", "1"]
        assert all(w["bytes_per_node"].get("0", 0) > 0 for w in seen["workers"])
        # a run on it: each executor on its own CPU, measured apart from the driver
        out = tmp_path / "out"
        profile = ["--profile"] if shutil.which("mvn") else []  # async-profiler through Maven
        ran = run_cli(
            "run",
            "wordcount",
            "--cluster",
            str(cluster),
            *layout,
            *profile,
            "--out",
            str(out),
            "--data",
            str(data),
        )
        assert ran.returncode == 0, ran.stderr
        (run,) = _results(out)
        assert run["status"] == "ok" and run["spec"]["cluster"] == str(cluster.resolve())
        placed = {e["jvm"]: e for e in run["effective_placement"]}
        cpus = CPUS.to_list()
        assert placed["executor 0"]["cpus"] == str(cpus[0])
        assert placed["executor 1"]["cpus"] == str(cpus[1])
        assert all(e["policy"] == "bind:0" and not e["differences"] for e in placed.values())
        measured = {j["name"] for j in run["measurements"]["os"]["jvms"]}
        assert measured == {"executor 0", "executor 1"}  # the collectors follow the executors
        if profile:  # one flame graph per executor
            assert len(run["artifacts"]["flame_graphs"]) == 2
        assert json.loads((cluster / "cluster.json").read_text())["processes"][0]["pid"] == pids[0]
        wrong = run_cli(
            "run", "wordcount", "--cluster", str(cluster), "--executors", "1", "--out", str(out)
        )
        assert wrong.returncode == 2 and "placed differently" in wrong.stderr
    finally:
        down = run_cli("cluster", "down", str(cluster))
    assert down.returncode == 0, down.stderr
    assert not (cluster / "cluster.json").exists()
    assert not [p for p in pids if _runs_spark(p)]


def _runs_spark(pid: int) -> bool:
    try:
        return "org.apache.spark" in " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


@pytest.mark.jvm
def test_event_log_sums_match_sparks_rest_api(tmp_path):
    """Spark's History Server reads the recorded logs; its REST API is the reference."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("rolling-zstd", "failed-task", "plain", "lz4.lz4", "snappy.snappy"):
        source = FIXTURES / "eventlogs" / name
        if source.is_dir():  # the History Server knows rolling logs by their directory name
            app_id = next(source.glob("appstatus_*")).name.removeprefix("appstatus_")
            shutil.copytree(source, logs / f"eventlog_v2_{app_id}")
        else:
            shutil.copy(source, logs / name)
    port = free_port()
    env = spark_env(
        extra={
            "SPARK_HISTORY_OPTS": f"-Dspark.history.fs.logDirectory={logs.as_uri()} "
            f"-Dspark.history.ui.port={port} -Dspark.history.fs.update.interval=1s"
        }
    )
    with ProcessTracker() as tracker:
        tracker.start(
            [
                str(spark_home() / "bin" / "spark-class"),
                "org.apache.spark.deploy.history.HistoryServer",
            ],
            name="history",
            log=tmp_path / "history.log",
            env=env,
        )
        api = f"http://127.0.0.1:{port}/api/v1/applications"
        apps = []
        deadline = time.monotonic() + 90
        while len(apps) < 5 and time.monotonic() < deadline:
            with contextlib.suppress(OSError):  # not listening yet
                apps = json.loads(urllib.request.urlopen(api, timeout=2).read())
            time.sleep(1)
        assert len(apps) == 5, (tmp_path / "history.log").read_text()[-2000:]
        ours = {}
        for path in logs.iterdir():
            log = parse_event_log(path)
            ours[log.app_id] = aggregate(log)
        for app in apps:
            stages = json.loads(
                urllib.request.urlopen(f"{api}/{app['id']}/stages", timeout=10).read()
            )
            mine = ours[app["id"]]
            assert mine["executorRunTime"] == sum(s["executorRunTime"] for s in stages)
            assert mine["executorCpuTime"] == pytest.approx(
                sum(s["executorCpuTime"] for s in stages) / 1e6
            )
            assert mine["jvmGCTime"] == sum(s["jvmGcTime"] for s in stages)
            assert mine["numTasks"] == sum(
                s["numCompleteTasks"] + s["numFailedTasks"] for s in stages
            )
