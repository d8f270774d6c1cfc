"""A Spark standalone cluster whose workers, and so their executors, are bound as planned: on
this machine, or on several hosts over SSH; one type, one life cycle, one state file.

The master runs on the first host and one worker per planned executor on each
host, under that executor's numactl prefix (a worker's binding passes on to the
executors it forks), every daemon bound to its host's address on ports free on
that host. The pip package of Spark has no sbin/ start scripts, so each daemon
is started directly with ``bin/spark-class``, which execs java. A worker whose executor owns
devices (``--gpus-per-executor``, ``--resource``) offers Spark exactly those: a resources file
of its own (``spark.worker.resourcesFile``, written on its host in the cluster's directory)
and their amounts, in SPARK_WORKER_OPTS; their addresses are in its environment too, for the
discovery script its executor runs should Spark ask it (placement/resources.py).

Each daemon is started through its host's shell (hosts/shell.py: `Local` here,
`Ssh` on a host) under a small ``sh`` watch run by one local process that the
process tracker owns: the daemon ends when that process ends, whether numaspark
stopped it, numaspark died (even by SIGKILL), or the connection to the host
dropped (the watch sees its stdin close). A cluster kept up by ``numaspark
cluster up`` (``kept``) starts its daemons detached instead, and ``numaspark
cluster down`` stops them by pid. ``stop`` also stops each daemon and its
descendants through the shell.

On several hosts ``spark.authenticate`` is on, with a fresh secret per cluster:
it travels on the shell's stdin into a 0600 properties file on each host (and
here, for the driver) and never appears on a command line or in a log;
executors get it from their worker. A cluster on this machine listens on
loopback unless asked, and needs none.

A mini YARN (``kind = "yarn-mini"``, spark/yarnmini.py: a ResourceManager and NodeManagers in
one launcher JVM on this machine) is the same life cycle with one process: started watched or
detached, in the same state file, stopped by ``stop``, which also stops any container that
outlived its NodeManager; ``master_state`` is then the ResourceManager's cluster info.

The state (``cluster.json``: ports, pids, hosts, the placement) is written as each
process starts, so ``numaspark cluster down`` can always find what to stop; the
state files of earlier versions (a local ``numaspark.cluster/1``, a
``numaspark.hosts-cluster/1``) are read too.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from numaspark import records
from numaspark.errors import NumasparkError, UsageError
from numaspark.hosts import LOCAL, Host, HostError, Shell, python_on, shell_for
from numaspark.placement import Binder, JvmPlacement, Placement, bind_argv, placement_to_dict
from numaspark.placement.plugin import slots_env
from numaspark.placement.resources import allocations, worker_env
from numaspark.readback.proc import (
    EffectiveJvm,
    EffectivePlacement,
    pages_per_node,
    parse_effective,
)
from numaspark.readback.tree import CLK_TCK, READ_TREE, ProcText, parse_tree_text, read_tree_here
from numaspark.spark.home import DAEMON_JAVA_OPTS, LOOPBACK, check_java, spark_home
from numaspark.spark.logs import error_line
from numaspark.spark.yarn import rm_json
from numaspark.spark.yarnmini import (
    CONF,
    MAIN_CLASS,
    failure_line,
    launcher_argv,
    ready_line,
    stop_leftovers,
)
from numaspark.supervise.processes import ProcessTracker, Tracked, runs, wait_for
from numaspark.supervise.stop import stop_processes
from numaspark.units import MIB

CLUSTER_SCHEMA = "numaspark.cluster/2"
OLD_SCHEMAS = ("numaspark.cluster/1", "numaspark.hosts-cluster/1")
STATE_FILE = "cluster.json"
SECRET_FILE = "spark-auth.conf"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
START_TIMEOUT_S = 90.0  # for the master, then for the workers; NUMASPARK_START_TIMEOUT overrides
STANDALONE, YARN_MINI = "standalone", "yarn-mini"  # the kinds of cluster
PID_LINE = "numaspark-pid "

# sh scripts run through a host's shell; their values arrive as positional parameters.
# WATCH: run "$@", say its pid, and end it (TERM, then KILL) when our stdin closes.
# (sh gives a background list /dev/null as stdin: the watch reads ours through fd 3)
WATCH = (
    'exec 3<&0; "$@" </dev/null 3<&- & pid=$!; echo "numaspark-pid $pid"; '
    '{ cat <&3 >/dev/null; kill -TERM "$pid"; i=0; '
    'while kill -0 "$pid" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; '
    'kill -KILL "$pid"; } >/dev/null 2>&1 & '
    'exec 3<&-; wait "$pid"'
)
# DETACH: run "$@" in a session of its own, logging to $1 (on the host); say its pid, return.
DETACH = (
    'log=$1; shift; mkdir -p "$(dirname "$log")" || exit 1; '
    'setsid "$@" </dev/null >>"$log" 2>&1 & echo "numaspark-pid $!"'
)
WRITE_SECRET = 'umask 077 && mkdir -p "$1" && cat > "$1/spark-auth.conf"'
WRITE_FILE = 'mkdir -p "$(dirname "$1")" && cat > "$1"'  # stdin into the file $1


def start_timeout(default: float = START_TIMEOUT_S) -> float:
    """Seconds the master, then the workers, may take to start (slow or emulated machines)."""
    value = os.environ.get("NUMASPARK_START_TIMEOUT")
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise UsageError(f"NUMASPARK_START_TIMEOUT={value!r}: give seconds, e.g. 300")
    return seconds


class ClusterError(NumasparkError):
    exit_code = 1


def auth_conf(secret: str, encrypt: bool) -> str:
    lines = ["spark.authenticate true", f"spark.authenticate.secret {secret}"]
    if encrypt:  # AES-based RPC encryption (spark.network.crypto), on top of authentication
        lines.append("spark.network.crypto.enabled true")
    return "\n".join(lines) + "\n"


def spark_home_on(host: Host) -> str:
    """Spark's home on ``host``: its inventory's, else this machine's path (the same venv)."""
    return host.spark_home or str(spark_home())


