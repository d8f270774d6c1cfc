"""Deciding on the user's cluster (issue 48): the binding study and the tuner of a PySpark
application, run on a plain standalone cluster at another address that numaspark did not
start.

The cluster is tests/nscluster.py's ``SparkHosts``: a Master and a Worker on ``spark-a``
(10.216.N.11) and a Worker on ``spark-b`` (.12), network namespaces on this machine started
with Spark's own classes, one core and 1 GB each. numaspark runs from the root namespace with
``--master``; the application's file exists only here. Namespaces on one machine prove
addresses, routes and the plugin's binding from inside, never speed: nothing here compares
times. Run under the JVM lock; bash scripts/test-hosts.sh runs it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import spark_jvms
from netns import drivers_here, gone_within
from nscluster import SparkHosts

pytestmark = [
    pytest.mark.integration,
    pytest.mark.jvm,
    pytest.mark.long(script="bash scripts/test-hosts.sh"),
]
APPS = Path(__file__).resolve().parent / "apps"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    assert not spark_jvms(), f"Spark JVMs already running: {spark_jvms()}"
    with SparkHosts(tmp_path_factory.mktemp("hosts"), cores=1, memory="1g") as made:
        yield made
    deadline = time.monotonic() + 15
    while spark_jvms() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not spark_jvms(), f"Spark JVMs left behind: {spark_jvms()}"


@pytest.fixture
def app(tmp_path) -> Path:
    """squares.py, in a folder of this machine's only: shipped, never read over there."""
    copy = tmp_path / "app" / "squares.py"
    copy.parent.mkdir()
    shutil.copy(APPS / "squares.py", copy)
    return copy


def _numaspark(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "numaspark", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env={
            **os.environ,
            "COLUMNS": "400",
            "NUMASPARK_STATE_DIR": str(tmp_path / "state"),
        },
    )


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _on_both_hosts(record: dict) -> None:
    effective = record["effective_placement"]
    assert effective and all(e["source"] == "plugin" for e in effective), effective
    assert {e["host"] for e in effective} == {"spark-a", "spark-b"}, effective


def _interrupted(cli: subprocess.Popen, cluster) -> None:
    """SIGINT to numaspark: it exits 130, and no driver is left here nor executor there."""
    cli.send_signal(signal.SIGINT)
    _, said = cli.communicate(timeout=60)
    assert cli.returncode == 130, said.decode()[-2000:]
    assert gone_within(drivers_here, 10) is not None, drivers_here()
    assert gone_within(lambda: [p for ps in cluster.executors().values() for p in ps], 20)


