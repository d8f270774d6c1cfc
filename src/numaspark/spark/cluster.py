"""A Spark standalone cluster whose workers, and so their executors, are bound as planned.

The pip package of Spark has no sbin/ start scripts, so the master and each
worker are started directly with ``bin/spark-class``; spark-class execs java,
so the pid is the JVM's. A worker started under ``numactl ...`` passes its
binding on to the executors it forks. The cluster's state (ports, pids, the
placement) is written to ``cluster.json`` in its directory as each process
starts, so a cluster can stay up across runs and ``numaspark cluster down``
can always find what to stop.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from numaspark.errors import NumasparkError, UsageError
from numaspark.placement import Placement, numactl_argv, placement_to_dict
from numaspark.placement.plugin import slots_env
from numaspark.readback.proc import EffectivePlacement, pages_per_node, read_effective
from numaspark.spark.home import LOOPBACK, free_port, spark_env, spark_home
from numaspark.spark.logs import error_line
from numaspark.supervise.processes import ProcessTracker, Tracked, stop_processes, wait_for
from numaspark.units import MIB

CLUSTER_SCHEMA = "numaspark.cluster/1"
STATE_FILE = "cluster.json"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
START_TIMEOUT_S = 90.0  # for the master, then for the workers; NUMASPARK_START_TIMEOUT overrides


def start_timeout() -> float:
    """Seconds the master, then the workers, may take to start (slow or emulated machines)."""
    value = os.environ.get("NUMASPARK_START_TIMEOUT")
    if value is None:
        return START_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise UsageError(f"NUMASPARK_START_TIMEOUT={value!r}: give seconds, e.g. 300")
    return seconds


class ClusterError(NumasparkError):
    exit_code = 1


@dataclass
class StandaloneCluster:
    directory: Path
    host: str
    master_url: str
    master_webui: int
    master_pid: int
    workers: list[dict] = field(default_factory=list)
    placement: dict = field(default_factory=dict)
    # what a cluster on several hosts (spark/remote.py) has and a local one does not: the
    # driver here listens on loopback, and no secret is needed on one host
    driver_address = None
    properties_file = None

    # --- life cycle ---------------------------------------------------------------
    @classmethod
    def start(
        cls,
        placement: Placement,
        directory: Path,
        tracker: ProcessTracker,
        host: str = LOOPBACK,
        on_progress=None,
    ) -> StandaloneCluster:
        """Start a master and one bound worker per planned executor; wait until all are alive."""
        timeout_s = start_timeout()
        directory = directory.resolve()
        directory.mkdir(parents=True, exist_ok=True)
        if (directory / STATE_FILE).exists() and _state_alive(directory):
            raise UsageError(
                f"a cluster is already running in {directory}: reuse it with --cluster {directory} "
                f"or stop it with 'numaspark cluster down {directory}'"
            )
        home = spark_home()
        env = spark_env(host)
        port, webui = free_port(host), free_port(host)
        master = tracker.start(
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
             "--host", host, "--port", str(port), "--webui-port", str(webui)],
            name="master", log=directory / "logs" / "master.log", env=env,
        )  # fmt: skip
        cluster = cls(
            directory=directory,
            host=host,
            master_url=f"spark://{host}:{port}",
            master_webui=webui,
            master_pid=master.pid,
            placement=placement_to_dict(placement),
        )
        cluster._save()
        _progress(on_progress, "master starting")
        if not wait_for(
            lambda: cluster.master_state() is not None or not master.alive(), timeout_s
        ):
            raise ClusterError(
                f"the Spark master did not start in {timeout_s:.0f} s: see {master.log} "
                "(on a slow machine, set NUMASPARK_START_TIMEOUT to more seconds)"
            )
        if not master.alive():
            raise ClusterError(f"the Spark master exited: {error_line(master.log)}")
        for executor in placement.executors:
            work = directory / f"worker-{executor.index}"
            work.mkdir(exist_ok=True)
            wport, wwebui = free_port(host), free_port(host)
            memory_mb = executor.heap // MIB
            argv = [
                *numactl_argv(executor),
                str(home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
                cluster.master_url, "--host", host, "--port", str(wport),
                "--webui-port", str(wwebui), "--cores", str(executor.cores),
                "--memory", f"{memory_mb}m", "--work-dir", str(work),
            ]  # fmt: skip
            # its executors inherit the worker's environment: the affinity plugin's slots
            worker = tracker.start(argv, name=f"worker {executor.index}", log=work / "worker.log",
                                   env={**env, **slots_env(executor.slots)})  # fmt: skip
            cluster.workers.append(
                {
                    "index": executor.index,
                    "pid": worker.pid,
                    "port": wport,
                    "webui": wwebui,
                    "cores": executor.cores,
                    "memory_mb": memory_mb,
                    "work_dir": str(work),
                    "argv": argv,
                    "log": str(worker.log),
                }
            )
            cluster._save()
        _progress(on_progress, f"{len(cluster.workers)} worker(s) starting")
        expected = len(cluster.workers)
        if not wait_for(
            lambda: cluster.alive_workers() >= expected or cluster._dead_worker(), timeout_s
        ):
            raise ClusterError(
                f"only {cluster.alive_workers()} of {expected} workers registered in "
                f"{timeout_s:.0f} s: see the logs in {directory} (on a slow machine, set "
                "NUMASPARK_START_TIMEOUT to more seconds)"
            )
        dead = cluster._dead_worker()
        if dead:
            raise ClusterError(f"worker {dead['index']} exited: {error_line(Path(dead['log']))}")
        return cluster

    @classmethod
    def attach(cls, directory: Path, tracker: ProcessTracker | None = None) -> StandaloneCluster:
        """The cluster left running in ``directory`` by ``numaspark cluster up``."""
        directory = directory.resolve()
        state_path = directory / STATE_FILE
        if not state_path.exists():
            raise UsageError(
                f"no cluster in {directory}: start one with 'numaspark cluster up {directory}'"
            )
        state = json.loads(state_path.read_text())
        cluster = cls(
            directory=directory,
            host=state["host"],
            master_url=state["master_url"],
            master_webui=state["master_webui"],
            master_pid=state["master_pid"],
            workers=state["workers"],
            placement=state["placement"],
        )
        if cluster.master_state() is None:
            raise UsageError(
                f"the cluster in {directory} is not running: 'numaspark cluster down {directory}' "
                f"cleans up, then 'numaspark cluster up {directory}'"
            )
        if tracker is not None:
            tracker.adopt("master", cluster.master_pid)
            for worker in cluster.workers:
                tracker.adopt(f"worker {worker['index']}", worker["pid"])
        return cluster

    def stop(self, grace_s: float = 10.0) -> None:
        stop_processes([w["pid"] for w in self.workers] + [self.master_pid], grace_s)
        (self.directory / STATE_FILE).unlink(missing_ok=True)

    def _save(self) -> None:
        state = {
            "schema": CLUSTER_SCHEMA,
            "host": self.host,
            "master_url": self.master_url,
            "master_webui": self.master_webui,
            "master_pid": self.master_pid,
            "workers": self.workers,
            "placement": self.placement,
            "saved_at": time.time(),
        }
        path = self.directory / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(path)

    # --- what is running --------------------------------------------------------------
    def master_state(self) -> dict | None:
        return master_json(self.host, self.master_webui)

    def alive_workers(self) -> int:
        return alive_workers(self.master_state())

    def _dead_worker(self) -> dict | None:
        return next((w for w in self.workers if not Tracked("worker", w["pid"]).alive()), None)

    def lost(self) -> str | None:
        """Why the cluster can no longer serve, or None: a local cluster loses no host (an
        executor dying over and over is the relaunch watch's to catch)."""
        return None

    def read_effective(self, pid: int, worker: int) -> tuple[EffectivePlacement | None, dict]:
        """Where executor ``pid`` really runs (this host's /proc); no further facts."""
        return read_effective(pid), {}

    def executor_pids(self) -> dict[int, list[int]]:
        """Executor JVMs under each worker (by worker index)."""
        found: dict[int, list[int]] = {}
        for worker in self.workers:
            try:
                children = psutil.Process(worker["pid"]).children(recursive=True)
            except psutil.NoSuchProcess:
                continue
            for child in children:
                try:
                    if EXECUTOR_CLASS in " ".join(child.cmdline()):
                        found.setdefault(worker["index"], []).append(child.pid)
                except psutil.NoSuchProcess:
                    continue
        return found

    def executor_launches(self, app_id: str) -> list[Path]:
        """One directory per executor a worker launched for ``app_id`` (relaunches included)."""
        dirs: list[Path] = []
        for worker in self.workers:
            app_dir = Path(worker["work_dir"]) / app_id
            if app_dir.is_dir():
                dirs.extend(p for p in app_dir.iterdir() if p.is_dir())
        return sorted(dirs, key=lambda p: p.stat().st_mtime)

    def app_ids(self) -> list[str]:
        ids: set[str] = set()
        for worker in self.workers:
            ids.update(p.name for p in Path(worker["work_dir"]).glob("app-*"))
        return sorted(ids)


def master_json(address: str, webui: int) -> dict | None:
    """A standalone master's JSON status page, or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://{address}:{webui}/json/", timeout=2) as r:
            return json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def alive_workers(state: dict | None) -> int:
    """How many workers a master's status page says are alive."""
    return sum(1 for w in (state or {}).get("workers", []) if w.get("state") == "ALIVE")


def _state_alive(directory: Path) -> bool:
    try:
        state = json.loads((directory / STATE_FILE).read_text())
        return psutil.pid_exists(int(state["master_pid"]))
    except (OSError, ValueError, KeyError):
        return False


def stop_local_cluster_dir(directory: Path) -> list[int]:
    """Stop the master and workers a local cluster's state file names (spark/kept.py decides
    which kind a directory holds)."""
    path = directory.resolve() / STATE_FILE
    state = json.loads(path.read_text())
    pids = [w["pid"] for w in state.get("workers", [])] + [state["master_pid"]]
    alive = [p for p in pids if psutil.pid_exists(p) and _is_spark(p)]
    stop_processes(alive)
    path.unlink(missing_ok=True)
    return alive


def _is_spark(pid: int) -> bool:
    """Guard against a recycled pid: only stop JVMs that run Spark."""
    try:
        return "org.apache.spark" in " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


def _progress(callback, message: str) -> None:
    if callback is not None:
        callback(message)


def local_cluster_status(directory: Path) -> dict:
    """The master's view of the cluster in ``directory`` and, per worker, where it really runs:
    its launch prefix, its CPUs and memory policy, its resident pages per node (/proc)."""

    cluster = StandaloneCluster.attach(directory)
    state = cluster.master_state() or {}
    alive = {w.get("port"): w for w in state.get("workers", [])}
    workers = []
    for worker in cluster.workers:
        argv = worker["argv"]
        effective = read_effective(worker["pid"])
        try:
            pages = pages_per_node(Path(f"/proc/{worker['pid']}/numa_maps").read_text())
        except OSError:
            pages = {}
        workers.append({
            "index": worker["index"], "pid": worker["pid"], "cores": worker["cores"],
            "memory_mb": worker["memory_mb"],
            "state": alive.get(worker["port"], {}).get("state", "missing"),
            "prefix": argv[: next(i for i, a in enumerate(argv) if a.endswith("spark-class"))],
            "effective": effective.to_dict() if effective else None,
            "bytes_per_node": {str(n): b for n, b in sorted(pages.items())},
        })  # fmt: skip
    return {"master_url": cluster.master_url, "status": state.get("status"), "workers": workers}
