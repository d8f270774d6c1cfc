"""Real Spark on two other hosts: a plain standalone Master and two Workers that numaspark did
not start, and numaspark run from here (issue 39, item 6).

The hosts are namespaces on this machine (tests/nscluster.py's ``SparkHosts``, tests/netns.py):
``spark-a`` at 10.216.N.11 (the Master and a Worker) and ``spark-b`` at .12 (a Worker), each
with its own network namespace, hostname, /tmp and /etc/hosts, on a bridge this machine
reaches at .1. Spark's own classes start the daemons there, with the hosts' ``python3``
(this machine's venv is not on their PATH). Everything numaspark writes here (``--out``,
the PySpark application, its output) lives under this machine's /tmp, which the hosts do not
see, so nothing passes because the hosts share this machine's files; the built-in's input
is on a path outside /tmp that both see, as a shared filesystem would be. Namespaces on one
machine prove addresses, routes, paths and binding, never speed. Run under the JVM lock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import spark_jvms
from netns import drivers_here, gone_within
from nscluster import SparkHosts, host_env
from test_dynamic_allocation import DA_OPTIONS, removed_then_added

from numaspark.spark.learned_topology import load_learned

pytestmark = [
    pytest.mark.integration,
    pytest.mark.jvm,
    pytest.mark.long(script="bash scripts/test-hosts.sh"),
]
APPS = Path(__file__).resolve().parent / "apps"
# README, "Ending": the driver ends within 10 s of numaspark's end; the executors over there
# once their master sees the application end (the test allows 20 s)
DRIVER_ENDS_S = 10.0
EXECUTORS_END_S = 20.0


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> Path:
    """numaspark's state directory for this module: what it learns of the cluster."""
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The two hosts and their standalone cluster, for every test of the module; once they are
    gone, no Spark JVM is left on this machine."""
    assert not spark_jvms(), f"Spark JVMs already running: {spark_jvms()}"
    with SparkHosts(tmp_path_factory.mktemp("hosts"), cores=1, memory="1g") as made:
        for host in made.hosts:  # the hosts' python3 has no numaspark: it must be shipped
            ran = subprocess.run(
                host.argv(["python3", "-c", "import numaspark"]),
                env=_host_env(made),
                capture_output=True,
                check=False,
            )
            assert ran.returncode != 0, f"{host.hostname}'s python3 imports numaspark"
        yield made
    deadline = time.monotonic() + 15
    while spark_jvms() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not spark_jvms(), f"Spark JVMs left behind: {spark_jvms()}"


@pytest.fixture(scope="module")
def shared(cluster):
    """A directory both hosts and this machine see at one path (outside /tmp): the built-in's
    input, as on a shared filesystem."""
    directory = Path(tempfile.mkdtemp(prefix="numaspark-shared-", dir="/var/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _host_env(cluster: SparkHosts) -> dict[str, str]:
    return host_env(cluster.address)


def _on_host(cluster: SparkHosts, host, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        host.argv(list(argv)), env=_host_env(cluster), capture_output=True, text=True, check=False
    )


def _numaspark(
    cluster: SparkHosts, state: Path, out: Path, *args: str, app_args: tuple[str, ...] = ()
) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "numaspark",
            "run",
            *args,
            "--master",
            cluster.master,
            "--master-ui",
            cluster.ui,
            "--executors",
            "2",
            "--cores-per-executor",
            "1",
            "--out",
            str(out),
            *(("--", *app_args) if app_args else ()),
        ],
        stdout=(out.parent / f"{out.name}.stdout").open("w"),
        stderr=(out.parent / f"{out.name}.stderr").open("w"),
        env={**os.environ, "COLUMNS": "400", "NUMASPARK_STATE_DIR": str(state)},
    )


def _finish(cli: subprocess.Popen, out: Path, timeout_s: float = 600) -> tuple[str, list[dict]]:
    cli.wait(timeout=timeout_s)
    said = (out.parent / f"{out.name}.stderr").read_text()
    assert cli.returncode == 0, said[-3000:] + "".join(
        p.read_text(errors="replace")[-3000:] for p in out.glob("runs/*/spark-submit.log")
    )
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "ok" for r in records), said[-2000:]
    return said, records


def _running_over_there(cluster: SparkHosts) -> list[int]:
    return [pid for pids in cluster.executors().values() for pid in pids]


def _nothing_left(cluster: SparkHosts) -> None:
    """No driver here, no executor on either host, once the run is over."""
    assert gone_within(drivers_here, DRIVER_ENDS_S) is not None, drivers_here()
    assert gone_within(lambda: _running_over_there(cluster), EXECUTORS_END_S) is not None, (
        cluster.executors()
    )


def _placed(record: dict) -> dict[str, dict]:
    """The plugin's reports of a record's executors, by the host they ran on."""
    effective = record["effective_placement"]
    assert effective and all(e["source"] == "plugin" for e in effective), effective
    return {e["host"]: e for e in effective}


def test_a_built_in_workload_on_two_hosts_unbound_then_node_bound(
    tmp_path, cluster, state, shared, monkeypatch
):
    """terasort, whose tasks import numaspark's own sort module (shipped: the hosts' python3
    has none). At --bind none its executors run on both hosts, named by their hostnames, and
    the plugin's reports teach numaspark each host's topology; at --bind node the plan says
    it used both, and each executor took slot 0 of node 0 in its own host's /tmp: node slots
    are counted per host (a /tmp shared by both would have given one of them slot 1)."""
    data = shared / "data"
    first = tmp_path / "none"
    said, records = _finish(
        _numaspark(
            cluster,
            state,
            first,
            "terasort",
            "--size",
            "tiny",
            "--bind",
            "none",
            "--data",
            str(data),
        ),
        first,
    )
    assert f"the driver listens on {cluster.here}: the route to {cluster.address}" in said
    assert set(_placed(records[-1])) == {"spark-a", "spark-b"}
    for host in ("spark-a", "spark-b"):
        assert f"learned {host}'s topology from the plugin's report" in said, said[-2000:]
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(state))  # what the runs learned, there
    learned = load_learned(cluster.master, lambda message: None)
    assert learned is not None and [h.host for h in learned.hosts] == ["spark-a", "spark-b"]
    assert all(h.topology.online_cpus for h in learned.hosts)
    # the input was read over there (a shared path); what the driver wrote (the results, the
    # event log) exists only here (the executors' scratch output went to their own /tmp)
    for host in cluster.hosts:
        assert _on_host(cluster, host, "test", "-d", str(data)).returncode == 0
        for path in (first / "results.jsonl", *first.glob("runs/*/eventlog")):
            assert _on_host(cluster, host, "test", "-e", str(path)).returncode != 0, path
    _nothing_left(cluster)

    second = tmp_path / "node"
    said, records = _finish(
        _numaspark(
            cluster,
            state,
            second,
            "terasort",
            "--size",
            "tiny",
            "--bind",
            "node",
            "--data",
            str(data),
        ),
        second,
    )
    assert "planned with the topologies of spark-a, spark-b, learned from the plugin's" in said
    placed = _placed(records[-1])
    assert set(placed) == {"spark-a", "spark-b"}
    for host, report in placed.items():
        assert report["choice"].startswith("slot 0 of node 0 in /tmp/numaspark-affinity"), (
            host,
            report,
        )
        assert report["chosen_nodes"] == "0", (host, report)
    for host in cluster.hosts:  # each host's lock files in its own /tmp
        assert sorted(p.name for p in (host.root / "numaspark-affinity").iterdir()) == [
            "choose.lock",  # the host-wide lock of one choice (NodeChooser)
            "node-0.slot-0.lock",
        ]
    _nothing_left(cluster)


@pytest.mark.parametrize("bind", ["none", "node"])
def test_a_pyspark_application_on_two_hosts(tmp_path, cluster, state, bind):
    """A user's PySpark application whose file, and the file it writes, exist only here: its
    tasks run the hosts' python3 on both hosts, and the plugin reports from both by name."""
    app = tmp_path / "app" / "squares.py"
    app.parent.mkdir()
    shutil.copy(APPS / "squares.py", app)
    result = tmp_path / "squares.json"
    out = tmp_path / "out"
    said, records = _finish(
        _numaspark(cluster, state, out, str(app), "--bind", bind, app_args=(str(result), "100000")),
        out,
    )
    assert json.loads(result.read_text())["sum"] == sum(x * x for x in range(100000))
    placed = _placed(records[-1])
    assert set(placed) == {"spark-a", "spark-b"}, placed
    if bind == "node":
        assert all(r["chosen_nodes"] == "0" for r in placed.values()), placed
    for host in cluster.hosts:
        assert _on_host(cluster, host, "test", "-e", str(app)).returncode != 0
    assert "the application's Spark UI: http://" + cluster.here in said
    _nothing_left(cluster)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_numaspark_ended_by_a_signal_leaves_no_executor_on_the_hosts(tmp_path, cluster, state, how):
    """While an application holds executors on both hosts, numaspark gets ``how``: its driver
    ends within the time README states, and the executors over there with it."""
    out = tmp_path / "out"
    cli = _numaspark(
        cluster, state, out, str(APPS / "holds.py"), app_args=(str(tmp_path / "never"),)
    )
    deadline = time.monotonic() + 300
    while not all(cluster.executors().values()) and cli.poll() is None:
        assert time.monotonic() < deadline, f"no executors on both hosts: {cluster.executors()}"
        time.sleep(0.2)
    stderr = (out.parent / "out.stderr").read_text
    assert cli.poll() is None, stderr()[-2000:]
    assert drivers_here(), "no driver runs here"
    os.kill(cli.pid, how)
    signalled = time.monotonic()
    cli.wait(timeout=60)
    driver_s = gone_within(drivers_here, DRIVER_ENDS_S)
    executors_s = gone_within(lambda: _running_over_there(cluster), EXECUTORS_END_S)
    driver_s, executors_s = (
        None if t is None else round(t - signalled, 2) for t in (driver_s, executors_s)
    )
    print(
        f"{how.name}: the driver was gone {driver_s} s and the executors on both hosts "
        f"{executors_s} s after the signal"
    )
    assert driver_s is not None, drivers_here()
    assert executors_s is not None, cluster.executors()
    time.sleep(5)  # the application is gone from the cluster: no executor comes back
    assert not _running_over_there(cluster)


