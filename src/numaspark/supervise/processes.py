"""Start processes as argv lists, track every one, and stop them all, whatever happens.

Each process starts in its own session so that a Ctrl-C in the terminal
reaches numaspark, which then stops the processes in order: SIGTERM to each
process and its descendants (a worker's executors), then SIGKILL to whatever
is still alive after a grace period. Each is also written in this numaspark's
ledger on disk (supervise/ledger.py), so that what a numaspark killed by SIGKILL
left running is found and stopped by the next one.

A process started ``die_with_parent`` (the driver: spark-submit's JVM) gets SIGTERM from
the kernel the moment numaspark dies, SIGKILL included (a parent-death signal,
``prctl(PR_SET_PDEATHSIG)``, set in the child between fork and exec, and kept across
exec): its shutdown hook then ends the application on its cluster, whose executors stop,
without waiting for the next numaspark to reap it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from numaspark.supervise import ledger
from numaspark.supervise.balancing import restore_left
from numaspark.supervise.ledger import LEDGER, reap
from numaspark.supervise.stop import DEFAULT_GRACE_S, stop_processes

# set by the fast test lane (scripts/test.sh --fast), which promises to start no JVM: a test
# that starts one belongs in the full lane, and is told so instead of slowing the fast one
NO_JVM = "NUMASPARK_NO_JVM"
_JVM_PROGRAMS = frozenset({"java", "javac", "mvn", "spark-submit", "spark-class"})


def refuse_jvm(argv: Sequence[str]) -> None:
    """Raise when ``argv`` starts a JVM and the fast test lane forbids it."""
    if os.environ.get(NO_JVM) and any(Path(a).name in _JVM_PROGRAMS for a in argv):
        raise RuntimeError(
            f"{NO_JVM} is set (the fast test lane) and this starts a JVM: "
            f"{' '.join(argv)[:200]}; mark the test jvm"
        )


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_LIBC = ctypes.CDLL(None, use_errno=True)


def _dies_with(parent: int) -> Callable[[], None]:
    """What the child runs before exec: ask for SIGTERM when ``parent`` dies. The kernel sends
    it when the *thread* that forked the child ends, so start such a process from the thread
    that waits for it. Only an async-signal-safe call and a syscall run in the forked child:
    ``prctl`` is resolved here, before the fork."""
    prctl = _LIBC.prctl

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the signal was asked for
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwind like Ctrl-C so every `finally` stops what it started."""


@dataclass
class Tracked:
    name: str
    pid: int
    popen: subprocess.Popen | None = None
    log: Path | None = None

    def alive(self) -> bool:
        if self.popen is not None:
            return self.popen.poll() is None
        try:
            proc = psutil.Process(self.pid)
            return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False


@dataclass
class ProcessTracker:
    """Every process numaspark starts goes through here, and is stopped through here."""

    grace_s: float = DEFAULT_GRACE_S
    processes: list[Tracked] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(
        self,
        argv: Sequence[str],
        *,
        name: str,
        log: Path,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        stdin_pipe: bool = False,
        die_with_parent: bool = False,
    ) -> Tracked:
        """Start ``argv`` with its output in ``log``. ``stdin_pipe``: its stdin is a pipe this
        process holds open, so that it sees EOF when we close it or die (a remote lifeline).
        ``die_with_parent``: it gets SIGTERM when numaspark dies, even by SIGKILL (never for
        what may be released to outlive numaspark, a kept cluster)."""
        refuse_jvm(argv)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            popen = subprocess.Popen(
                list(argv),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_dies_with(os.getpid()) if die_with_parent else None,
            )
        tracked = Tracked(name=name, pid=popen.pid, popen=popen, log=log)
        LEDGER.started(popen.pid, name)  # on disk too: found again if numaspark is SIGKILLed
        with self._lock:
            self.processes.append(tracked)
        return tracked

    def adopt(self, name: str, pid: int) -> Tracked:
        """Track a process started by an earlier numaspark command (a cluster left up)."""
        tracked = Tracked(name=name, pid=pid)
        with self._lock:
            self.processes.append(tracked)
        return tracked

    def stop(self, tracked: Tracked) -> None:
        stop_processes([tracked.pid], self.grace_s)
        if tracked.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                tracked.popen.wait(timeout=1)
        self.forget(tracked)

    def forget(self, tracked: Tracked) -> None:
        """Stop tracking a process that has exited by itself."""
        LEDGER.ended(tracked.pid)
        with self._lock:
            if tracked in self.processes:
                self.processes.remove(tracked)

    def release_all(self) -> list[Tracked]:
        """Stop tracking everything, leaving it running (a cluster kept up on purpose)."""
        with self._lock:
            released, self.processes = self.processes, []
        for tracked in released:
            LEDGER.ended(tracked.pid)
        return released

    def stop_all(self) -> None:
        """Stop every tracked process (newest first) with its descendants."""
        with self._lock:
            pids = [t.pid for t in reversed(self.processes)]
            popens = [t.popen for t in self.processes if t.popen is not None]
            self.processes.clear()
        stop_processes(pids, self.grace_s)
        for popen in popens:
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=1)
        for pid in pids:
            LEDGER.ended(pid)

    def __enter__(self) -> ProcessTracker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` in the main thread (cleanup then runs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def supervised(grace_s: float = DEFAULT_GRACE_S) -> Iterator[ProcessTracker]:
    """The one scope in which numaspark starts processes: everything started through the
    tracker it yields is stopped when the scope ends, by success, failure, Ctrl-C or SIGTERM
    (what is meant to outlive it is released first, ``release_all``)."""
    reap()  # what a numaspark killed by SIGKILL left running, stopped before anything starts
    put_back = restore_left()  # and kernel.numa_balancing, if it held that changed
    if put_back is not None and ledger.notify is not None:
        ledger.notify(put_back)
    with ProcessTracker(grace_s) as tracker, sigterm_raises():
        yield tracker


EXEC_WINDOW_S = 1.0  # how long an empty command line is taken for an exec under way


def runs(pid: int, marker: str) -> bool:
    """Whether process ``pid`` is alive and its command line names ``marker`` (a Spark main
    class: a guard against a recycled pid, or a sign that a launcher has exec'd java)."""
    try:
        process = psutil.Process(pid)
        line = process.cmdline()
        # between two execs (a detached daemon's sh, setsid, env, then java) the kernel shows
        # an empty command line for a moment: asked then, a just-started daemon read as not
        # Spark's, and 'cluster down' left it running. Asked again, briefly; a zombie's
        # stays empty
        deadline = time.monotonic() + EXEC_WINDOW_S
        while not line and time.monotonic() < deadline:
            if process.status() == psutil.STATUS_ZOMBIE:
                return False
            time.sleep(0.02)
            line = process.cmdline()
        return marker in " ".join(line)
    except psutil.Error:
        return False


def wait_for(predicate, timeout_s: float, interval_s: float = 0.25) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return bool(predicate())
