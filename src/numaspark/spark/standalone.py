"""A Spark standalone cluster whose workers, and so their executors, are bound as planned: on
this machine, or on several hosts over SSH; one type, one life cycle, one state file.

`Cluster` is that life cycle, whatever its kind: started (watched, or detached when kept by
``numaspark cluster up``), recorded, watched, stopped (``stop``; ``numaspark cluster down``
by pid) and asked what runs. What a kind does its own way is its kind's: a master and a
bound worker per planned executor (spark/standalone_kind.py, `Standalone`), or a mini YARN,
one launcher JVM on this machine (``kind = "yarn-mini"``: spark/yarnmini.py, `MiniYarn`).
Its daemons' command lines and the ``sh`` scripts that start them are spark/daemons.py's;
its state file (``cluster.json``, and earlier versions') is spark/cluster_state.py's; where
an executor or a worker really runs is read from its host's /proc (readback/executors.py).
A cluster on this machine listens on loopback unless asked.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from numaspark import records
from numaspark.errors import UsageError
from numaspark.hosts import LOCAL, Host, HostError, Shell, python_on, shell_for
from numaspark.placement import Binder, Placement, placement_to_dict
from numaspark.readback.executors import EXECUTOR_CLASS, effective_of, executors_under
from numaspark.readback.proc import EffectivePlacement
from numaspark.readback.tree import CLK_TCK, READ_TREE, ProcText, parse_tree_text, read_tree_here
from numaspark.spark.cluster_state import (
    CLUSTER_SCHEMA,
    SHAPE,
    STANDALONE,
    STATE_FILE,
    YARN_MINI,
    forget_state,
    has_state,
    load_state,
    save_state,
)
from numaspark.spark.daemons import (
    SECRET_FILE,
    START_TIMEOUT_S,
    ClusterError,
    daemon_env,
    pid_in,
    start_detached,
    start_timeout,
    start_watched,
)
from numaspark.spark.home import LOOPBACK, check_java
from numaspark.spark.logs import error_line
from numaspark.spark.standalone_kind import STANDALONE_KIND, Standalone
from numaspark.spark.standalone_master import alive_workers, master_json
from numaspark.spark.yarnmini import MINI_YARN, MiniYarn
from numaspark.supervise.processes import ProcessTracker, Tracked, wait_for

# what other modules import from here, at home in cluster_state.py, daemons.py,
# standalone_master.py and readback/executors.py now
__all__ = [
    "CLUSTER_SCHEMA",
    "EXECUTOR_CLASS",
    "START_TIMEOUT_S",
    "STATE_FILE",
    "Cluster",
    "alive_workers",
    "master_json",
    "start_timeout",
    "stop_cluster_state",
]


@dataclass
class StoppedDaemons:
    """What ``Cluster.stop`` did: the daemons it stopped, and what it could not reach."""

    pids: list[int]
    problems: list[str]


@dataclass
class Cluster:
    """A cluster on this machine (``local``) or on hosts over SSH, of a ``kind``: what its
    state file keeps, and what a run's watcher asks of it."""

    directory: Path
    hosts: list[Host]
    local: bool
    master_url: str = ""
    master_host: str = ""
    master_webui: int = 0
    driver_address: str | None = None  # where executors reach the driver (None: loopback here)
    processes: list[dict] = field(default_factory=list)  # master first, then the workers
    placement: dict = field(default_factory=dict)
    encrypt: bool = False
    kept: bool = False
    kind: str = STANDALONE  # or YARN_MINI: master_url "yarn", master_webui the RM's web port
    _shells: dict[str, Shell] = field(default_factory=dict, repr=False)
    _binders: dict[str, Binder] = field(default_factory=dict, repr=False)
    _clients: dict[int, Tracked] = field(default_factory=dict, repr=False)  # by process index

    schema: ClassVar[str] = CLUSTER_SCHEMA
    __json__: ClassVar[records.Shape] = SHAPE  # its state file (cluster_state.py)

    @property
    def _kind(self) -> Standalone | MiniYarn:
        """What this kind of cluster does its own way (an unknown kind: as standalone)."""
        return KINDS.get(self.kind, STANDALONE_KIND)

    # --- life cycle ---------------------------------------------------------------
    @classmethod
    def here(
        cls,
        placement: Placement,
        directory: Path,
        tracker: ProcessTracker,
        host: str = LOOPBACK,
        kept: bool = False,
        on_progress=None,
    ) -> Cluster:
        """A cluster on this machine: the master and one bound worker per planned executor,
        listening on ``host``."""
        return cls.start(
            [(Host(LOCAL, host), placement)],
            placement,
            directory,
            tracker,
            local=True,
            kept=kept,
            on_progress=on_progress,
        )

    @classmethod
    def start(
        cls,
        parts: list[tuple[Host, Placement]],
        placement: Placement,
        directory: Path,
        tracker: ProcessTracker,
        local: bool = False,
        driver_address: str | None = None,
        encrypt: bool = False,
        kept: bool = False,
        on_progress=None,
    ) -> Cluster:
        """The master on the first host, a bound worker per planned executor on each host
        (``parts``: each host with its own plan; ``placement``: all of them merged); returns
        once every worker has registered with the master. A cluster that fails half-way is
        stopped whole."""
        if local:
            check_java()  # one line for a missing or old Java (hosts: their own, at start)
        directory = _claimed(directory)
        cluster = cls(
            directory=directory,
            hosts=[h for h, _ in parts],
            local=local,
            master_host=parts[0][0].name,
            driver_address=driver_address,
            placement=placement_to_dict(placement),
            encrypt=encrypt,
            kept=kept,
        )
        try:
            STANDALONE_KIND.start(cluster, parts, tracker, on_progress)
        except BaseException as failure:
            _stop_after(cluster, failure)
            raise
        return cluster

    @classmethod
    def yarn_mini(
        cls,
        directory: Path,
        tracker: ProcessTracker,
        nodemanagers: int = 1,
        memory_mb: int = 4096,
        vcores: int = 2,
        minimum_mb: int = 128,
        host: str = LOOPBACK,
        kept: bool = False,
        on_progress=None,
        site: Path | None = None,
    ) -> Cluster:
        """A mini YARN on this machine: a ResourceManager and ``nodemanagers`` NodeManagers of
        ``memory_mb`` and ``vcores`` each, listening on ``host``; returns once every
        NodeManager has registered and ``directory/conf/yarn-site.xml`` is written. One that
        fails half-way is stopped whole."""
        directory = _claimed(directory)
        argv = MINI_YARN.argv(directory, nodemanagers, memory_mb, vcores, minimum_mb, host, site)
        cluster = cls(
            directory=directory,
            hosts=[Host(LOCAL, host)],
            local=True,
            master_url="yarn",
            master_host=LOCAL,
            kept=kept,
            kind=YARN_MINI,
        )
        try:
            MINI_YARN.start(
                cluster,
                tracker,
                argv,
                on_progress,
                site,
                nodemanagers=nodemanagers,
                memory_mb=memory_mb,
                vcores=vcores,
                minimum_mb=minimum_mb,
            )
        except BaseException as failure:
            _stop_after(cluster, failure)
            raise
        return cluster

    @property
    def hadoop_conf_dir(self) -> Path | None:
        """A mini YARN's HADOOP_CONF_DIR (its yarn-site.xml); None for a standalone cluster."""
        return self._kind.conf_dir(self)

    def _start(
        self,
        tracker: ProcessTracker,
        host: Host,
        name: str,
        argv: list[str],
        env: dict[str, str] | None = None,
        **facts,
    ) -> None:
        """Start ``argv`` on ``host`` (watched, or detached when the cluster is kept); record
        its pid in the state file as soon as the host says it."""
        log = self.directory / "logs" / f"{name.replace(' ', '-')}-{host.name}.log"
        command = [*daemon_env(host, env), *argv]
        shell = self.shell(host)
        entry = {"name": name, "host": host.name, "argv": argv, "log": str(log), **facts}
        self.processes.append(entry)
        if self.kept:
            entry["pid"] = start_detached(shell, name, log, command)
            self._save()
            return
        client = start_watched(tracker, shell, f"{name} on {host.name}", log, command)
        self._clients[len(self.processes) - 1] = client
        self._save()
        if not wait_for(lambda: pid_in(log) is not None or not client.alive(), 30):
            raise ClusterError(f"{name} on {host.name} did not start: see {log}")
        if pid_in(log) is None:
            raise ClusterError(self.lost() or f"{name} on {host.name} did not start: see {log}")
        entry["pid"], entry["client"] = pid_in(log), client.pid
        self._save()

    @classmethod
    def from_state(cls, directory: Path) -> Cluster:
        """The cluster its state file describes (running or not, even half-started)."""
        return load_state(cls, directory.resolve())

    @classmethod
    def attach(cls, directory: Path) -> Cluster:
        """The running cluster in ``directory`` (``numaspark cluster up``)."""
        cluster = cls.from_state(directory)
        if cluster.master_state() is None:
            raise UsageError(
                f"the cluster in {cluster.directory} is not running: 'numaspark "
                f"cluster down {directory}' cleans up, then 'numaspark cluster up "
                f"{directory}'"
            )
        return cluster

    def stop(self) -> StoppedDaemons:
        """Stop every daemon on every host (workers first), each with its descendants; then
        the local processes that watched them. The state file goes once nothing is left."""
        problems: list[str] = []
        stopped = self._kind.stop_daemons(self, problems)
        for client in self._clients.values():
            with contextlib.suppress(OSError, AttributeError):
                client.popen.stdin.close()
        for index, client in self._clients.items():
            try:
                client.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:  # its host no longer answers: said, and ended
                client.popen.kill()
                client.popen.wait()
                host = self.processes[index].get("host", "a host")
                problems.append(f"the ssh client watching {host} did not end in 15 s: killed")
        self.close_shells()
        stopped += self._kind.stop_rest(self)
        if not problems:  # else kept: 'cluster down' can try again once the host answers
            forget_state(self.directory)
        return StoppedDaemons(stopped, problems)

    def pids_by_host(self) -> dict[str, list[int]]:
        """The daemons' pids on each host, workers before the master (the order to stop)."""
        by_host: dict[str, list[int]] = {}
        for entry in reversed(self.processes):
            if entry.get("pid"):
                by_host.setdefault(entry["host"], []).append(int(entry["pid"]))
        return by_host

    def saved_at(self) -> float:
        """When its state is written (seconds since the epoch): stored, never read back."""
        return time.time()

    def _save(self) -> None:
        save_state(self)

    # --- what is running (the run's watcher asks) --------------------------------------
    def shell(self, host: Host) -> Shell:
        if host.name not in self._shells:
            self._shells[host.name] = shell_for(host, self.local)
        return self._shells[host.name]

    def close_shells(self) -> None:
        for shell in self._shells.values():
            shell.close()

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    def binder(self, host: Host) -> Binder:
        """What binds ``host``'s workers: this machine's binder here; on another host, its
        numactl, else numaspark's helper run by that host's Python (the wheel is enough)."""
        if self.local:
            return Binder.here()
        if host.name not in self._binders:
            found = self.shell(host).run(
                ["sh", "-c", "command -v numactl || true"], what="looking for numactl"
            )
            self._binders[host.name] = Binder.on_host(found.strip() or None, python_on(host))
        return self._binders[host.name]

    @property
    def workers(self) -> list[dict]:
        return [p for p in self.processes if p["name"].startswith("worker")]

    @property
    def properties_file(self) -> Path | None:
        """The driver's secret (spark-submit --properties-file); None on this machine alone."""
        return None if self.local else self.directory / SECRET_FILE

    def master_state(self) -> dict | None:
        if not self.master_webui:
            return None
        return self._kind.master_state(self)

    def alive_workers(self) -> int:
        return alive_workers(self.master_state())

    def lost(self) -> str | None:
        """Why the cluster can no longer serve as planned (a host unreachable, a daemon gone),
        or None."""
        detached = [
            p for i, p in enumerate(self.processes) if i not in self._clients and p.get("pid")
        ]
        for name in dict.fromkeys(p["host"] for p in detached):
            mine = [p for p in detached if p["host"] == name]
            try:
                gone = self.shell(self.host(name)).gone([int(p["pid"]) for p in mine])
            except HostError as exc:
                return str(exc)
            for entry in (p for p in mine if int(p["pid"]) in gone):
                return f"{entry['name']}{self._on(name)} exited: see {entry['log']}"
        for index, client in self._clients.items():
            if client.alive():
                continue
            entry = self.processes[index]
            try:
                self.shell(self.host(entry["host"])).run(["true"], timeout_s=10)
            except HostError as exc:
                return f"{exc}: its {entry['name']} is gone with the connection"
            return (
                f"{entry['name']}{self._on(entry['host'])} exited: {error_line(Path(entry['log']))}"
            )
        return None

    def _on(self, host: str) -> str:
        return "" if self.local else f" on {host}"

    def executor_pids(self) -> dict[int, list[int]]:
        """Executor JVMs under each worker (by worker index), asked of each host."""
        found: dict[int, list[int]] = {}
        for name in dict.fromkeys(w["host"] for w in self.workers):
            workers = {
                int(w["pid"]): w["index"]
                for w in self.workers
                if w["host"] == name and w.get("pid")
            }
            try:
                children = self.shell(self.host(name)).children(list(workers))
            except HostError:
                continue  # a host gone: lost() says so
            for index, pids in executors_under(children, workers).items():
                found.setdefault(index, []).extend(pids)
        return found

    def read_effective(self, pid: int, worker: int) -> tuple[EffectivePlacement | None, dict]:
        """Where ``pid`` (an executor under ``worker``, or the worker) really runs, read from
        its host's /proc; and, on hosts, its host and resident bytes per node."""
        entry = next(w for w in self.workers if w["index"] == worker)
        text = self.shell(self.host(entry["host"])).read_proc(pid)
        return effective_of(pid, text, None if self.local else entry["host"])

    def read_tree(self, pid: int, worker: int) -> tuple[list[ProcText], int]:
        """The descendants of ``pid`` (an executor under ``worker``) as their host's /proc
        shows them (PySpark's Python workers among them), and that host's clock ticks."""
        if self.local:
            return read_tree_here(pid), CLK_TCK
        entry = next(w for w in self.workers if w["index"] == worker)
        try:
            text = self.shell(self.host(entry["host"])).run(
                ["sh", "-c", READ_TREE, "sh", str(pid)], timeout_s=10, what="reading /proc"
            )
        except HostError:
            return [], CLK_TCK  # the host gone: lost() says so
        return parse_tree_text(text)

    def app_ids(self) -> list[str]:
        """The applications the workers here ran (their work directories); on hosts, none:
        the work directories are there, and relaunch loops are not watched there."""
        ids: set[str] = set()
        for worker in self.workers if self.local else ():
            ids.update(p.name for p in Path(worker["work_dir"]).glob("app-*"))
        return sorted(ids)

    def executor_launches(self, app_id: str) -> list[Path]:
        """One directory per executor a worker here launched for ``app_id`` (relaunches too)."""
        dirs: list[Path] = []
        for worker in self.workers if self.local else ():
            app_dir = Path(worker["work_dir"]) / app_id
            if app_dir.is_dir():
                dirs.extend(p for p in app_dir.iterdir() if p.is_dir())
        return sorted(dirs, key=lambda p: p.stat().st_mtime)

    def status(self) -> dict:
        """``cluster status``: the master's view and, per worker, where it really runs: its
        launch prefix, its CPUs and memory policy, its resident pages per node; for a mini
        YARN, the ResourceManager's view of its NodeManagers."""
        return self._kind.status(self)


