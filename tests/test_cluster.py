"""One cluster type, here or on hosts: its life cycle on this machine's shell, with stand-in
daemons (small Python processes named like Spark's) instead of JVMs, so the start, the watch,
the detached start, lost daemons, stop and the state file are tested in the fast lane. The
same code runs over SSH in tests/test_hosts.py (scripts/test-hosts.sh) and with real Spark
in tests/test_spark_runs.py."""

import json
import sys
import time

import psutil
import pytest

from numaspark.errors import UsageError
from numaspark.hosts import LOCAL, Host, Local
from numaspark.spark.standalone import EXECUTOR_CLASS, STATE_FILE, Cluster, _refuse_running
from numaspark.supervise.processes import ProcessTracker, wait_for

# a stand-in daemon: sleeps, and carries Spark's package name so that stop() treats it as Spark
DAEMON = [sys.executable, "-c", "import time; time.sleep(120)", "org.apache.spark.deploy.Fake"]
# a stand-in worker that forks a stand-in executor
WORKER = [
    sys.executable,
    "-c",
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
    "'import time; time.sleep(120)', sys.argv[1]]); time.sleep(120)",
    EXECUTOR_CLASS,
]
HERE = Host(LOCAL, "127.0.0.1")


def _cluster(tmp_path, kept=False) -> Cluster:
    return Cluster(directory=tmp_path, hosts=[HERE], local=True, master_host=LOCAL, kept=kept)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_watched_daemon_is_recorded_found_lost_and_stopped(tmp_path):
    tracker = ProcessTracker(grace_s=2)
    cluster = _cluster(tmp_path)
    try:
        cluster._start(tracker, HERE, "master", DAEMON, port=1)
        (entry,) = cluster.processes
        daemon = psutil.Process(entry["pid"])
        # the pid is known as the shell forks it: its command line is empty until it has exec'd
        assert wait_for(lambda: "org.apache.spark.deploy.Fake" in daemon.cmdline(), 10), (
            daemon.cmdline()
        )
        assert daemon.ppid() == entry["client"]  # held by the sh watch the tracker owns
        state = json.loads((tmp_path / STATE_FILE).read_text())
        assert (
            state["schema"] == "numaspark.cluster/2" and state["processes"][0]["pid"] == daemon.pid
        )
        assert cluster.lost() is None
        daemon.kill()
        assert wait_for(lambda: cluster.lost() is not None, 60)
        assert cluster.lost().startswith("master exited")
    finally:
        stopped = cluster.stop()
        tracker.stop_all()
    assert stopped.problems == [] and not (tmp_path / STATE_FILE).exists()


def test_the_watch_ends_its_daemon_when_its_holder_goes(tmp_path):
    """Not a Spark process, so stop() leaves it to the watch: closing the holder's stdin (as
    numaspark's death would) ends it."""
    tracker = ProcessTracker(grace_s=2)
    cluster = _cluster(tmp_path)
    plain = [sys.executable, "-c", "import time; time.sleep(120)"]
    try:
        cluster._start(tracker, HERE, "worker 0", plain, index=0)
        pid = cluster.processes[0]["pid"]
        assert not _gone(pid)
        cluster.stop()
        assert wait_for(lambda: _gone(pid), 60)
    finally:
        tracker.stop_all()


def test_a_kept_daemon_runs_detached_and_is_stopped_by_pid(tmp_path):
    tracker = ProcessTracker(grace_s=2)
    cluster = _cluster(tmp_path, kept=True)
    try:
        cluster._start(tracker, HERE, "master", DAEMON)
        pid = cluster.processes[0]["pid"]
        assert tracker.processes == []  # nothing of ours holds it: it outlives this process
        assert psutil.Process(pid).ppid() != psutil.Process().pid
        assert cluster.lost() is None
        again = Cluster.from_state(tmp_path)  # what 'cluster down' reads
        assert again.kept and again.processes[0]["pid"] == pid
        stopped = again.stop()
        assert stopped.pids == [pid] and stopped.problems == []
        assert wait_for(lambda: _gone(pid), 60)
        assert not (tmp_path / STATE_FILE).exists()
    finally:
        tracker.stop_all()
        if not _gone(cluster.processes[0]["pid"]):
            psutil.Process(cluster.processes[0]["pid"]).kill()


