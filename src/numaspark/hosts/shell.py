"""A host's shell: what numaspark does on a host, over SSH or on this machine, in one set of
operations, so one cluster (spark/standalone.py) starts, watches and stops its daemons on either.

SSH is the system ``ssh`` client, run with argv lists. Why not a library
(paramiko, asyncssh): the system client already honours the user's
``~/.ssh/config``, agent and known_hosts; ``ControlMaster`` multiplexes every
command to a host over one connection; and a remote process we keep running is
one local ``ssh`` process, which the process tracker stops like any other and
whose end (a dropped connection included) the remote side sees as the end of
its stdin. Remote commands are argv lists too, quoted with ``shlex.join`` for
the remote shell, never strings built from input.

`Local` runs the same argv lists here without a connection. The operations a
run's watcher repeats every half second (the executors under each worker, a
process's /proc) read /proc in this process instead of forking a command, so
watching a cluster here costs what it cost before there was one cluster type.
"""

from __future__ import annotations

import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import psutil

from numaspark.errors import NumasparkError
from numaspark.supervise.processes import refuse_jvm, runs
from numaspark.supervise.stop import stop_processes

CONNECT_TIMEOUT_S = 5
LOCAL = "local"  # the name of this machine as a cluster's host

# sh scripts run on a host; their values arrive as positional parameters, never spliced in.
# GONE: which of the pids given have ended.
GONE = 'for p in "$@"; do kill -0 "$p" 2>/dev/null || echo "$p"; done'
# STOP: TERM each Spark pid given and its descendants, wait up to 10 s, then KILL what is left.
STOP = (
    'all=""; add() { all="$all $1"; for c in $(ps -o pid= --ppid "$1"); do add "$c"; done; }; '
    'for p in "$@"; do grep -qs org.apache.spark "/proc/$p/cmdline" && add "$p"; done; '
    '[ -z "$all" ] && exit 0; kill -TERM $all 2>/dev/null; i=0; '
    'while [ $i -lt 100 ]; do left=""; for p in $all; do [ -d "/proc/$p" ] && left=1; done; '
    '[ -z "$left" ] && exit 0; sleep 0.1; i=$((i+1)); done; kill -KILL $all 2>/dev/null; '
    "exit 0"
)
READ_PROC = 'cat "/proc/$1/status" && echo @@numa_maps@@ && cat "/proc/$1/numa_maps"'
FREE_PORTS = (
    "import socket,sys\nfor _ in range(int(sys.argv[2])):\n"
    " s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1]); s.close()"
)


class HostError(NumasparkError):
    """A host cannot be reached, or a command on it failed."""

    exit_code = 1


@dataclass(frozen=True)
class Host:
    name: str  # what results and tables call it
    address: str  # what SSH connects to and Spark binds to on it
    user: str | None = None
    port: int = 22
    key: Path | None = None
    known_hosts: Path | None = None  # default: the user's own
    spark_home: str | None = None  # default: this machine's Spark
    python: str | None = None  # default: this machine's Python

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.address}" if self.user else self.address


def python_on(host: Host) -> str:
    return host.python or sys.executable


class Shell(Protocol):
    """What a cluster does on one of its hosts."""

    host: Host
    local: bool  # this machine: the cluster's directory and work dirs are readable here

    def argv(self, remote: list[str]) -> list[str]:
        """The argv, run here, that runs ``remote`` on the host (a long-lived process)."""

    def run(
        self,
        remote: list[str],
        timeout_s: float = 60.0,
        what: str | None = None,
        input: str | None = None,
    ) -> str:
        """Run ``remote`` to its end; its stdout. A failure is one `HostError` line."""

    def gone(self, pids: list[int]) -> set[int]:
        """Which of ``pids`` have ended."""

    def children(self, ppids: list[int]) -> list[tuple[int, int, str]]:
        """(parent, pid, command line) of every child of ``ppids``."""

    def read_proc(self, pid: int) -> tuple[str, str] | None:
        """The text of ``/proc/PID/status`` and ``/proc/PID/numa_maps``; None when it is gone."""

    def stop(self, pids: list[int]) -> None:
        """TERM each Spark JVM among ``pids`` and its descendants; KILL what is left after 10 s."""

    def free_ports(self, address: str, count: int) -> list[int]:
        """Ports free now on ``address``, chosen by the host's own OS."""

    def close(self) -> None: ...


