"""A plain standalone cluster at another address: a network namespace of its own, as another host.

The test makes a network namespace (``nsh5-NNNN``) joined to this one by a veth
pair on an address range of its own (10.215.N.0/24, N from the test's pid): this
side is 10.215.N.1, the namespace 10.215.N.2. A Master and a Worker start in the
namespace with Spark's own classes (``spark-class org.apache.spark.deploy...``), on
that address, as a user would start them on another host. They share this
machine's CPUs, memory, files and pid numbers: they prove addresses and routes,
never speed. Everything is stopped and removed on exit, processes first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from prereq import require

from numaspark.spark.cluster import alive_workers, master_json
from numaspark.spark.home import spark_env, spark_home

NEEDS = ("root", "ip")
MASTER_PORT, MASTER_UI, WORKER_PORT, WORKER_UI = 7077, 8080, 7078, 8081


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class NamespaceCluster:
    """``with NamespaceCluster(tmp) as cluster:`` a master and a worker at ``cluster.address``."""

    def __init__(self, directory: Path, cores: int = 1, memory: str = "1g") -> None:
        require(*NEEDS)
        self.dir = directory
        self.cores, self.memory = cores, memory
        tag = f"{os.getpid() % 10000:04d}"
        subnet = f"10.215.{os.getpid() % 250 + 1}"
        self.netns = f"nsh5-{tag}"
        self.veth = f"vh5{tag}"
        self.here = f"{subnet}.1"  # this side of the pair (the root namespace)
        self.address = f"{subnet}.2"  # the cluster's host
        self.master = f"spark://{self.address}:{MASTER_PORT}"
        self.ui = f"http://{self.address}:{MASTER_UI}"
        self.daemons: list[subprocess.Popen] = []

    def __enter__(self) -> NamespaceCluster:
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self) -> None:
        _ip("netns", "add", self.netns)
        _ip("link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.netns)
        _ip("addr", "add", f"{self.here}/24", "dev", self.veth)
        _ip("link", "set", self.veth, "up")
        _ip("-n", self.netns, "addr", "add", f"{self.address}/24", "dev", "eth0")
        _ip("-n", self.netns, "link", "set", "eth0", "up")
        _ip("-n", self.netns, "link", "set", "lo", "up")
        spark_class = str(spark_home() / "bin" / "spark-class")
        env = spark_env(self.address)
        work = self.dir / "work"
        work.mkdir(parents=True, exist_ok=True)
        for name, argv in (
            ("master", ["org.apache.spark.deploy.master.Master", "--host", self.address,
                        "--port", str(MASTER_PORT), "--webui-port", str(MASTER_UI)]),
            ("worker", ["org.apache.spark.deploy.worker.Worker", self.master,
                        "--host", self.address, "--port", str(WORKER_PORT),
                        "--webui-port", str(WORKER_UI), "--cores", str(self.cores),
                        "--memory", self.memory, "--work-dir", str(work)]),
        ):  # fmt: skip
            log = (self.dir / f"{name}.log").open("w")
            self.daemons.append(subprocess.Popen(
                ["ip", "netns", "exec", self.netns, spark_class, *argv], env=env,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))  # fmt: skip
        deadline = time.monotonic() + 120
        while alive_workers(master_json(self.address, MASTER_UI)) < 1:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster in {self.netns} did not start: see {self.dir}")
            time.sleep(0.5)

    def pids(self) -> list[int]:
        """Every process in the namespace (the master, the worker, their executors)."""
        out = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True,
                             text=True, check=False).stdout  # fmt: skip
        return [int(p) for p in out.split()]

    def executors(self) -> list[int]:
        """The executor JVMs running in the namespace now."""
        found = []
        for pid in self.pids():
            with contextlib.suppress(OSError):
                if b"CoarseGrainedExecutorBackend" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
        return found

    def close(self) -> None:
        for popen in self.daemons:  # SIGTERM first: the worker stops its executors
            if popen.poll() is None:
                popen.terminate()
        for popen in self.daemons:
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=15)
        for _ in range(2):  # anything left, and what it started meanwhile
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        for popen in self.daemons:
            if popen.poll() is None:
                popen.kill()
            popen.wait(timeout=10)
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True, check=False)
