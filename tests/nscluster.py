"""Plain standalone clusters on other hosts made of namespaces (tests/netns.py).

A Master and Workers start there with Spark's own classes (``spark-class
org.apache.spark.deploy...``), on the hosts' addresses, as a user would start them on their
hosts:

- ``NamespaceCluster``: a Master and one Worker on one host, ``nsh5-NNNNN`` at 10.215.N.2,
  joined to this machine (10.215.N.1) by a veth pair;
- ``SparkHosts``: a Master and a Worker on the first of two hosts and a Worker on the second,
  each with its own hostname, /tmp and /etc/hosts, on a bridge at 10.216.N.0/24 (this machine
  .1, the hosts .11 and .12).

They share this machine's CPUs, memory, Spark and Java: they prove addresses, routes, paths
and binding, never speed. Everything is stopped and removed on exit, processes first.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

from netns import HostNetwork, NamespaceHost, OtherHost

from numaspark.spark.home import spark_env, spark_home
from numaspark.spark.standalone import alive_workers, master_json

MASTER_PORT, MASTER_UI, WORKER_PORT, WORKER_UI = 7077, 8080, 7078, 8081
EXECUTOR_CLASS = b"CoarseGrainedExecutorBackend"


def host_env(address: str) -> dict[str, str]:
    """A daemon's environment on a host: Spark's, without this machine's venv (its bin on the
    PATH, PYTHONPATH), which the hosts of a real cluster do not have."""
    env = spark_env(address)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    venv = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv)
    return env


def start_daemon(host: NamespaceHost, name: str, argv: list[str], logs: Path) -> subprocess.Popen:
    """``spark-class ARGV`` on ``host``, its output in ``logs/NAME.log`` (here)."""
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{name}.log").open("w") as log:
        return subprocess.Popen(
            host.argv([str(spark_home() / "bin" / "spark-class"), *argv]),
            env=host_env(host.address),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def master_argv(address: str) -> list[str]:
    return [
        "org.apache.spark.deploy.master.Master",
        "--host",
        address,
        "--port",
        str(MASTER_PORT),
        "--webui-port",
        str(MASTER_UI),
    ]


def worker_argv(master: str, address: str, cores: int, memory: str, work: str) -> list[str]:
    return [
        "org.apache.spark.deploy.worker.Worker",
        master,
        "--host",
        address,
        "--port",
        str(WORKER_PORT),
        "--webui-port",
        str(WORKER_UI),
        "--cores",
        str(cores),
        "--memory",
        memory,
        "--work-dir",
        work,
    ]


def wait_for_workers(address: str, count: int, logs: Path, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while alive_workers(master_json(address, MASTER_UI)) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the cluster at {address} did not start: see {logs}")
        time.sleep(0.5)


def executors_on(host: NamespaceHost) -> list[int]:
    """The executor JVMs running on ``host`` now."""
    found = []
    for pid in host.pids():
        with contextlib.suppress(OSError):
            if EXECUTOR_CLASS in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def stop_daemons(daemons: list[subprocess.Popen], hosts: list[NamespaceHost]) -> None:
    """SIGTERM first (a worker stops its executors), then anything left on the hosts."""
    for popen in daemons:
        if popen.poll() is None:
            popen.terminate()
    for popen in daemons:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=15)
    for host in hosts:
        host.kill_all(rounds=2)
    for popen in daemons:
        if popen.poll() is None:
            popen.kill()
        popen.wait(timeout=10)


class NamespaceCluster:
    """``with NamespaceCluster(tmp) as cluster:`` a master and a worker at ``cluster.address``."""

    def __init__(self, directory: Path, cores: int = 1, memory: str = "1g") -> None:
        self.dir = directory
        self.cores, self.memory = cores, memory
        self.host = OtherHost(second=215, prefix="nsh5")
        self.netns, self.here, self.address = self.host.netns, self.host.here, self.host.address
        self.master = f"spark://{self.address}:{MASTER_PORT}"
        self.ui = f"http://{self.address}:{MASTER_UI}"
        self.daemons: list[subprocess.Popen] = []

    def __enter__(self) -> NamespaceCluster:
        try:
            self.host.__enter__()
            work = self.dir / "work"
            work.mkdir(parents=True, exist_ok=True)
            self.daemons.append(
                start_daemon(self.host, "master", master_argv(self.address), self.dir)
            )
            self.daemons.append(
                start_daemon(
                    self.host,
                    "worker",
                    worker_argv(self.master, self.address, self.cores, self.memory, str(work)),
                    self.dir,
                )
            )
            wait_for_workers(self.address, 1, self.dir)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pids(self) -> list[int]:
        """Every process in the namespace (the master, the worker, their executors)."""
        return self.host.pids()

    def executors(self) -> list[int]:
        """The executor JVMs running in the namespace now."""
        return executors_on(self.host)

    def close(self) -> None:
        stop_daemons(self.daemons, [self.host])
        self.host.close()


class SparkHosts:
    """``with SparkHosts(tmp) as cluster:`` two hosts named ``spark-a`` and ``spark-b``, a
    Master on the first and a Worker of ``cores`` and ``memory`` on each. Each host's /tmp
    is ``tmp/view/NAME`` here, its workers' directory ``/tmp/work`` there."""

    NAMES = ("spark-a", "spark-b")

    def __init__(self, directory: Path, cores: int = 1, memory: str = "1g") -> None:
        self.dir = directory
        self.cores, self.memory = cores, memory
        # Spark is installed on each host at the same path as here (even a venv under /tmp)
        self.network = HostNetwork(
            2,
            "nsh6",
            216,
            names=list(self.NAMES),
            own_view=directory / "view",
            installed=[spark_home()],
        )
        self.hosts = self.network.hosts
        self.here = self.network.here
        self.address = self.hosts[0].address
        self.master = f"spark://{self.address}:{MASTER_PORT}"
        self.ui = f"http://{self.address}:{MASTER_UI}"
        self.daemons: list[subprocess.Popen] = []

    def __enter__(self) -> SparkHosts:
        try:
            self.network.__enter__()
            first = self.hosts[0]
            self.daemons.append(
                start_daemon(first, "master", master_argv(first.address), self.dir / "logs")
            )
            for host in self.hosts:
                self.daemons.append(
                    start_daemon(
                        host,
                        f"worker-{host.hostname}",
                        worker_argv(
                            self.master, host.address, self.cores, self.memory, "/tmp/work"
                        ),
                        self.dir / "logs",
                    )
                )
            wait_for_workers(self.address, len(self.hosts), self.dir / "logs")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def work(self, host: NamespaceHost) -> Path:
        """The host's workers' directory, as seen from here."""
        return host.root / "work"

    def executors(self) -> dict[str, list[int]]:
        """The executor JVMs running now, by hostname."""
        return {host.hostname: executors_on(host) for host in self.hosts}

    def close(self) -> None:
        stop_daemons(self.daemons, self.hosts)
        self.network.close()