@dataclass
class Ssh:
    """Commands on one host over the system ssh client, multiplexed over one connection."""

    host: Host
    control_dir: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="numaspark-ssh-"))
    )
    local = False

    def options(self) -> list[str]:
        options = [
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={self.control_dir}/%C",
            "-o",
            "ControlPersist=60",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-p",
            str(self.host.port),
        ]
        if self.host.key is not None:
            options += ["-i", str(self.host.key), "-o", "IdentitiesOnly=yes"]
        if self.host.known_hosts is not None:
            options += ["-o", f"UserKnownHostsFile={self.host.known_hosts}"]
        return options

    def argv(self, remote: list[str]) -> list[str]:
        """The local argv that runs ``remote`` (an argv list) on the host."""
        return ["ssh", *self.options(), "-T", self.host.destination, "--", shlex.join(remote)]

    def run(
        self,
        remote: list[str],
        timeout_s: float = 60.0,
        what: str | None = None,
        input: str | None = None,
    ) -> str:
        """Run ``remote`` to its end (``input`` on its stdin); its stdout. A failure is one
        `HostError` line."""
        what = what or remote[0]
        feed = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
        try:
            done = subprocess.run(
                self.argv(remote),
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
                **feed,
            )
        except subprocess.TimeoutExpired:
            raise HostError(
                f"{self.host.name}: {what} did not finish in {timeout_s:.0f} s"
            ) from None
        if done.returncode == 255:
            raise HostError(
                f"cannot reach {self.host.name} ({self.host.destination} port "
                f"{self.host.port}) over ssh: {_last(done.stderr)}"
            )
        if done.returncode != 0:
            raise HostError(
                f"{self.host.name}: {what} failed (exit {done.returncode}): {_last(done.stderr)}"
            )
        return done.stdout

    def gone(self, pids: list[int]) -> set[int]:
        out = self.run(["sh", "-c", GONE, "sh", *map(str, pids)], timeout_s=10)
        return {int(p) for p in out.split()}

    def children(self, ppids: list[int]) -> list[tuple[int, int, str]]:
        out = self.run(
            ["ps", "-o", "ppid=,pid=,args=", "--ppid", ",".join(map(str, ppids))],
            timeout_s=10,
            what="ps",
        )
        found = []
        for line in out.splitlines():
            parts = line.split(None, 2)
            if len(parts) == 3:
                found.append((int(parts[0]), int(parts[1]), parts[2]))
        return found

    def read_proc(self, pid: int) -> tuple[str, str] | None:
        try:
            out = self.run(
                ["sh", "-c", READ_PROC, "sh", str(pid)], timeout_s=10, what="reading /proc"
            )
        except HostError:
            return None
        status, _, maps = out.partition("@@numa_maps@@\n")
        return status, maps

    def stop(self, pids: list[int]) -> None:
        self.run(["sh", "-c", STOP, "sh", *map(str, pids)], timeout_s=30, what="stopping Spark")

    def free_ports(self, address: str, count: int) -> list[int]:
        out = self.run(
            [python_on(self.host), "-c", FREE_PORTS, address, str(count)],
            what="choosing free ports",
        )
        return [int(p) for p in out.split()]

    def close(self) -> None:
        """End the shared connection (a no-op when none is open)."""
        subprocess.run(
            ["ssh", *self.options(), "-O", "exit", self.host.destination],
            capture_output=True,
            timeout=10,
            check=False,
        )
        shutil.rmtree(self.control_dir, ignore_errors=True)


@dataclass
class Local:
    """This machine as a cluster's host: `Ssh`'s operations without a connection."""

    host: Host
    local = True

    def argv(self, remote: list[str]) -> list[str]:
        return list(remote)

    def run(
        self,
        remote: list[str],
        timeout_s: float = 60.0,
        what: str | None = None,
        input: str | None = None,
    ) -> str:
        what = what or remote[0]
        refuse_jvm(remote)
        feed = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
        try:
            done = subprocess.run(
                list(remote), capture_output=True, text=True, timeout=timeout_s, check=False, **feed
            )
        except subprocess.TimeoutExpired:
            raise HostError(f"{what} did not finish in {timeout_s:.0f} s") from None
        if done.returncode != 0:
            raise HostError(f"{what} failed (exit {done.returncode}): {_last(done.stderr)}")
        return done.stdout

    def gone(self, pids: list[int]) -> set[int]:
        return {p for p in pids if not _running(p)}

    def children(self, ppids: list[int]) -> list[tuple[int, int, str]]:
        found = []
        for ppid in ppids:
            try:
                kids = psutil.Process(ppid).children()
            except psutil.NoSuchProcess:
                continue
            for child in kids:
                try:
                    found.append((ppid, child.pid, " ".join(child.cmdline())))
                except psutil.Error:
                    continue
        return found

    def read_proc(self, pid: int) -> tuple[str, str] | None:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return None
        try:
            maps = Path(f"/proc/{pid}/numa_maps").read_text()
        except OSError:
            maps = ""
        return status, maps

    def stop(self, pids: list[int]) -> None:
        stop_processes([p for p in pids if runs(p, "org.apache.spark")])  # not a recycled pid

    def free_ports(self, address: str, count: int) -> list[int]:
        # bound together, then released: the OS gives ``count`` different ports
        sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
        try:
            for sock in sockets:
                sock.bind((address, 0))
            return [s.getsockname()[1] for s in sockets]
        finally:
            for sock in sockets:
                sock.close()

    def close(self) -> None:
        return None


def shell_for(host: Host, local: bool) -> Shell:
    return Local(host) if local else Ssh(host)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _last(stderr: str) -> str:
    lines = [
        line for line in stderr.strip().splitlines() if "Warning: Permanently added" not in line
    ]
    return lines[-1] if lines else "no message"