def test_dynamic_allocation_on_two_hosts_frees_and_reuses_each_hosts_slot(tmp_path, cluster, state):
    """Issue 57, item 1: dynamic allocation (0 to 2 executors, shuffle tracking, a 4 s idle
    timeout) on the cluster at another address, a PySpark application of two bursts 12 s apart,
    bound from inside by the plugin. The executors are added, removed when idle ("killed by
    driver") and added again; each one the plugin placed took node 0's slot 0 of its host, and
    each host's lock directory holds that one slot file however many executors came and went:
    a removed executor's slot is freed and taken again. Namespaces prove the churn and the
    slots, not speed."""
    app = tmp_path / "app" / "two_bursts.py"
    app.parent.mkdir()
    shutil.copy(APPS / "two_bursts.py", app)
    result, out = tmp_path / "bursts.json", tmp_path / "out"
    said, records = _finish(
        _numaspark(
            cluster,
            state,
            out,
            str(app),
            "--bind",
            "node",
            *DA_OPTIONS,
            app_args=(str(result), "12"),
        ),
        out,
    )
    assert json.loads(result.read_text())["sums"] == [sum(x * x for x in range(400))] * 2
    assert "dynamic allocation is on: executors come and go between 0 and 2" in said
    kinds = [e["Event"] for e in removed_then_added(out)]
    added = kinds.count("SparkListenerExecutorAdded")
    placed = records[-1]["effective_placement"]
    assert placed and all(e["source"] == "plugin" for e in placed), placed
    assert {e["host"] for e in placed} == {"spark-a", "spark-b"}, placed
    assert all(e["chosen_nodes"] == "0" for e in placed), placed
    for host in cluster.hosts:  # one slot per host, freed and taken again by each new executor
        assert sorted(p.name for p in (host.root / "numaspark-affinity").iterdir()) == [
            "choose.lock",  # the host-wide lock of one choice (NodeChooser)
            "node-0.slot-0.lock",
        ], (host.hostname, added)
    assert added >= 3, kinds  # more executors came than the two hosts' slots
    _nothing_left(cluster)
