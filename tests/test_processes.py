"""Process tracking and effective placement, on real processes of this machine."""

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from prereq import require

from numaspark.placement import Binding, Layout, plan
from numaspark.readback.proc import differences, read_effective
from numaspark.supervise.processes import (
    EXEC_WINDOW_S,
    ProcessTracker,
    runs,
    stop_processes,
    wait_for,
)
from numaspark.topology import load_machine

# A parent that starts a child which ignores SIGTERM: only SIGKILL stops it.
STUBBORN = (
    "import signal, subprocess, sys, time;"
    "subprocess.Popen([sys.executable, '-c', 'import signal, time;"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)']);"
    "time.sleep(600)"
)


def test_stop_all_stops_descendants_even_stubborn_ones(tmp_path):
    tracker = ProcessTracker(grace_s=1.0)
    parent = tracker.start([sys.executable, "-c", STUBBORN], name="parent", log=tmp_path / "p.log")
    deadline = time.monotonic() + 10
    while not psutil.Process(parent.pid).children() and time.monotonic() < deadline:
        time.sleep(0.1)
    (child,) = psutil.Process(parent.pid).children()
    tracker.stop_all()
    assert (
        not psutil.pid_exists(child.pid)
        or psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE
    )
    assert parent.popen.poll() is not None
    assert tracker.processes == []


def test_stop_processes_tolerates_gone_pids():
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert stop_processes([proc.pid], grace_s=0.5) == []


def test_context_manager_stops_on_exception(tmp_path):
    with pytest.raises(RuntimeError), ProcessTracker(grace_s=1.0) as tracker:
        sleeper = tracker.start(["sleep", "600"], name="sleep", log=tmp_path / "s.log")
        raise RuntimeError("boom")
    assert sleeper.popen.poll() is not None


@pytest.mark.integration
def test_effective_placement_of_a_numactl_bound_process():
    """Real binding on the CPUs and node this machine has."""
    require("numactl")
    topology = load_machine()
    placement = plan(
        topology, Layout(executors=1, cores_per_executor=1, memory_per_executor=1 << 30), Binding.PU
    )
    executor = placement.executors[0]
    from numaspark.placement import numactl_argv

    proc = subprocess.Popen([*numactl_argv(executor), "sleep", "30"])
    try:
        # numactl applies its options one by one before it execs sleep; read once sleep runs
        deadline = time.monotonic() + 5
        comm = Path(f"/proc/{proc.pid}/comm")
        while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
            time.sleep(0.02)
        actual = read_effective(proc.pid)
        assert actual.cpus == executor.cpus
        assert actual.policy == f"bind:{executor.mem_nodes}"
        assert differences(executor, actual) == []
        unbound = read_effective(os.getpid())
        assert differences(executor, unbound)  # this test process is not bound like that
    finally:
        proc.kill()
        proc.wait()
    assert read_effective(proc.pid) is None  # a reaped process reads as gone


def test_daemon_jvm_options_default_and_yield_to_the_user(monkeypatch):
    from numaspark.spark.home import DAEMON_JAVA_OPTS, spark_env

    monkeypatch.delenv("SPARK_DAEMON_JAVA_OPTS", raising=False)
    assert spark_env()["SPARK_DAEMON_JAVA_OPTS"] == DAEMON_JAVA_OPTS
    monkeypatch.setenv("SPARK_DAEMON_JAVA_OPTS", "-Xlog:gc")
    assert spark_env()["SPARK_DAEMON_JAVA_OPTS"] == "-Xlog:gc"


def test_cluster_start_timeout_from_the_environment(monkeypatch):
    from numaspark.errors import UsageError
    from numaspark.spark.standalone import START_TIMEOUT_S, start_timeout

    monkeypatch.delenv("NUMASPARK_START_TIMEOUT", raising=False)
    assert start_timeout() == START_TIMEOUT_S
    monkeypatch.setenv("NUMASPARK_START_TIMEOUT", "400")
    assert start_timeout() == 400
    for bad in ("soon", "0", "-5"):
        monkeypatch.setenv("NUMASPARK_START_TIMEOUT", bad)
        with pytest.raises(UsageError, match="NUMASPARK_START_TIMEOUT=.*give seconds"):
            start_timeout()


