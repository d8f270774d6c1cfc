"""Spark on a real YARN here: the mini YARN (jvm/yarn-mini, hadoop-client-minicluster 3.5.0)
started with scripts/yarn-mini.sh, `numaspark run --master yarn` of a built-in workload and of
a user's application on it with the plugin's reports, a starved application stopped after
--executor-wait, and no process left behind (no Spark JVM, nothing of the mini YARN's).

About three minutes here (the YARN up in ~15-20 s; each application ~40-50 s, most of it
YARN's container launches and Spark's upload of its jars): `bash scripts/test-yarn.sh`."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from conftest import run_cli, spark_jvms

from numaspark.spark.yarnmini import leftovers
from numaspark.topology import CpuSet

REPO = Path(__file__).resolve().parents[1]
APPS = REPO / "tests" / "apps"

pytestmark = [pytest.mark.jvm, pytest.mark.long(script="bash scripts/test-yarn.sh")]


def yarn_mini(*args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMASPARK_PYTHON": sys.executable, "COLUMNS": "200"}
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "yarn-mini.sh"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
        check=False,
    )


@pytest.fixture(scope="module")
def yarn(tmp_path_factory):
    """A mini YARN of one NodeManager (2 vcores, 4 GiB) kept up for the module, and
    HADOOP_CONF_DIR pointing at it; stopped with `down`, which must leave nothing."""
    directory = tmp_path_factory.mktemp("yarn")
    previous = os.environ.get("HADOOP_CONF_DIR")
    started = time.monotonic()
    up = yarn_mini("up", str(directory), "--nodemanagers", "1", "--nm-memory", "4g")
    print(f"mini YARN up in {time.monotonic() - started:.1f} s")
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        last = up.stdout.strip().splitlines()[-1]
        assert last == f"export HADOOP_CONF_DIR={directory.resolve()}/conf"
        assert (directory / "conf" / "yarn-site.xml").is_file()
        os.environ["HADOOP_CONF_DIR"] = str(directory / "conf")
        yield directory
    finally:
        if previous is None:
            os.environ.pop("HADOOP_CONF_DIR", None)
        else:
            os.environ["HADOOP_CONF_DIR"] = previous
        down = yarn_mini("down", str(directory))
        assert down.returncode == 0, down.stderr[-2000:]
        assert not leftovers(directory), [p.cmdline() for p in leftovers(directory)]
        assert not (directory / "cluster.json").exists()


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _rm(directory: Path, path: str) -> dict:
    state = json.loads((directory / "cluster.json").read_text())
    with urllib.request.urlopen(f"http://127.0.0.1:{state['master_webui']}{path}", timeout=5) as r:
        return json.loads(r.read())


def test_status_reads_the_resourcemanager(yarn):
    status = run_cli("cluster", "status", str(yarn), "--json", check=True)
    state = json.loads(status.stdout)
    assert state["kind"] == "yarn-mini" and state["status"] == "STARTED"
    assert state["hadoop_conf_dir"] == str(yarn.resolve() / "conf")
    assert [(n["state"], n["vcores_free"], n["memory_free_mb"]) for n in state["nodes"]] == [
        ("RUNNING", 2, 4096)
    ]
    for line in (yarn / "conf" / "yarn-site.xml").read_text().split("<property>"):
        if "<name>yarn.resourcemanager.bind-host</name>" in line:
            assert "<value>127.0.0.1</value>" in line


def _check_yarn_run(record: dict, executors: int) -> None:
    assert record["status"] == "ok", record.get("failure_reason")
    yarn = record["yarn"]
    assert yarn["application_id"] == record["app_id"] and record["app_id"].startswith(
        "application_"
    )
    containers = yarn["containers"]
    assert len(containers) == executors
    for c in containers:
        assert c["container_id"].startswith("container_" + record["app_id"][len("application_") :])
        assert c["host"] == "localhost" and c["node_http_address"].startswith("localhost:")
    # the plugin reported from inside each container: the run's effective placement
    reported = record["effective_placement"]
    assert len(reported) == executors and {e["source"] for e in reported} == {"plugin"}
    assert all(e["pid"] for e in reported)


def test_a_workload_and_an_application_run_on_yarn(yarn, tmp_path, no_spark_left):
    out = tmp_path / "out"
    started = time.monotonic()
    ran = run_cli(
        "run",
        "wordcount",
        "--size",
        "tiny",
        "--master",
        "yarn",
        "--executors",
        "2",
        "--cores-per-executor",
        "1",
        "--out",
        str(out),
    )
    print(f"wordcount on YARN: {time.monotonic() - started:.1f} s")
    assert ran.returncode == 0, ran.stderr[-3000:]
    (record,) = _records(out)
    _check_yarn_run(record, executors=2)
    # planned from YARN: two executors of 1 vcore on a node of 4096 MB beside the AM's 896
    executors = [j for j in record["spec"]["placement"]["jvms"] if j["role"] == "executor"]
    assert [(e["cores"], e["heap"]) for e in executors] == [(1, "1152m")] * 2

    answer = tmp_path / "squares.json"
    started = time.monotonic()
    app = run_cli(
        "run",
        str(APPS / "squares.py"),
        "--master",
        "yarn",
        "--out",
        str(out),
        "--",
        str(answer),
        "1000",
        "an argument",
    )
    print(f"squares.py on YARN: {time.monotonic() - started:.1f} s")
    assert app.returncode == 0, app.stderr[-3000:]
    _, second = _records(out)
    _check_yarn_run(second, executors=1)
    written = json.loads(answer.read_text())
    assert written["sum"] == sum(i * i for i in range(1000)) and written["args"] == ["an argument"]
    assert second["app_id"] != record["app_id"]
    assert not spark_jvms()


def test_a_starved_application_stops_after_the_wait_and_leaves_yarns_queue(
    yarn, tmp_path, no_spark_left
):
    """The plan fits (one executor of 2 vcores, 2816 MB heap: a 3200 MB container beside the
    default application master's 896), but this application's master asks for more
    (spark.yarn.am.memory 2560m: a 2944 MB container), which numaspark's sizing does not
    count: the executor's container never fits in what is left. No executor comes; the run
    stops after --executor-wait in one line, and its application is killed in the
    ResourceManager instead of waiting in its queue."""
    out = tmp_path / "out"
    started = time.monotonic()
    starved = run_cli(
        "run",
        "wordcount",
        "--size",
        "tiny",
        "--master",
        "yarn",
        "--executor-wait",
        "20s",
        "--conf",
        "spark.yarn.am.memory=2560m",
        "--out",
        str(out),
    )
    took = time.monotonic() - started
    assert starved.returncode == 1, starved.stderr[-3000:]
    assert took < 90, took
    (run,) = _records(out)
    assert run["status"] == "failed"
    assert run["failure_reason"].startswith("no executor started within 20 s: the cluster at yarn")
    apps = (_rm(yarn, "/ws/v1/cluster/apps").get("apps") or {}).get("app") or []
    assert apps and all(a["state"] in ("KILLED", "FINISHED", "FAILED") for a in apps), [
        (a["id"], a["state"]) for a in apps
    ]


def test_sigterm_while_yarn_starts_leaves_nothing(tmp_path):
    """`numaspark yarn up` stopped by SIGTERM half-way: the launcher and its directory's
    processes are stopped, and the state file says nothing runs."""
    directory = tmp_path / "y"
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "numaspark", "yarn", "up", str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not leftovers(directory) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers(directory), "the launcher never started"
    time.sleep(3)  # mid-start: the ResourceManager is coming up
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert not leftovers(directory), [p.cmdline() for p in leftovers(directory)]


def _container_jvms(directory: Path, marker: str) -> list[int]:
    """The JVMs of containers the mini YARN in ``directory`` launched (main class ``marker``)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info.get("cmdline") or []
        if (
            argv
            and argv[0].endswith("java")
            and any(marker in a for a in argv)
            and any(str(directory) in a for a in argv)
        ):
            found.append(proc.pid)
    return found


def test_yarns_own_numa_binding_from_the_rendered_settings(tmp_path, no_spark_left):
    """`plan --target yarn --out` writes the NodeManager's NUMA awareness (YARN-5764 keys, the
    default container executor); a mini YARN started with that fragment (`up --site`) launches
    every container under numactl: on this one-node machine the executor's and the
    application master's memory policy is YARN's `interleave:0` and their CPUs node 0's. (On
    two nodes, in the guest: tests/guest/yarncheck.py.)"""
    files, directory, out = tmp_path / "files", tmp_path / "y", tmp_path / "out"
    planned = run_cli(
        "plan",
        "--bind",
        "node",
        "--executors-per-node",
        "1",
        "--cores-per-executor",
        "1",
        "--memory-per-executor",
        "512m",
        "--target",
        "yarn",
        "--out",
        str(files),
    )
    assert planned.returncode == 0, planned.stderr
    up = yarn_mini("up", str(directory), "--site", str(files / "yarn-site.xml"))
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        env = {**os.environ, "HADOOP_CONF_DIR": str(directory / "conf"), "COLUMNS": "200"}
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "numaspark",
                "run",
                "wordcount",
                "--master",
                "yarn",
                "--executors",
                "1",
                "--cores-per-executor",
                "1",
                "--memory-per-executor",
                "512m",
                "--no-collect",
                "--out",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        seen: dict[int, tuple[str, str]] = {}
        node0 = Path("/sys/devices/system/node/node0/cpulist").read_text().strip()
        while run.poll() is None:
            for marker in ("YarnCoarseGrainedExecutorBackend", "ExecutorLauncher"):
                for pid in _container_jvms(directory, marker):
                    try:
                        maps = Path(f"/proc/{pid}/numa_maps").read_text().split("\n")
                        cpus = psutil.Process(pid).cpu_affinity()
                    except (OSError, psutil.Error):
                        continue
                    policies = {line.split()[1] for line in maps if len(line.split()) > 1}
                    seen[pid] = (marker, ",".join(sorted(policies)), cpus)
            time.sleep(0.5)
        _, stderr = run.communicate()
        assert run.returncode == 0, stderr[-3000:]
    finally:
        down = yarn_mini("down", str(directory))
        assert down.returncode == 0, down.stderr[-2000:]
    roles = sorted(marker for marker, _, _ in seen.values())
    assert roles == ["ExecutorLauncher", "YarnCoarseGrainedExecutorBackend"], seen
    for pid, (marker, policies, cpus) in seen.items():
        assert policies == "interleave:0", f"{marker} {pid}: numa_maps policies {policies}"
        assert set(cpus) == set(CpuSet.parse(node0)), f"{marker} {pid}: CPUs {cpus}, node 0 {node0}"


def test_dynamic_allocation_on_yarn_with_shuffle_tracking(yarn, tmp_path, no_spark_left):
    """Issue 57, item 1: a PySpark application of two bursts 12 s apart on the mini YARN with
    dynamic allocation (0 to 2 one-core executors, a 4 s idle timeout). The mini YARN's
    NodeManager runs no external shuffle service: Spark's YarnShuffleService (the
    spark-<version>-yarn-shuffle jar) is not among pyspark's jars, and the Maven repository
    this machine reaches serves no org.apache.spark:spark-network-yarn_2.13 (4.0.1, 4.1.0,
    4.2.0 and 4.3.0 refused, 2026-12-06). So shuffle tracking keeps the shuffle files'
    executors while they are needed. The run ends ok, and its event log shows executors added, removed when
    idle and added again: on YARN too, removals the driver asked for are not deaths."""
    from test_dynamic_allocation import DA_OPTIONS, removed_then_added

    out, answer = tmp_path / "out", tmp_path / "bursts.json"
    started = time.monotonic()
    ran = run_cli(
        "run",
        str(APPS / "two_bursts.py"),
        "--master",
        "yarn",
        "--executors",
        "2",
        "--cores-per-executor",
        "1",
        "--out",
        str(out),
        *DA_OPTIONS,
        "--",
        str(answer),
        "12",
    )
    print(f"two bursts with dynamic allocation on YARN: {time.monotonic() - started:.1f} s")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(answer.read_text())["sums"] == [sum(x * x for x in range(400))] * 2
    (record,) = _records(out)
    assert record["status"] == "ok", record.get("failure_reason")
    events = removed_then_added(out)
    reasons = [e["Removed Reason"] for e in events if e["Event"] == "SparkListenerExecutorRemoved"]
    print(f"removal reasons on YARN: {sorted(set(reasons))}")
    assert not spark_jvms()