def daemon_env(host: Host, extra: dict[str, str] | None = None) -> list[str]:
    """``env K=V ...``: what Spark's scripts need on the host (no secret among them)."""
    values = {
        "SPARK_HOME": spark_home_on(host),
        "PYSPARK_PYTHON": python_on(host),
        "SPARK_LOCAL_IP": host.address,
        "SPARK_LOCAL_HOSTNAME": host.address,
        # daemons need little heap (the default 1g adds up on small machines), and no
        # optimising JIT or parallel GC threads: they only heartbeat and schedule
        "SPARK_DAEMON_MEMORY": os.environ.get("SPARK_DAEMON_MEMORY", "512m"),
        "SPARK_DAEMON_JAVA_OPTS": os.environ.get("SPARK_DAEMON_JAVA_OPTS", DAEMON_JAVA_OPTS),
        "SPARK_NO_DAEMONIZE": "1",
        **(extra or {}),
    }
    return ["env", "-u", "PYSPARK_GATEWAY_PORT", *(f"{k}={v}" for k, v in values.items())]


@dataclass
class Stopped:
    """What ``Cluster.stop`` did: the daemons it stopped, and what it could not reach."""

    pids: list[int]
    problems: list[str]


@dataclass
class Cluster:
    """A standalone cluster on this machine (``local``) or on hosts over SSH: what its state
    file keeps, and what a run's watcher asks of it."""

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
    # its state file (docs/schemas.md): what a live object holds (its directory: where the
    # file is; its shells, binders and clients) is not stored; a numaspark.hosts-cluster/1
    # has no ``local`` (on hosts), a numaspark.cluster/1 reads through records.UPGRADES
    __json__: ClassVar[records.Shape] = records.Shape(
        skip=("directory", "_shells", "_binders", "_clients"),
        computed=("schema", "saved_at"),
        absent={"local": False},
        schemas=(*OLD_SCHEMAS, CLUSTER_SCHEMA),
    )

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
        directory = directory.resolve()
        directory.mkdir(parents=True, exist_ok=True)
        _refuse_running(directory)
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
            cluster._start_all(parts, tracker, on_progress)
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
        directory = directory.resolve()
        directory.mkdir(parents=True, exist_ok=True)
        _refuse_running(directory)
        argv = launcher_argv(directory, nodemanagers, memory_mb, vcores, minimum_mb, host, site)
        (directory / CONF / "yarn-site.xml").unlink(missing_ok=True)  # an old run's ports
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
            size = (
                f"sized by {site.name}"
                if site is not None
                else f"of {vcores} vcores and {memory_mb} MB"
            )
            _progress(
                on_progress,
                f"mini YARN starting: a ResourceManager and {nodemanagers} NodeManager(s) {size}",
            )
            cluster._start(
                tracker,
                Host(LOCAL, host),
                "yarn",
                argv,
                nodemanagers=nodemanagers,
                memory_mb=memory_mb,
                vcores=vcores,
                minimum_mb=minimum_mb,
            )
            cluster._await_yarn(start_timeout(180.0))
        except BaseException as failure:
            _stop_after(cluster, failure)
            raise
        return cluster

    def _await_yarn(self, timeout_s: float) -> None:
        log = Path(self.processes[0]["log"])
        if not wait_for(lambda: ready_line(log) is not None or self.lost(), timeout_s):
            raise ClusterError(
                f"the mini YARN did not start in {timeout_s:.0f} s: see {log} (on "
                "a slow machine, set NUMASPARK_START_TIMEOUT to more seconds)"
            )
        ready = ready_line(log)
        if ready is None:
            raise ClusterError(
                f"the mini YARN exited: {failure_line(log) or error_line(log)} (see {log})"
            )
        self.master_webui = int(ready["rm-webapp"].rpartition(":")[2])
        self.processes[0].update(rm=ready.get("rm"), rm_webapp=ready["rm-webapp"])
        self._save()
        # up means answering: the web app's first REST answer (Jersey starting) takes seconds
        # here and minutes under emulation, and the next command sizes its plan by it
        webapp = f"http://{ready['rm-webapp']}"
        if not wait_for(
            lambda: rm_json(webapp, "/ws/v1/cluster/info", timeout_s=30) is not None or self.lost(),
            timeout_s,
            interval_s=1.0,
        ):
            raise ClusterError(
                f"the mini YARN's ResourceManager did not answer at {webapp} in "
                f"{timeout_s:.0f} s (on a slow machine, set "
                "NUMASPARK_START_TIMEOUT to more seconds)"
            )

    @property
    def hadoop_conf_dir(self) -> Path | None:
        """A mini YARN's HADOOP_CONF_DIR (its yarn-site.xml); None for a standalone cluster."""
        return self.directory / CONF if self.kind == YARN_MINI else None

    def _start_all(
        self, parts: list[tuple[Host, Placement]], tracker: ProcessTracker, on_progress
    ) -> None:
        timeout_s = start_timeout()
        if not self.local:
            self._share_secret()
        first = parts[0][0]
        port, webui = self.shell(first).free_ports(first.address, 2)
        self.master_url, self.master_webui = f"spark://{first.address}:{port}", webui
        _progress(on_progress, "master starting" + ("" if self.local else f" on {first.name}"))
        self._start(
            tracker,
            first,
            "master",
            [
                f"{spark_home_on(first)}/bin/spark-class",
                "org.apache.spark.deploy.master.Master",
                "--host",
                first.address,
                "--port",
                str(port),
                "--webui-port",
                str(webui),
                *self._properties(),
            ],
            port=port,
            webui=webui,
        )
        if not wait_for(lambda: self.master_state() is not None or self.lost(), timeout_s):
            raise ClusterError(
                f"the Spark master did not start in {timeout_s:.0f} s: see "
                f"{self.processes[0]['log']} (on a slow machine, set "
                "NUMASPARK_START_TIMEOUT to more seconds)"
            )
        if self.lost():
            raise ClusterError(self.lost())
        index = 0
        for host, plan in parts:
            ports = self.shell(host).free_ports(host.address, 2 * len(plan.executors))
            for k, executor in enumerate(plan.executors):
                self._start_worker(tracker, host, index, executor, ports[2 * k : 2 * k + 2])
                index += 1
        where = "" if self.local else f" on {len(parts)} host(s)"
        _progress(on_progress, f"{index} worker(s) starting{where}")
        if not wait_for(lambda: self.alive_workers() >= index or self.lost(), timeout_s):
            raise ClusterError(
                f"only {self.alive_workers()} of {index} workers registered in "
                f"{timeout_s:.0f} s: see the logs in {self.directory} (on a slow "
                "machine, set NUMASPARK_START_TIMEOUT to more seconds)"
            )
        if self.lost():
            raise ClusterError(self.lost())

    def _start_worker(
        self,
        tracker: ProcessTracker,
        host: Host,
        index: int,
        executor: JvmPlacement,
        ports: list[int],
    ) -> None:
        work = self.directory / f"worker-{index}"
        if self.local:
            work.mkdir(exist_ok=True)
        memory_mb = executor.heap // MIB
        argv = [
            *bind_argv(executor, self.binder(host)),
            f"{spark_home_on(host)}/bin/spark-class",
            "org.apache.spark.deploy.worker.Worker",
            self.master_url,
            "--host",
            host.address,
            "--port",
            str(ports[0]),
            "--webui-port",
            str(ports[1]),
            "--cores",
            str(executor.cores),
            "--memory",
            f"{memory_mb}m",
            "--work-dir",
            str(work),
            *self._properties(),
        ]
        # its executors inherit the worker's environment: the affinity plugin's slots, and
        # the addresses of the devices it offers (the discovery script's)
        self._start(
            tracker,
            host,
            f"worker {index}",
            argv,
            env={**slots_env(executor.slots), **self._offer_devices(host, index, executor)},
            index=index,
            port=ports[0],
            webui=ports[1],
            cores=executor.cores,
            memory_mb=memory_mb,
            work_dir=str(work),
        )

    def _offer_devices(self, host: Host, index: int, executor: JvmPlacement) -> dict[str, str]:
        """The worker of ``executor`` offers Spark exactly its planned devices: their resources
        file, written on its host (a worker per executor, so the master hands that executor
        those), and the environment that names it; nothing for an executor without devices."""
        entries = allocations([executor])
        if not entries:
            return {}
        path = str(self.directory / f"worker-{index}-resources.json")
        self.shell(host).run(
            ["sh", "-c", WRITE_FILE, "sh", path],
            input=json.dumps(entries, indent=2),
            what=f"writing worker {index}'s resources file",
        )
        return worker_env(executor, path, os.environ.get("SPARK_WORKER_OPTS", ""))

    def _share_secret(self) -> None:
        """A fresh secret in a 0600 file here (for the driver) and on every host."""
        secret = auth_conf(secrets.token_hex(32), self.encrypt)
        local = self.directory / SECRET_FILE
        local.touch(mode=0o600)
        local.write_text(secret)
        for host in self.hosts:
            self.shell(host).run(
                ["sh", "-c", WRITE_SECRET, "sh", str(self.directory)],
                input=secret,
                what="writing the cluster's secret",
            )

    def _properties(self) -> list[str]:
        return [] if self.local else ["--properties-file", str(self.directory / SECRET_FILE)]

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
            out = shell.run(["sh", "-c", DETACH, "sh", str(log), *command], what=f"starting {name}")
            entry["pid"] = _pid(out)
            self._save()
            return
        client = tracker.start(
            shell.argv(["sh", "-c", WATCH, "sh", *command]),
            name=f"{name} on {host.name}",
            log=log,
            stdin_pipe=True,
        )
        self._clients[len(self.processes) - 1] = client
        self._save()
        if not wait_for(lambda: _pid_in(log) is not None or not client.alive(), 30):
            raise ClusterError(f"{name} on {host.name} did not start: see {log}")
        if _pid_in(log) is None:
            raise ClusterError(self.lost() or f"{name} on {host.name} did not start: see {log}")
        entry["pid"], entry["client"] = _pid_in(log), client.pid
        self._save()

    @classmethod
    def from_state(cls, directory: Path) -> Cluster:
        """The cluster its state file describes (running or not, even half-started)."""
        directory = directory.resolve()
        path = directory / STATE_FILE
        if not path.exists():
            raise UsageError(
                f"no cluster in {directory}: start one with 'numaspark cluster up {directory}'"
            )
        try:
            state = json.loads(path.read_text())
            if not isinstance(state, dict):
                raise ValueError(f"a JSON {type(state).__name__}, not an object")
            # the directory it is in is the live object's, never stored
            return records.load(cls, {**state, "directory": directory})
        except records.SchemaError as exc:  # a newer numaspark's: one line, naming the file
            raise UsageError(f"{path}: {exc}") from None
        except ValueError as exc:
            raise UsageError(
                f"{path} is not a cluster's state ({exc}): remove it, and stop its "
                "processes by hand if any are left"
            ) from None

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

    def stop(self) -> Stopped:
        """Stop every daemon on every host (workers first), each with its descendants; then
        the local processes that watched them. The state file goes once nothing is left."""
        problems, stopped = [], []
        if self.kind == YARN_MINI:  # the launcher, gracefully (its NodeManagers end their
            # containers), then any container that outlived it
            pids = [p for p in self.pids_by_host().get(LOCAL, []) if runs(p, MAIN_CLASS)]
            stop_processes(pids)
            stopped += pids
        for name, pids in self.pids_by_host().items() if self.kind == STANDALONE else ():
            try:
                self.shell(self.host(name)).stop(pids)
                stopped += pids
            except HostError as exc:  # a watched daemon ends with its ssh client anyway
                problems.append(str(exc))
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
        for shell in self._shells.values():
            shell.close()
        if self.kind == YARN_MINI:
            stopped += stop_leftovers(self.directory)
        if not problems:  # else kept: 'cluster down' can try again once the host answers
            (self.directory / STATE_FILE).unlink(missing_ok=True)
        return Stopped(stopped, problems)

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
        path = self.directory / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(records.dump(self), indent=2))
        tmp.replace(path)

    # --- what is running (the run's watcher asks) --------------------------------------
    def shell(self, host: Host) -> Shell:
        if host.name not in self._shells:
            self._shells[host.name] = shell_for(host, self.local)
        return self._shells[host.name]

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
        if self.kind == YARN_MINI:  # the ResourceManager's cluster info
            info = rm_json(
                f"http://{self.host(self.master_host).address}:{self.master_webui}",
                "/ws/v1/cluster/info",
                timeout_s=2,
            )
            return (info or {}).get("clusterInfo")
        return master_json(self.host(self.master_host).address, self.master_webui)

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
            for ppid, pid, args in children:
                if EXECUTOR_CLASS in args:
                    found.setdefault(workers[ppid], []).append(pid)
        return found

    def read_effective(self, pid: int, worker: int) -> tuple[EffectivePlacement | None, dict]:
        """Where ``pid`` (an executor under ``worker``, or the worker) really runs, read from
        its host's /proc; and, on hosts, its host and resident bytes per node."""
        entry = next(w for w in self.workers if w["index"] == worker)
        text = self.shell(self.host(entry["host"])).read_proc(pid)
        if text is None:
            return None, {}
        status, maps = text
        if self.local:
            return parse_effective(pid, status, maps), {}
        pages = pages_per_node(maps)
        return parse_effective(pid, status, maps), {
            "host": entry["host"],
            "bytes_per_node": {str(n): b for n, b in sorted(pages.items())},
        }

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
        if self.kind == YARN_MINI:
            return self._yarn_status()
        state = self.master_state() or {}
        alive = {(w.get("host"), w.get("port")): w for w in state.get("workers", [])}
        planned = {j.index: j for j in records.load(Placement, self.placement).executors}
        workers = []
        for w in self.workers:
            argv = w["argv"]
            text = (
                self.shell(self.host(w["host"])).read_proc(int(w["pid"])) if w.get("pid") else None
            )
            effective = None
            if text is not None and w["index"] in planned:
                actual = parse_effective(int(w["pid"]), *text)
                effective = records.dump(EffectiveJvm.read(planned[w["index"]], actual))
            pages = pages_per_node(text[1]) if text else {}
            workers.append(
                {
                    **({} if self.local else {"host": w["host"]}),
                    "index": w["index"],
                    "pid": w.get("pid"),
                    "cores": w["cores"],
                    "memory_mb": w["memory_mb"],
                    "state": alive.get((self.host(w["host"]).address, w["port"]), {}).get(
                        "state", "missing"
                    ),
                    "prefix": argv[
                        : next(i for i, a in enumerate(argv) if a.endswith("spark-class"))
                    ],
                    "effective": effective,
                    "bytes_per_node": {str(n): b for n, b in sorted(pages.items())},
                }
            )
        for shell in self._shells.values():
            shell.close()
        return {"master_url": self.master_url, "status": state.get("status"), "workers": workers}

    def _yarn_status(self) -> dict:
        info = self.master_state() or {}
        webapp = f"http://{self.host(self.master_host).address}:{self.master_webui}"
        listed = ((rm_json(webapp, "/ws/v1/cluster/nodes") or {}).get("nodes") or {}).get("node")
        nodes = [
            {
                "id": n.get("id"),
                "state": n.get("state"),
                "containers": n.get("numContainers"),
                "vcores_free": n.get("availableVirtualCores"),
                "memory_free_mb": n.get("availMemoryMB"),
            }
            for n in listed or []
        ]
        launcher = self.processes[0] if self.processes else {}
        return {
            "master_url": "yarn",
            "kind": self.kind,
            "status": info.get("state"),
            "rm_webapp": webapp,
            "hadoop_conf_dir": str(self.hadoop_conf_dir),
            "pid": launcher.get("pid"),
            "nodes": nodes,
            "workers": [],
        }


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


def _refuse_running(directory: Path) -> None:
    """A directory whose cluster still runs is not started over; a dead one's state is."""
    if not (directory / STATE_FILE).exists():
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


def _progress(callback, message: str) -> None:
    if callback is not None:
        callback(message)


def _pid(text: str) -> int:
    for line in text.splitlines():
        if line.startswith(PID_LINE):
            return int(line[len(PID_LINE) :])
    raise ClusterError(f"the host did not say the pid it started: {text[-200:]!r}")


def _pid_in(log: Path) -> int | None:
    try:
        with log.open(errors="replace") as f:
            for line in f:
                if line.startswith(PID_LINE):
                    return int(line[len(PID_LINE) :])
    except (OSError, ValueError):
        return None
    return None


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