def test_executors_are_found_under_their_worker(tmp_path):
    tracker = ProcessTracker(grace_s=2)
    cluster = _cluster(tmp_path)
    try:
        cluster._start(tracker, HERE, "worker 3", WORKER, index=3)
        assert wait_for(lambda: cluster.executor_pids(), 60)
        (pid,) = cluster.executor_pids()[3]
        actual, facts = cluster.read_effective(pid, 3)
        assert actual.pid == pid and len(actual.cpus) >= 1 and facts == {}
    finally:
        cluster.stop()
        tracker.stop_all()


def test_earlier_state_files_are_read_and_stopped(tmp_path):
    """A local numaspark.cluster/1 and a numaspark.hosts-cluster/1, as earlier versions wrote
    them; their daemons are gone, so stopping them only removes the state."""
    local = {
        "schema": "numaspark.cluster/1",
        "host": "127.0.0.1",
        "master_url": "spark://127.0.0.1:7077",
        "master_webui": 8080,
        "master_pid": 2**22 + 1,
        "workers": [
            {
                "index": 0,
                "pid": 2**22 + 2,
                "port": 1,
                "webui": 2,
                "cores": 1,
                "memory_mb": 512,
                "work_dir": str(tmp_path / "w0"),
                "argv": [],
                "log": "w.log",
            }
        ],
        "placement": {},
        "saved_at": 0,
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(local))
    cluster = Cluster.from_state(tmp_path)
    assert cluster.local and cluster.kept and cluster.master_host == LOCAL
    assert [p["name"] for p in cluster.processes] == ["master", "worker 0"]
    assert cluster.workers[0]["index"] == 0 and cluster.lost().startswith("master exited")
    assert cluster.stop().problems == [] and not (tmp_path / STATE_FILE).exists()

    hosts = {
        "schema": "numaspark.hosts-cluster/1",
        "master_url": "spark://10.0.0.1:7077",
        "master_host": "a",
        "master_webui": 8080,
        "driver_address": "10.0.0.9",
        "hosts": [
            {
                "name": "a",
                "address": "10.0.0.1",
                "user": None,
                "port": 22,
                "key": "/k",
                "known_hosts": None,
                "spark_home": None,
                "python": None,
            }
        ],
        "processes": [],
        "placement": {},
        "encrypt": True,
        "kept": True,
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(hosts))
    cluster = Cluster.from_state(tmp_path)
    assert not cluster.local and cluster.encrypt and str(cluster.hosts[0].key) == "/k"
    assert cluster.properties_file == tmp_path.resolve() / "spark-auth.conf"


def test_a_state_file_of_an_unknown_kind_is_one_line(tmp_path):
    (tmp_path / STATE_FILE).write_text(json.dumps({"schema": "numaspark.cluster/9"}))
    with pytest.raises(UsageError, match="schema 'numaspark.cluster/9' is not one this"):
        Cluster.from_state(tmp_path)
    (tmp_path / STATE_FILE).write_text("{")
    with pytest.raises(UsageError, match="is not a cluster's state"):
        Cluster.from_state(tmp_path)


def test_a_directory_whose_cluster_runs_is_not_started_over(tmp_path):
    tracker = ProcessTracker(grace_s=2)
    cluster = _cluster(tmp_path)
    try:
        cluster._start(tracker, HERE, "master", DAEMON)
        with pytest.raises(UsageError, match="already running.*cluster down"):
            _refuse_running(tmp_path)
    finally:
        cluster.stop()
        tracker.stop_all()
    cluster._save()  # the same state, its daemon gone: a new cluster may start there
    _refuse_running(tmp_path)


def test_the_local_shell_answers_like_ssh():
    shell = Local(HERE)
    me = psutil.Process().pid
    status, maps = shell.read_proc(me)
    assert "Cpus_allowed_list" in status
    assert shell.gone([me, 2**22 + 3]) == {2**22 + 3}
    ports = shell.free_ports("127.0.0.1", 4)
    assert len(set(ports)) == 4
    assert shell.run(["sh", "-c", 'echo "$1"', "sh", "a b"]) == "a b\n"
    started = time.monotonic()
    child = psutil.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert (me, child.pid) in [(p, c) for p, c, _ in shell.children([me])]
    finally:
        child.kill()
        child.wait()
    assert time.monotonic() - started < 60  # generous: a loaded machine, not a hang