_HOLDER = """
import sys, time
from pathlib import Path
from numaspark.supervise.processes import supervised
with supervised() as tracker:
    tracker.start(["sleep", "300"], name="sleeper", log=Path(sys.argv[1]))
    tracker.start(["sleep", "301"], name="released", log=Path(sys.argv[1]))
    tracker.release_all()  # kept on purpose (as a cluster left up): not an orphan
    tracker.start(["sleep", "302"], name="orphan", log=Path(sys.argv[1]))
    print("ready", flush=True)
    time.sleep(300)
"""


def test_what_a_killed_numaspark_left_is_found_and_stopped(tmp_path, monkeypatch):
    """SIGKILL cannot be caught: the ledger on disk is how the next numaspark finds the
    processes the dead one started (and not those it released, nor a live one's)."""
    from numaspark.supervise import ledger

    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "log")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "NUMASPARK_STATE_DIR": str(tmp_path / "state")},
    )
    assert holder.stdout.readline().strip() == "ready"

    def children() -> dict[str, psutil.Process]:
        # a child's /proc cmdline can read empty for a moment under load (it failed once)
        found = {}
        for child in psutil.Process(holder.pid).children():
            with contextlib.suppress(psutil.Error):
                if child.cmdline():
                    found[child.cmdline()[-1]] = child
        return found

    assert wait_for(lambda: len(children()) == 3, 10), children()
    kids = children()
    try:
        assert ledger.leftovers() == {}  # its owner is alive: its processes are its own
        holder.kill()
        holder.wait()
        said = []
        monkeypatch.setattr(ledger, "notify", said.append)
        stopped = ledger.reap()
        assert sorted(p.name for p in stopped) == ["orphan"]
        assert not kids["302"].is_running() and kids["301"].is_running()
        assert "stopped 1 process(es) left running by numaspark" in said[0] and "orphan" in said[0]
        assert ledger.reap() == [] and not list((tmp_path / "state" / "running").iterdir())
    finally:
        stop_processes([p.pid for p in kids.values() if p.is_running()], grace_s=1)


# A numaspark stand-in: starts a process that dies with it (and one that does not), says
# their pids, and waits to be killed.
_PARENT = """
import sys, time
from pathlib import Path
from numaspark.supervise.processes import ProcessTracker
tracker = ProcessTracker()
log = Path(sys.argv[1])
bound = tracker.start(["sleep", "401"], name="bound", log=log, die_with_parent=True)
free = tracker.start(["sleep", "402"], name="free", log=log)
print(bound.pid, free.pid, flush=True)
time.sleep(300)
"""


def test_a_process_started_die_with_parent_ends_when_numaspark_is_killed(tmp_path, monkeypatch):
    """SIGKILL of numaspark: the kernel's parent-death signal ends the driver at once; a
    process started without it (a kept cluster's daemon) runs on."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(tmp_path / "log")], stdout=subprocess.PIPE, text=True
    )
    bound, free = (psutil.Process(int(p)) for p in parent.stdout.readline().split())
    try:
        assert bound.is_running() and free.is_running()
        parent.kill()
        parent.wait()
        killed = time.monotonic()
        bound.wait(timeout=10)
        print(f"the bound child ended {time.monotonic() - killed:.2f} s after its parent's SIGKILL")
        assert free.is_running()
    finally:
        stop_processes([p.pid for p in (bound, free) if p.is_running()], grace_s=1)


def test_a_command_line_read_between_two_execs_is_asked_again(monkeypatch):
    """A detached daemon is sh, then setsid, then env, then java: between two execs the
    kernel shows an empty command line, and a 'cluster down' right after 'cluster up' read
    the daemon as not Spark's and left it running. runs() asks again; a zombie's command line
    stays empty, and is not waited for."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "Marker"])
    try:
        answers = iter([[], [], ["python", "-c", "...", "Marker"]])
        real = psutil.Process.cmdline
        monkeypatch.setattr(
            psutil.Process,
            "cmdline",
            lambda self: next(answers) if self.pid == sleeper.pid else real(self),
        )
        assert runs(sleeper.pid, "Marker")
    finally:
        sleeper.kill()
        sleeper.wait()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:
        time.sleep(0.01)
    started = time.monotonic()
    assert not runs(zombie.pid, "pass")
    assert time.monotonic() - started < EXEC_WINDOW_S / 2
    zombie.wait()
