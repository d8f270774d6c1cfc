"""Every end of an executor frees its node slot (issue 57, item 2): idle removal, a kill by
the driver, SIGKILL (as YARN's preemption or the OOM killer kill) and Spark's graceful
decommissioning.

A plain standalone master and worker (2 cores, 2 GiB), started with Spark's own classes, and
two PySpark applications in turn, submitted with the conf ``numaspark plan --target standalone
--bind node`` writes (the plugin binding each executor at node level from inside), dynamic
allocation with shuffle tracking (idle timeout 4 s, 0 to 2 executors of one core) and the
plugin's lock directory (``spark.numaspark.affinity.lockDir``) in one temporary directory. The
first runs without Spark's decommissioning (SIGKILL, a kill by the driver, idle removal); the
second with ``spark.decommission.enabled`` (an executor decommissioned mid-task by SIGPWR;
with decommissioning on, dynamic allocation removes an idle executor by decommissioning it
too). The test drives each application through a FIFO: jobs whose tasks wait for a file, so
that the executors are busy exactly as long as the test needs. The executors' pids and slots
come from the plugin's placement reports; which kind of end each executor met is read back
from the event log (``SparkListenerExecutorRemoved``'s reason). One cluster serves both (a
standalone executor takes ~15 s to start here).

For each kind the test checks, from outside the JVMs: while the executor lives its slot's lock
file is held (an fcntl ``lockf`` from the test is refused); once its process has ended the
test's ``lockf`` gets the lock (then lets go at once); and a later executor of the same
application takes that same slot.

This machine has one NUMA node: every executor lands on node 0, so the slots checked are
node 0's (slot 0 and slot 1, two executors at most at once). What one node proves: each way
an executor ends frees its slot, and the next executor reuses it (no slot leaks, the lock
directory does not grow). What it cannot prove: the balance across nodes (the least loaded
node, widths, two executors starting together): NodeChooserTest's synthetic two- and four-node
topologies with child JVMs prove that, and the two-node guest (tests/guest/) on a real
multi-node kernel.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from conftest import alive, run_cli, spark_jvms
from plugin_churn_cost import start_cluster

from numaspark.placement.plugin import LOCK_DIR_KEY, PLACEMENT_KEY, REPORT_INTERVAL_KEY
from numaspark.spark.affinity import build_jar
from numaspark.spark.home import spark_env, spark_home
from numaspark.supervise.processes import stop_processes

pytestmark = [pytest.mark.integration, pytest.mark.jvm]

WAIT_S = 120  # an executor's start here (~15 s), with the machine shared

# The application: it reads commands from the FIFO its argument names (spark-submit gives a
# Python driver no stdin of ours) and answers each with one JSON line on stdout.
#   hold FLAG N   a job of N tasks, each waiting (in its Python worker) until the file FLAG
#                 exists; the job runs in a thread, the answer comes at once
#   join FLAG     waits for that job's end
#   kill ID       the driver kills executor ID (the scheduler backend's killExecutors, force:
#                 the kill dynamic allocation itself uses; SparkContext.killExecutors refuses
#                 while dynamic allocation is on)
#   gone ID...    waits until the driver no longer lists those executors (their removal is
#                 then on the listener bus, so in the event log once the context stops)
#   stop          stops the SparkContext and exits
DRIVER = r"""
import json
import sys
import threading
import time

from pyspark.sql import SparkSession


def waiter(flag):
    def task(index, rows):
        import os
        import time

        deadline = time.monotonic() + 600
        while not os.path.exists(flag) and time.monotonic() < deadline:
            time.sleep(0.1)
        yield index

    return task


def say(**fields):
    print(json.dumps(fields), flush=True)


spark = SparkSession.builder.appName("plugin-churn").getOrCreate()
sc = spark.sparkContext
jobs, threads = {}, {}
say(event="ready", app=sc.applicationId)
for line in open(sys.argv[1]):
    command, *args = line.split()
    if command == "hold":
        flag, tasks = args[0], int(args[1])

        def run(flag=flag, tasks=tasks):
            rdd = sc.parallelize(range(tasks), tasks)
            jobs[flag] = rdd.mapPartitionsWithIndex(waiter(flag)).collect()

        threads[flag] = threading.Thread(target=run)
        threads[flag].start()
        say(event="holding", flag=flag)
    elif command == "join":
        threads[args[0]].join()
        say(event="joined", flag=args[0], result=jobs.get(args[0]))
    elif command == "kill":
        ids = sc._jvm.java.util.ArrayList()
        ids.add(args[0])
        seq = sc._jvm.org.apache.spark.api.python.PythonUtils.toSeq(ids)
        killed = sc._jsc.sc().schedulerBackend().killExecutors(seq, False, False, True)
        say(event="killed", executors=[killed.apply(i) for i in range(killed.size())])
    elif command == "gone":
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ids = sc._jsc.sc().getExecutorIds()
            if not set(args) & {ids.apply(i) for i in range(ids.size())}:
                break
            time.sleep(0.2)
        say(event="gone", executors=args)
    elif command == "stop":
        break
