"""Real Spark on a YARN at another address: the mini YARN (jvm/yarn-mini) started on a host
made of namespaces (tests/netns.py: its own network namespace at 10.217.N.11, hostname, /tmp
and /etc/hosts), and ``numaspark run --master yarn`` from here with ``HADOOP_CONF_DIR``
pointing at it (issue 39, item 6).

MiniYARNCluster publishes its ResourceManager and NodeManager as ``localhost``: the RM
launches containers on the NodeManager at that name, so on its host they listen on every
address the host has (``--host 0.0.0.0``: its loopback and 10.217.N.11; nothing else is in its
network namespace), and from here, where ``localhost`` is this machine, the client's copy of
yarn-site.xml names the RM by the host's address, as a user's client copy names an RM it
reaches. The host's hostname is its address,
so that what it reports is a name this machine resolves. Spark's staging directory
(``file:$HOME/.sparkStaging``, the mini YARN's filesystem being the local one) and the
built-in's input are paths the host sees too, as HDFS or a shared filesystem would be;
``--out`` is under this machine's /tmp, which the host does not see. Namespaces on one
machine prove addresses, routes and paths, never speed. Run under the JVM lock.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import spark_jvms
from netns import HostNetwork, subnet
from nscluster import host_env

from numaspark.spark.yarnmini import CONTAINER_MARK, launcher_argv, ready_line

pytestmark = [
    pytest.mark.integration,
    pytest.mark.jvm,
    pytest.mark.long(script="bash scripts/test-yarn.sh"),
]
INSIDE = Path("/tmp/yarn")  # the mini YARN's directory, on the host
APPS = Path(__file__).resolve().parent / "apps"


@pytest.fixture(scope="module")
def yarn(tmp_path_factory):
    """The mini YARN (one NodeManager of 2 vcores and 4 GiB) on its host; the client's conf."""
    assert not spark_jvms(), f"Spark JVMs already running: {spark_jvms()}"
    directory = tmp_path_factory.mktemp("yarnhost")
    address = f"{subnet(217)}.11"
    argv = launcher_argv(INSIDE, 1, 4096, 2, 128, "0.0.0.0")
    # the mini YARN, installed on its host: the launcher's jar and class path at their paths
    jars = [Path(p) for p in argv[argv.index("-cp") + 1].split(":") if p]
    installed = list(dict.fromkeys(p if p.is_dir() else p.parent for p in jars))
    with HostNetwork(
        1, "nsh7", 217, names=[address], own_view=directory / "view", installed=installed
    ) as net:
        host = net.hosts[0]
        (host.root / INSIDE.name).mkdir()
        log = directory / "yarn-mini.log"
        with log.open("w") as out:
            launcher = subprocess.Popen(
                host.argv(argv),
                env=host_env(address),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        started = time.monotonic()
        try:
            while ready_line(log) is None:
                assert launcher.poll() is None and time.monotonic() - started < 240, (
                    log.read_text()[-3000:]
                )
                time.sleep(0.5)
            print(f"mini YARN up at {address} in {time.monotonic() - started:.1f} s")
            client = directory / "client-conf"
            shutil.copytree(host.root / INSIDE.name / "conf", client)
            site = client / "yarn-site.xml"
            site.write_text(
                re.sub(r">(localhost|0\.0\.0\.0):(\d+)<", rf">{address}:\2<", site.read_text())
            )
            yield host, client
        finally:
            launcher.terminate()  # its shutdown hook stops the ResourceManager and NodeManager
            try:
                launcher.wait(timeout=60)
            except subprocess.TimeoutExpired:
                launcher.kill()
                launcher.wait(timeout=10)
            left = [p for p in host.pids() if CONTAINER_MARK.encode() in _cmdline(p)]
            host.kill_all()
            assert not left, f"containers left on the YARN host: {left}"
    deadline = time.monotonic() + 15
    while spark_jvms() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not spark_jvms(), f"Spark JVMs left behind: {spark_jvms()}"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _numaspark(conf: Path, tmp_path: Path, *args: str, timeout: float = 900):
    """numaspark from here against the mini YARN over there (its client's configuration)."""
    return subprocess.run(
        [sys.executable, "-m", "numaspark", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={
            **os.environ,
            "HADOOP_CONF_DIR": str(conf),
            "COLUMNS": "400",
            "NUMASPARK_STATE_DIR": str(tmp_path / "state"),
        },
    )


def test_a_built_in_workload_runs_on_yarn_at_another_address(yarn, tmp_path):
    """terasort (its tasks import numaspark's sort module, shipped with the run) on the YARN
    host: the driver listens on the route's address, the plugin reports from the container
    over there, and no container is left once the run is over."""
    host, conf = yarn
    shared = Path(tempfile.mkdtemp(prefix="numaspark-shared-", dir="/var/tmp"))
    out = tmp_path / "out"
    try:
        started = time.monotonic()
        ran = _numaspark(
            conf,
            tmp_path,
            "run",
            "terasort",
            "--size",
            "tiny",
            "--master",
            "yarn",
            "--executors",
            "1",
            "--cores-per-executor",
            "1",
            "--out",
            str(out),
            "--data",
            str(shared / "data"),
        )
        print(f"numaspark run --master yarn took {time.monotonic() - started:.1f} s")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    logs = "".join(p.read_text(errors="replace")[-3000:] for p in out.glob("runs/*/*.log"))
    assert ran.returncode == 0, ran.stderr[-3000:] + logs
    here = f"{subnet(217)}.1"
    assert f"the driver listens on {here}: the route to {host.address} leaves from it" in ran.stderr
    record = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()][-1]
    assert record["status"] == "ok" and record["app"]["spark_conf"]["spark.driver.host"] == here
    containers = record["yarn"]["containers"]
    assert len(containers) == 1 and containers[0]["container_id"].startswith("container_")
    reported = record["effective_placement"]
    assert [(e["source"], e["host"]) for e in reported] == [("plugin", host.address)], reported
    # what the driver wrote (the results, the event log) exists only here (the executor's
    # scratch output went to its own /tmp)
    for path in (out / "results.jsonl", *out.glob("runs/*/eventlog")):
        assert subprocess.run(host.argv(["test", "-e", str(path)]), check=False).returncode != 0
    deadline = time.monotonic() + 20
    while any(CONTAINER_MARK.encode() in _cmdline(p) for p in host.pids()):
        assert time.monotonic() < deadline, "a container outlived the run on the YARN host"
        time.sleep(0.5)


def test_containers_that_die_as_they_start_end_the_run_with_yarns_diagnostics(yarn, tmp_path):
    """Executors whose JVM cannot start (their JAVA_HOME is wrong): YARN marks their
    containers failed, and numaspark stops well before --executor-wait with one line that
    quotes their own error, from YARN's diagnostics in the driver's log."""
    host, conf = yarn
    out = tmp_path / "out"
    started = time.monotonic()
    ran = _numaspark(
        conf,
        tmp_path,
        "run",
        str(APPS / "squares.py"),
        "--master",
        "yarn",
        "--executors",
        "1",
        "--cores-per-executor",
        "1",
        "--out",
        str(out),
        "--conf",
        "spark.executorEnv.JAVA_HOME=/nonexistent-java",
        "--",
        str(tmp_path / "squares.json"),
        "1000",
        timeout=600,
    )
    took = time.monotonic() - started
    print(f"numaspark stopped {took:.1f} s after it started: {ran.stderr[-600:]}")
    assert ran.returncode != 0, ran.stderr[-3000:]
    died = [line for line in ran.stderr.splitlines() if "died as they started" in line]
    assert died and "nonexistent-java" in died[0], ran.stderr[-3000:]
    assert "cannot hold" not in ran.stderr
    assert took < 240, f"{took:.0f} s: the early stop did not come before the 300 s wait"
    deadline = time.monotonic() + 30
    while any(CONTAINER_MARK.encode() in _cmdline(p) for p in host.pids()):
        assert time.monotonic() < deadline, "a container outlived the run on the YARN host"
        time.sleep(0.5)


def test_the_binding_study_of_a_pyspark_application_on_yarn_at_another_address(yarn, tmp_path):
    """Issue 48: `study binding APP --master yarn` is planned on what the ResourceManager says
    its node has (one node of 2 vcores: the cluster as planned has one NUMA node), and stores
    an unbound and a node-bound configuration, each run ok in a container over there and
    placed by the plugin from inside; the parts it cannot realise are said, not run."""
    host, conf = yarn
    out = tmp_path / "out"
    ran = _numaspark(
        conf,
        tmp_path,
        "study",
        "binding",
        str(APPS / "squares.py"),
        "--master",
        "yarn",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--out",
        str(out),
        "--",
        str(tmp_path / "squares.json"),
        "20000",
    )
    logs = "".join(p.read_text(errors="replace")[-3000:] for p in out.glob("runs/*/*.log"))
    assert ran.returncode == 0, ran.stderr[-3000:] + logs
    assert "cluster: planned on yarn: 1 running node(s)" in ran.stderr, ran.stderr[-2000:]
    assert "the cluster as planned has 1" in ran.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["spec"]["label"].split()[0] for r in records) == ["1B", "1U"]
    for record in records:
        assert record["status"] == "ok", record["failure_reason"]
        assert record["spec"]["cluster"] == "yarn"
        reported = record["effective_placement"]
        assert [(e["source"], e["host"]) for e in reported] == [("plugin", host.address)]


