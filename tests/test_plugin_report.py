"""A cluster numaspark did not start: the plugin reports from inside each executor.

The cluster here is a plain Spark standalone master and worker started by the
test with Spark's own classes (not numaspark's cluster code), unbound; numaspark
runs a workload on it with ``--master`` and records what the plugin saw. The
test reads the same executor's /proc directly while it runs and compares.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from conftest import run_cli, spark_jvms
from statuspage import serving

from numaspark import records
from numaspark.placement.plugin import LOCK_DIR_KEY, REPORT_INTERVAL_KEY
from numaspark.readback.proc import read_effective
from numaspark.spark.affinity import plugin_effective
from numaspark.spark.home import free_port, spark_env, spark_home
from numaspark.spark.standalone import alive_workers, master_json
from numaspark.supervise.processes import stop_processes
from numaspark.topology import CpuSet

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _own_state(tmp_path, monkeypatch):
    """What a run learns of a cluster (numaspark's state directory) is the test's own."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))


def _executors() -> list[int]:
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if "CoarseGrainedExecutorBackend" in " ".join(proc.info["cmdline"] or []):
            found.append(proc.info["pid"])
    return found


def _scrape(url: str) -> dict[str, float]:
    """The plugin's metrics in a Prometheus text page: metric -> value (empty when the page
    does not answer yet)."""
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as page:
            text = page.read().decode()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if "AffinityPlugin" in name and not line.startswith("#"):
            metric = name.split("AffinityPlugin_")[-1].split("{")[0].removesuffix("_Value")
            found[metric] = float(value)
    return found


@dataclass(frozen=True)
class Plain:
    master: str  # spark://127.0.0.1:PORT
    ui: str  # the master's web UI
    work: Path  # the worker's work directory: app-ID/EXECUTOR/stderr per executor
    pids: frozenset[int]  # the master's and the worker's launchers and JVMs


@pytest.fixture(scope="module")
def plain_cluster(tmp_path_factory):
    """A master and one worker (2 cores, 2 GiB: smaller than this machine), started the way a
    user would, with Spark's own classes, unbound, on 127.0.0.1. One cluster serves every
    test here, as a standing cluster serves one application after another (each test's
    runs, plans and learned topology are its own: see ``_own_state``); it starts with no
    Spark JVM on the machine and leaves none."""
    assert not spark_jvms(), f"Spark JVMs already running: {spark_jvms()}"
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, webui, wport, wwebui = (free_port() for _ in range(4))
    env = spark_env()
    logs = tmp_path_factory.mktemp("plain-cluster")
    master = subprocess.Popen(
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(webui),
        ],
        env=env,
        stdout=(logs / "master.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    worker = subprocess.Popen(
        [
            spark_class,
            "org.apache.spark.deploy.worker.Worker",
            f"spark://127.0.0.1:{port}",
            "--host",
            "127.0.0.1",
            "--port",
            str(wport),
            "--webui-port",
            str(wwebui),
            "--cores",
            "2",
            "--memory",
            "2g",
            "--work-dir",
            str(logs / "work"),
        ],
        env=env,
        stdout=(logs / "worker.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while alive_workers(master_json("127.0.0.1", webui)) < 1:
            assert time.monotonic() < deadline, "the plain cluster did not start"
            time.sleep(0.5)
        # spark-class execs its JVM, or runs it as a child: both are the cluster's
        pids = {
            p.pid
            for launcher in (master, worker)
            for p in [
                psutil.Process(launcher.pid),
                *psutil.Process(launcher.pid).children(recursive=True),
            ]
        }
        yield Plain(
            f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{webui}", logs / "work", frozenset(pids)
        )
    finally:
        stop_processes([worker.pid, master.pid])
    _settle_spark()
    assert not spark_jvms(), f"Spark JVMs left behind: {spark_jvms()}"


def _settle_spark(timeout_s: float = 15) -> None:
    deadline = time.monotonic() + timeout_s
    while spark_jvms() and time.monotonic() < deadline:
        time.sleep(0.5)


@pytest.fixture
def nothing_but_the_cluster(plain_cluster):
    """The test starts with no Spark JVM but the module's cluster, and leaves none (its
    drivers and executors ended): ``no_spark_left``, the standing cluster excepted."""

    def others() -> list[str]:
        return [
            line for line in spark_jvms() if int(line.split(":", 1)[0]) not in plain_cluster.pids
        ]

    assert not others(), f"Spark JVMs already running beside the cluster: {others()}"
    yield
    deadline = time.monotonic() + 15
    while others() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not others(), f"Spark JVMs left behind: {others()}"


@pytest.mark.jvm
def test_placement_reported_by_the_plugin_agrees_with_proc(
    tmp_path, nothing_but_the_cluster, plain_cluster
):
    out = tmp_path / "out"
    ui = free_port()
    # the driver's UI with Spark's own Prometheus servlet: the plugin's metrics are scraped
    prometheus = [
        "spark.ui.enabled=true",
        f"spark.ui.port={ui}",
        "spark.ui.prometheus.enabled=true",
        "spark.metrics.conf.*.sink.prometheusServlet.class="
        "org.apache.spark.metrics.sink.PrometheusServlet",
        "spark.metrics.conf.*.sink.prometheusServlet.path=/metrics/prometheus",
    ]
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "numaspark",
            "run",
            "wordcount",
            "--size",
            "tiny",
            "--master",
            plain_cluster.master,
            "--master-ui",
            plain_cluster.ui,
            "--repeat",
            "6",
            "--out",
            str(out),
            *[a for c in prometheus for a in ("--conf", c)],
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen, scraped = {}, {}
    deadline = time.monotonic() + 120
    while cli.poll() is None and time.monotonic() < deadline:
        for pid in _executors():
            placement = read_effective(pid)  # this machine's /proc, read directly
            maps = Path(f"/proc/{pid}/numa_maps")
            if placement is not None and maps.exists():
                seen[pid] = placement
        found = _scrape(f"http://127.0.0.1:{ui}/metrics/prometheus")
        if found.get("executorsReporting", 0) >= 1:
            scraped = found
        time.sleep(0.3)
    _, stderr = cli.communicate(timeout=120)
    assert cli.returncode == 0, stderr[-3000:]
    assert seen, "no executor was seen running"
    record = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    assert record["spec"]["cluster"] == plain_cluster.master
    # planned for the cluster, not this machine: one executor of the worker's 2 cores and 2g
    (executor,) = [j for j in record["spec"]["placement"]["jvms"] if j["role"] == "executor"]
    assert (executor["cores"], executor["heap"]) == (2, "2g")
    reported = record["effective_placement"]
    assert len(reported) == 1 and reported[0]["source"] == "plugin"
    entry = reported[0]
    direct = seen[entry["pid"]]  # the same pid as the executor the test saw
    assert entry["cpus"] == str(direct.cpus) and entry["mems"] == str(direct.mems)
    assert entry["policy"] == direct.policy
    assert entry["bytes_per_node"] and all(int(b) > 0 for b in entry["bytes_per_node"].values())
    assert entry["host"]
    # Spark's own Prometheus endpoint published the plugin's driver metrics, plausibly
    print(f"\nscraped: {scraped}")
    assert scraped.get("executorsReporting") == 1
    assert scraped.get("lowestLocalPagesShare") == 1.0  # one node: every page is local
    assert scraped.get("remoteBytes") == 0 and scraped.get("pinnedTasks") == 0  # --bind none
    assert scraped.get("taskMigrations", -1) >= 0
    # every report the executor sent is kept beside the run
    run_dir = Path(record["artifacts"]["run_dir"])
    assert [records.dump(e) for e in plugin_effective(run_dir / "placement.jsonl")] == reported


@pytest.mark.jvm
def test_a_standing_cluster_refuses_what_it_cannot_hold_and_a_starved_app_stops(
    tmp_path, nothing_but_the_cluster, plain_cluster
):
    """A layout the cluster cannot hold is refused before anything is submitted; an
    application the cluster gives no executor (its status page here says it has more memory
    than it has: a stand-in that serves the real status with the worker's memory raised) stops
    after --executor-wait, in one line."""
    started = time.monotonic()
    big = run_cli(
        "run",
        "wordcount",
        "--master",
        plain_cluster.master,
        "--master-ui",
        plain_cluster.ui,
        "--memory-per-executor",
        "4g",
        "--out",
        str(tmp_path / "a"),
    )
    assert big.returncode == 2 and "cannot hold 1 executor(s)" in big.stderr
    assert "2048 MB free" in big.stderr and len(big.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 20  # refused before submission
    with urllib.request.urlopen(f"{plain_cluster.ui}/json/", timeout=5) as page:
        status = json.loads(page.read())
    status["workers"][0]["memory"] = status["workers"][0]["memoryfree"] = 16384
    with serving(status) as fake_ui:
        started = time.monotonic()
        starved = run_cli(
            "run",
            "wordcount",
            "--master",
            plain_cluster.master,
            "--master-ui",
            fake_ui,
            "--executor-wait",
            "5s",
            "--out",
            str(tmp_path / "b"),
        )
    assert starved.returncode == 1, starved.stderr[-2000:]
    assert time.monotonic() - started < 60
    (run,) = [
        json.loads(line) for line in (tmp_path / "b" / "results.jsonl").read_text().splitlines()
    ]
    assert run["status"] == "failed"
    assert run["failure_reason"].startswith("no executor started within 5 s")


@pytest.mark.jvm
def test_executors_of_a_cluster_numaspark_did_not_start_choose_their_nodes(
    tmp_path, nothing_but_the_cluster, plain_cluster
):
    """`run --master ... --bind node` (issue 32): the plugin binds each executor of the plain
    cluster (bound by no one) from inside. Each takes a node slot in the lock directory and
    reports which node, why, and what it bound; the run record keeps it. One node here: node
    0's slots 0 and 1, binding a no-op (the guest of tests/guest proves two and four nodes)."""
    locks, out = tmp_path / "locks", tmp_path / "out"
    ran = run_cli(
        "run",
        "wordcount",
        "--master",
        plain_cluster.master,
        "--master-ui",
        plain_cluster.ui,
        "--bind",
        "node",
        "--executors",
        "2",
        "--cores-per-executor",
        "1",
        "--conf",
        f"{LOCK_DIR_KEY}={locks}",
        "--out",
        str(out),
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    placement = record["spec"]["placement"]
    assert placement["binding"] == "node" and placement["mem_policy"] == "preferred"
    executors = [j for j in placement["jvms"] if j["role"] == "executor"]
    assert all("-XX:+UseNUMA" not in j["java_options"] for j in executors)  # they start unbound
    reported = sorted(record["effective_placement"], key=lambda e: e["choice"])
    assert [e["chosen_nodes"] for e in reported] == ["0", "0"]
    assert [e["choice"] for e in reported] == [
        f"slot {k} of node 0 in {locks} (nodes 0 allowed)" for k in (0, 1)
    ]
    for executor in reported:
        assert executor["source"] == "plugin"
        assert executor["binding"].startswith(f"already confined to CPUs {executor['cpus']}")
        assert "memory already confined to nodes 0" in executor["binding"]
    assert locks.stat().st_mode & 0o7777 == 0o1777
    assert (locks / "node-0.slot-0.lock").stat().st_mode & 0o777 == 0o666


# a scenario of a minute, run by the long lane to keep CI short:
# learning from a report is also tested on recorded reports in the fast lane
@pytest.mark.long(script="bash scripts/test.sh --long")
@pytest.mark.jvm
def test_a_cluster_is_learned_from_its_first_run_and_planned_with_on_the_next(
    tmp_path, nothing_but_the_cluster, plain_cluster
):
    """Issue 32: the first `run --master ... --bind node` on the plain cluster keeps its host's
    topology as the plugin reported it; the second plans with it: the executor's
    -XX:ActiveProcessorCount is its node's CPUs (unknown the first time: only the worker's
    cores were), and the run says, and records, which topology planned it."""
    args = (
        "run",
        "wordcount",
        "--master",
        plain_cluster.master,
        "--master-ui",
        plain_cluster.ui,
        "--bind",
        "node",
        "--conf",
        f"{LOCK_DIR_KEY}={tmp_path / 'locks'}",
        "--conf",
        f"{REPORT_INTERVAL_KEY}=300",
    )  # several reports: the first has the host
    first = run_cli(*args, "--out", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr[-3000:]
    (record,) = [json.loads(line) for line in (tmp_path / "first" / "results.jsonl").open()]
    first_app = record["app_id"]
    host = record["effective_placement"][0]["host"]
    assert f"learned {host}'s topology from the plugin's report: 1 NUMA node(s)" in first.stderr
    (executor,) = [j for j in record["spec"]["placement"]["jvms"] if j["role"] == "executor"]
    assert executor["java_options"] == []  # planned on the worker's 2 cores: slice unknown
    reports = Path(record["artifacts"]["run_dir"]) / "placement.jsonl"
    lines = [json.loads(line) for line in reports.read_text().splitlines()]
    assert len(lines) >= 2 and "host_topology" in lines[0]
    assert not any("host_topology" in r for r in lines[1:])
    node_cpus = lines[0]["host_topology"]["nodes"]["0"]
    second = run_cli(*args, "--out", str(tmp_path / "second"))
    assert second.returncode == 0, second.stderr[-3000:]
    said = f"planned with {host}'s topology, learned from the plugin's report on "
    assert said in second.stderr and "learned " + host not in second.stderr.replace(said, "")
    (record,) = [json.loads(line) for line in (tmp_path / "second" / "results.jsonl").open()]
    placement = record["spec"]["placement"]
    (executor,) = [j for j in placement["jvms"] if j["role"] == "executor"]
    count = len(CpuSet.parse(node_cpus))
    assert executor["java_options"] == [f"-XX:ActiveProcessorCount={count}"]
    assert any(n.startswith(said) for n in placement["notes"])
    # the executor JVM got it: the worker logs each executor's command line (this test's two
    # applications: the cluster served the other tests' too)
    apps = {first_app, record["app_id"]}
    logs = {
        p.parent.parent.name: p.read_text(errors="replace").split("\n", 3)[:3]
        for p in plain_cluster.work.glob("app-*/*/stderr")
        if p.parent.parent.name in apps
    }
    flagged = [
        app for app, head in logs.items() if f"-XX:ActiveProcessorCount={count}" in " ".join(head)
    ]
    assert len(logs) == 2 and len(flagged) == 1, logs