spark.stop()
say(event="stopped")
"""


def lock_is_free(path: Path) -> bool:
    """Whether an fcntl lock of the whole file can be had now (it is let go at once)."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


@dataclass
class Executor:
    id: str
    pid: int
    slot: int
    file: Path  # its slot's lock file
    held_while_alive: bool = False
    free_after_end: bool | None = None
    ended_s: float | None = None  # from the action to the process's end


@dataclass
class Churn:
    executors: dict[str, Executor] = field(default_factory=dict)
    by_kind: dict[str, list[str]] = field(default_factory=dict)  # kind -> executor ids
    reasons: dict[str, str] = field(default_factory=dict)  # from the event log
    later: dict[str, list[str]] = field(default_factory=dict)  # kind -> the next executors


class App:
    """The driver process, its commands' FIFO, its answers and its placement reports."""

    def __init__(
        self, proc: subprocess.Popen, fifo: Path, placement: Path, locks: Path, name: str
    ) -> None:
        self.proc = proc
        self.name = name
        self.fifo = fifo
        self.commands = None
        self.placement = placement
        self.locks = locks
        self.answers: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            if raw.startswith("{"):
                self.answers.put(json.loads(raw))
        self.answers.put(None)

    def send(self, line: str, expect: str) -> dict:
        if self.commands is None:  # the driver opens its end once its SparkContext is up
            self.commands = open(os.open(self.fifo, os.O_WRONLY), "w")  # noqa: SIM115
        self.commands.write(line + "\n")
        self.commands.flush()
        return self.answer(expect)

    def answer(self, expect: str, timeout_s: float = WAIT_S) -> dict:
        try:
            said = self.answers.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no {expect} from the application in {timeout_s} s") from None
        assert said is not None, f"the application ended (exit {self.proc.wait()}) before {expect}"
        assert said["event"] == expect, said
        return said

    def reports(self) -> dict[str, dict]:
        """The first report of each executor so far."""
        found: dict[str, dict] = {}
        if self.placement.exists():
            for line in self.placement.read_text().splitlines():
                report = json.loads(line)
                if report.get("executor") not in (None, "driver"):
                    found.setdefault(report["executor"], report)
        return found

    def new_executors(self, known: set[str], count: int) -> list[Executor]:
        """The next ``count`` executors to report, once they have."""
        deadline = time.monotonic() + WAIT_S
        while True:
            fresh = {k: r for k, r in self.reports().items() if k not in known}
            if len(fresh) >= count:
                break
            assert self.proc.poll() is None, "the application ended"
            assert time.monotonic() < deadline, f"no {count} new executor(s): {fresh}"
            time.sleep(0.5)
        found = []
        for executor, report in sorted(fresh.items()):
            # "slot K of node 0 in LOCKS (nodes 0 allowed)"
            words = report["choice"].split()
            assert words[0] == "slot" and words[2:4] == ["of", "node"], report["choice"]
            slot, node = int(words[1]), int(words[4])
            file = self.locks / f"node-{node}.slot-{slot}.lock"
            found.append(Executor(f"{self.name}:{executor}", int(report["pid"]), slot, file))
        return found


def ended(executor: Executor, since: float) -> None:
    """Waits for the executor's process to be gone (reaped by its worker: a JVM's leader
    thread shows as a zombie while its other threads still exit, its files still open), then
    tests its slot's lock from here."""
    deadline = time.monotonic() + WAIT_S
    while psutil.pid_exists(executor.pid):
        assert time.monotonic() < deadline, f"executor {executor.id} ({executor.pid}) lives on"
        time.sleep(0.1)
    executor.ended_s = time.monotonic() - since
    executor.free_after_end = lock_is_free(executor.file)