def test_the_binding_study_of_a_pyspark_application_on_the_cluster(tmp_path, cluster, app):
    """Unbound against node-bound on the cluster's two workers (planned as two one-core
    nodes), every run ok over there and placed by the plugin on both hosts; what the plugin
    cannot realise from inside (some of the nodes, remote memory, switching balancing) is a
    line each, never a run."""
    out = tmp_path / "out"
    done = _numaspark(
        tmp_path,
        "study",
        "binding",
        str(app),
        "--master",
        cluster.master,
        "--master-ui",
        cluster.ui,
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
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    assert f"cluster: planned on {cluster.master}: 2 alive worker(s)" in said
    assert "cannot run there: 1U standalone" in said and "remote memory needs JVMs" in said
    assert "autonuma (unbound, the kernel's NUMA balancing on)" in said
    records = _records(out)
    assert sorted(r["spec"]["label"].split()[0] for r in records) == ["2B", "2U"]
    for record in records:
        assert record["status"] == "ok", record["failure_reason"]
        assert record["spec"]["cluster"] == cluster.master
        _on_both_hosts(record)
    bound = next(r for r in records if r["spec"]["label"].startswith("2B"))
    assert all(e["chosen_nodes"] == "0" for e in bound["effective_placement"])


def test_three_trials_of_the_tuner_on_the_cluster(tmp_path, cluster, app):
    """--budget 3 --no-early-stop: exactly three trials, each one measured application on the
    cluster (no local layout proposed: local mode would run here), each with why it was
    chosen. The space is what the master says the cluster holds: one executor of two cores
    would never be granted by two one-core workers, so it is not proposed (said in a line)."""
    out = tmp_path / "out"
    done = _numaspark(
        tmp_path,
        "tune",
        str(app),
        "--master",
        cluster.master,
        "--master-ui",
        cluster.ui,
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
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "not proposed: 9 configuration(s) the cluster cannot hold now" in done.stderr
    assert "cannot hold 1 executor(s) of 2 core(s)" in done.stderr, done.stderr[-3000:]
    (search,) = json.loads(done.stdout)["contexts"]  # live runs: one search
    trials = search["trials"]
    assert len(trials) == 3, trials
    assert all(t["params"]["mode"] == "standalone" and t["source"] for t in trials), trials
    assert all(t["params"]["cores_per_executor"] == 1 for t in trials), trials
    records = _records(out)
    assert len(records) == 3 and len({r["spec"]["config"] for r in records}) == 3
    for record in records:
        assert record["spec"]["cluster"] == cluster.master
        assert record["status"] == "ok", record["failure_reason"]


def test_ctrl_c_mid_study_leaves_nothing_there_and_resume_finishes_it(tmp_path, cluster, app):
    """SIGINT while the study's first application holds executors on both hosts: numaspark
    ends, its driver and every executor over there with it (the application is gone from the
    master), and `--resume` runs what was not stored, no more."""
    out = tmp_path / "out"
    argv = [
        sys.executable,
        "-m",
        "numaspark",
        "study",
        "binding",
        str(APPS / "holds.py"),
        "--master",
        cluster.master,
        "--master-ui",
        cluster.ui,
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--out",
        str(out),
        "--",
        str(tmp_path / "release"),
    ]
    env = {**os.environ, "COLUMNS": "400", "NUMASPARK_STATE_DIR": str(tmp_path / "state")}
    cli = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not all(cluster.executors().values()):
        assert cli.poll() is None and time.monotonic() < deadline, cluster.executors()
        time.sleep(0.2)
    _interrupted(cli, cluster)
    # resumed with the application released: both configurations run now, one run each
    (tmp_path / "release").touch()
    resumed = _numaspark(tmp_path, *argv[3:5], *argv[5:-2], "--resume", *argv[-2:])
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-3000:]
    records = _records(out)
    assert sorted(r["spec"]["label"].split()[0] for r in records if r["status"] == "ok") == [
        "2B",
        "2U",
    ]


def test_ctrl_c_mid_tune_leaves_nothing_there_and_resume_reads_the_trial_back(tmp_path, cluster):
    """Issue 48, item 7: SIGINT while the tune's second trial holds executors over there:
    numaspark ends, its driver and the executors with it; `tune --resume` reads the first
    trial back into the search (it counts against --budget, and is not run again) and runs
    the second, so the budget of two holds two trials, one of them read back."""
    out, release = tmp_path / "out", tmp_path / "release"
    argv = [
        *("tune", str(APPS / "holds.py"), "--master", cluster.master, "--master-ui", cluster.ui),
        *("--budget", "2", "--repeat", "1", "--warmup", "0", "--no-early-stop"),
        *("--out", str(out), "--json", "--", str(release)),
    ]
    env = {**os.environ, "COLUMNS": "400", "NUMASPARK_STATE_DIR": str(tmp_path / "state")}
    cli = subprocess.Popen(
        [sys.executable, "-m", "numaspark", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 300

    def executors_there() -> bool:
        assert cli.poll() is None and time.monotonic() < deadline, cluster.executors()
        return any(cluster.executors().values())

    while not executors_there():  # the first trial's application holds its executors
        time.sleep(0.2)
    release.touch()
    while not (out / "results.jsonl").exists():
        assert cli.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    release.unlink()  # before the second application's sum is done (a session takes ~10 s)
    while not executors_there():
        time.sleep(0.2)
    _interrupted(cli, cluster)
    assert len([r for r in _records(out) if r["status"] == "ok"]) == 1
    release.touch()
    resumed = _numaspark(tmp_path, *argv[:-3], "--resume", *argv[-3:])
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-3000:]
    (search,) = json.loads(resumed.stdout)["contexts"]  # live runs: one search
    trials = search["trials"]
    assert len(trials) == 2, trials
    assert trials[0]["source"] == "stored: measured by an earlier tune, read back", trials
    assert trials[1]["params"] != trials[0]["params"]
    ok = [r for r in _records(out) if r["status"] == "ok"]
    assert len(ok) == 2 and len({r["spec"]["config"] for r in ok}) == 2, ok