def test_cluster_deploy_mode_of_a_pyspark_application_on_yarn(yarn, tmp_path):
    """Issue 49, item 4: `numaspark run --master yarn -- spark-submit --deploy-mode cluster
    job.py ARGS`: the driver runs in YARN's application master over there, spark-submit here
    waits for the application, and the record is ok with the executors' placement, read
    from the event log the driver wrote. The run directory is on a path the YARN host shares
    (/var/tmp here, as a cluster's NFS: its /tmp is its own)."""
    host, conf = yarn
    shared = Path(tempfile.mkdtemp(prefix="numaspark-cluster-mode-", dir="/var/tmp"))
    try:
        out, answer = shared / "out", shared / "squares.json"
        ran = _numaspark(
            conf,
            tmp_path,
            "run",
            "--master",
            "yarn",
            "--out",
            str(out),
            "--",
            "spark-submit",
            "--deploy-mode",
            "cluster",
            str(APPS / "squares.py"),
            str(answer),
            "2000",
        )
        logs = "".join(p.read_text(errors="replace")[-3000:] for p in out.glob("runs/*/*.log"))
        assert ran.returncode == 0, ran.stderr[-3000:] + logs
        assert "cluster deploy mode: the driver runs in YARN's application master" in ran.stderr
        assert json.loads(answer.read_text())["sum"] == sum(x * x for x in range(2000))
        (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        assert record["status"] == "ok", record["failure_reason"]
        reported = record["effective_placement"]
        assert [(e["source"], e["host"]) for e in reported] == [("plugin", host.address)]
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_three_trials_of_the_tuner_on_yarn_at_another_address(yarn, tmp_path):
    """Issue 48, item 4: `tune APP --master yarn --budget 3`: three trials of one measured
    application each, planned on what the ResourceManager says its node has (2 vcores and
    the largest container it grants: no local layout, nothing wider than the node), each run
    ok in containers over there, placed by the plugin, and chosen for a reason it says."""
    host, conf = yarn
    out = tmp_path / "out"
    ran = _numaspark(
        conf,
        tmp_path,
        "tune",
        str(APPS / "squares.py"),
        "--master",
        "yarn",
        "--budget",
        "3",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--no-early-stop",
        "--out",
        str(out),
        "--json",
        "--",
        str(tmp_path / "squares.json"),
        "20000",
    )
    logs = "".join(p.read_text(errors="replace")[-3000:] for p in out.glob("runs/*/*.log"))
    assert ran.returncode == 0, ran.stderr[-3000:] + logs
    assert "cluster: planned on yarn: 1 running node(s)" in ran.stderr, ran.stderr[-2000:]
    (search,) = json.loads(ran.stdout)["contexts"]  # live runs: one search
    trials = search["trials"]
    assert len(trials) == 3, trials
    for trial in trials:
        params = trial["params"]
        assert params["mode"] == "standalone" and trial["source"], trial
        assert params["executors"] * params["cores_per_executor"] <= 2, trial
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and len({r["spec"]["config"] for r in records}) == 3
    for record in records:
        assert record["status"] == "ok", record["failure_reason"]
        assert record["spec"]["cluster"] == "yarn"
        reported = record["effective_placement"]
        assert reported and {(e["source"], e["host"]) for e in reported} == {
            ("plugin", host.address)
        }, reported