def _removal_reasons(events: Path) -> dict[str, str]:
    """Executor id -> the first reason the event log gives for its removal (a decommissioned
    one is removed twice: "Executor decommission: ...", then "Command exited with code 0")."""
    reasons: dict[str, str] = {}
    for log in sorted(events.rglob("events_*")):  # a rolling log's folder of parts
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerExecutorRemoved":
                reasons.setdefault(event["Executor ID"], event.get("Removed Reason", ""))
    return reasons


def _plan(work: Path) -> Path:
    """The conf ``plan --target standalone --bind node`` writes: the plugin at node level."""
    plan = run_cli(
        "plan",
        "--target",
        "standalone",
        "--bind",
        "node",
        "--cores-per-executor",
        "1",
        "--out",
        str(work / "plan"),
        check=True,
    )
    assert (work / "plan" / "spark-defaults.conf").exists(), plan.stdout
    return work / "plan" / "spark-defaults.conf"


def _submit(
    work: Path, master: str, properties: Path, locks: Path, decommission: bool
) -> tuple[App, Path]:
    """The application, with its own placement file and event log; it has said "ready"."""
    name = "decommission" if decommission else "plain"
    placement, events = work / name / "placement.jsonl", work / name / "events"
    events.mkdir(parents=True)
    (work / "driver.py").write_text(DRIVER)
    conf = {
        # sized for the 2-core, 2 GiB worker (the plan is for the whole machine)
        "spark.executor.memory": "512m",
        "spark.executor.instances": "0",
        "spark.cores.max": "2",
        "spark.dynamicAllocation.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.enabled": "true",
        "spark.dynamicAllocation.executorIdleTimeout": "4s",
        "spark.dynamicAllocation.minExecutors": "0",
        "spark.dynamicAllocation.maxExecutors": "2",
        # with it on, dynamic allocation removes an idle executor by decommissioning it
        "spark.decommission.enabled": str(decommission).lower(),
        "spark.ui.enabled": "false",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": str(events),
        "spark.eventLog.compress": "false",
        LOCK_DIR_KEY: str(locks),
        PLACEMENT_KEY: str(placement),
        REPORT_INTERVAL_KEY: "1000",
    }
    argv = [str(spark_home() / "bin" / "spark-submit"), "--master", master]
    argv += ["--properties-file", str(properties)]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    fifo = work / name / "commands"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [*argv, str(work / "driver.py"), str(fifo)],
        env=spark_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(work / name / "driver.log").open("w"),
        text=True,
    )
    app = App(proc, fifo, placement, locks, name)
    app.answer("ready")
    return app, events


def _arrive(app: App, churn: Churn, count: int) -> list[Executor]:
    """The next ``count`` executors of ``app``, once each has reported; its lock is held."""
    mine = {i.split(":", 1)[1] for i in churn.executors if i.startswith(f"{app.name}:")}
    fresh = app.new_executors(mine, count)
    for executor in fresh:
        churn.executors[executor.id] = executor
        executor.held_while_alive = not lock_is_free(executor.file)
    return fresh


def _without_decommissioning(app: App, churn: Churn, flags: Path) -> None:
    """SIGKILL, a kill by the driver, then removal when idle."""
    # two busy executors: one SIGKILLed, one killed by the driver
    app.send(f"hold {flags / 'one'} 2", "holding")
    first, second = _arrive(app, churn, 2)
    start = time.monotonic()
    os.kill(first.pid, signal.SIGKILL)
    ended(first, start)
    start = time.monotonic()
    killed = app.send(f"kill {second.id.split(':', 1)[1]}", "killed")
    assert killed["executors"] == [second.id.split(":", 1)[1]], killed
    ended(second, start)
    churn.by_kind["sigkill"], churn.by_kind["driver"] = [first.id], [second.id]
    # their tasks wait again: dynamic allocation adds two executors, which take the slots
    replacements = _arrive(app, churn, 2)
    churn.later["sigkill"] = churn.later["driver"] = [e.id for e in replacements]
    (flags / "one").touch()
    app.send(f"join {flags / 'one'}", "joined")
    # idle from here: removed after the 4 s idle timeout, the test doing nothing
    start = time.monotonic()
    for executor in replacements:
        ended(executor, start)
    churn.by_kind["idle"] = [e.id for e in replacements]