KINDS: dict[str, Standalone | MiniYarn] = {STANDALONE: STANDALONE_KIND, YARN_MINI: MINI_YARN}


def _refuse_running(directory: Path) -> None:
    """A directory whose cluster still runs is not started over; a dead one's state is."""
    if not has_state(directory):
        return
    try:
        old = Cluster.from_state(directory)
        # one question per host: which of its pids have ended
        running = any(
            set(pids) - old.shell(old.host(host)).gone(pids)
            for host, pids in old.pids_by_host().items()
        )
    except (UsageError, HostError, KeyError, ValueError, StopIteration):
        running = True  # not readable, or a host not answering: not ours to overwrite
    if running:
        raise UsageError(
            f"a cluster is already running in {directory}: reuse it with "
            f"--cluster {directory} or stop it with 'numaspark cluster down "
            f"{directory}'"
        )


def stop_cluster_state(directory: Path) -> list[int]:
    """``cluster down``: every pid a cluster's state names, stopped on its host, even a
    half-started cluster's; a host that does not answer is one error line."""
    stopped = Cluster.from_state(directory).stop()
    if stopped.problems:
        raise HostError(
            "; ".join(stopped.problems) + f" (run 'numaspark cluster down "
            f"{directory}' again once the host answers)"
        )
    return stopped.pids


def _claimed(directory: Path) -> Path:
    """``directory``, resolved and made, for a new cluster: refused if one still runs there."""
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    _refuse_running(directory)
    return directory


def _stop_after(cluster: Cluster, failure: BaseException) -> None:
    """Stop what a failed start had started; a stop that fails too is kept beside the start's
    failure (the one the user reads), never swallowed."""
    try:
        stopped = cluster.stop()
    except Exception as exc:  # noqa: BLE001 - the start's failure is raised; this one is noted
        failure.add_note(f"stopping what had started failed too: {type(exc).__name__}: {exc}")
        return
    for problem in stopped.problems:
        failure.add_note(f"stopping what had started: {problem}")