def _with_decommissioning(app: App, churn: Churn, flags: Path) -> None:
    """One executor decommissioned mid-task, one idle (dynamic allocation decommissions it),
    then the next two executors."""
    app.send(f"hold {flags / 'two'} 2", "holding")
    decommissioned, idle = _arrive(app, churn, 2)
    time.sleep(2)  # both running the job's tasks
    start = time.monotonic()
    # SIGPWR, as Kubernetes' pre-stop hook and a decommissioned standalone worker send it
    os.kill(decommissioned.pid, signal.SIGPWR)
    time.sleep(3)
    assert alive(decommissioned.pid), "the decommissioned executor ended with its task running"
    (flags / "two").touch()
    app.send(f"join {flags / 'two'}", "joined")
    ended(decommissioned, start)
    start = time.monotonic()
    ended(idle, start)
    churn.by_kind["decommission"], churn.by_kind["idle-decommission"] = (
        [decommissioned.id],
        [idle.id],
    )
    app.send(f"hold {flags / 'three'} 2", "holding")
    after = _arrive(app, churn, 2)
    churn.later["decommission"] = churn.later["idle-decommission"] = [e.id for e in after]
    (flags / "three").touch()
    app.send(f"join {flags / 'three'}", "joined")


@pytest.fixture(scope="module")
def churn(tmp_path_factory) -> Churn:
    """The whole scenario, run once: a cluster and two applications in turn, one without
    Spark's decommissioning (SIGKILL, a kill by the driver, idle removal) and one with it
    (decommissioning; idle removal, which then decommissions), sharing the lock directory;
    everything stopped again before any test reads what it saw."""
    assert not spark_jvms(), f"Spark JVMs already running: {spark_jvms()}"
    build_jar()
    work = tmp_path_factory.mktemp("plugin-churn")
    locks, flags = work / "locks", work / "flags"
    flags.mkdir()
    properties = _plan(work)
    master, daemons = start_cluster(work)  # the benchmark's plain cluster (bench/ is on the path)
    seen = Churn()
    apps: list[App] = []
    logs = []
    try:
        for decommission in (False, True):
            app, events = _submit(work, master, properties, locks, decommission)
            apps.append(app)
            logs.append((app.name, events))
            if decommission:
                _with_decommissioning(app, seen, flags)
            else:
                _without_decommissioning(app, seen, flags)
            ours = [i.split(":", 1)[1] for i in seen.executors if i.startswith(f"{app.name}:")]
            app.send(f"gone {' '.join(ours)}", "gone")
            app.send("stop", "stopped")
            assert app.proc.wait(timeout=60) == 0
        # the idle ones' slots: taken by the next application's first two executors
        seen.later["idle"] = [i for i in seen.executors if i.startswith("decommission:")][:2]
    finally:
        for app in apps:
            if app.proc.poll() is None:
                stop_processes([app.proc.pid])
            if app.commands is not None:
                app.commands.close()
        stop_processes([d.pid for d in reversed(daemons)])
    deadline = time.monotonic() + 15
    while spark_jvms() and time.monotonic() < deadline:
        time.sleep(0.5)
    for name, events in logs:
        for executor, reason in _removal_reasons(events).items():
            seen.reasons[f"{name}:{executor}"] = reason
    return seen


def _check(churn: Churn, kind: str, reason: str) -> None:
    takers = [churn.executors[i] for i in churn.later[kind]]
    for gone in (churn.executors[i] for i in churn.by_kind[kind]):
        assert gone.held_while_alive, f"{kind}: the test's lockf got a live executor's lock"
        assert gone.free_after_end, f"{kind}: executor {gone.id}'s {gone.file.name} still held"
        assert reason in churn.reasons.get(gone.id, "").lower(), (kind, gone.id, churn.reasons)
        assert gone.slot in [t.slot for t in takers], (
            f"{kind}: slot {gone.slot} of executor {gone.id} not reused by the next executors: "
            f"{[(t.id, t.slot) for t in takers]}"
        )
    # two executors at most at once: the lock directory never grew past two slots
    assert {e.slot for e in churn.executors.values()} == {0, 1}


def test_sigkill_frees_the_slot(churn, no_spark_left):
    _check(churn, "sigkill", "exited with code 137")  # 128 + SIGKILL, as the worker saw it


def test_a_kill_by_the_driver_frees_the_slot(churn, no_spark_left):
    _check(churn, "driver", "killed by driver")


def test_graceful_decommissioning_frees_the_slot(churn, no_spark_left):
    _check(churn, "decommission", "is decommissioned")


def test_idle_removal_frees_the_slot(churn, no_spark_left):
    # the test did nothing: removed after the idle timeout, which Spark words as a kill by
    # the driver; with decommissioning on, dynamic allocation decommissions them instead
    _check(churn, "idle", "killed by driver")
    _check(churn, "idle-decommission", "spark scale down")
