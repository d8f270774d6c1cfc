"""A Spark standalone cluster on several hosts, deployed and read back over SSH.

The master runs on the first host, one worker per planned executor on each host
under that host's numactl prefix, every daemon bound to its host's address
(never 0.0.0.0) on ports free on that host. ``spark.authenticate`` is on with a
fresh secret per cluster: the secret travels on SSH's stdin into a 0600
properties file on each host (and here, for the driver) and never appears on a
command line or in a log. Executors get it from their worker (Spark passes it
in their environment).

Every remote process is started by one local ``ssh`` process that the process
tracker owns, running it under a small ``sh`` watch: the remote process ends
when that ``ssh`` ends, whether numaspark stopped it, numaspark died, or the
connection to the host dropped (the watch sees its stdin close). ``stop`` also
kills each remote process and its descendants over a fresh connection when the
host answers. A cluster kept up by ``numaspark cluster up`` (``kept``) starts
its daemons detached instead, and ``numaspark cluster down`` stops them by pid.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.hosts import Host, HostError, HostPlan, Ssh, python_on
from numaspark.placement import numactl_argv, placement_to_dict
from numaspark.placement.plugin import slots_env
from numaspark.readback.proc import EffectivePlacement, pages_per_node, parse_effective
from numaspark.spark.cluster import (
    EXECUTOR_CLASS,
    STATE_FILE,
    ClusterError,
    _progress,
    alive_workers,
    master_json,
    start_timeout,
)
from numaspark.spark.home import DAEMON_JAVA_OPTS, spark_home
from numaspark.spark.logs import error_line
from numaspark.supervise.processes import ProcessTracker, Tracked, wait_for
from numaspark.units import MIB

HOSTS_CLUSTER_SCHEMA = "numaspark.hosts-cluster/1"
SECRET_FILE = "spark-auth.conf"
PID_LINE = "numaspark-pid "

# sh scripts run on the hosts; their values arrive as positional parameters, never spliced in.
# WATCH: run "$@", say its pid, and end it (TERM, then KILL) when our stdin closes.
# (sh gives a background list /dev/null as stdin: the watch reads ours through fd 3)
WATCH = ('exec 3<&0; "$@" </dev/null 3<&- & pid=$!; echo "numaspark-pid $pid"; '
         '{ cat <&3 >/dev/null; kill -TERM "$pid"; i=0; '
         'while kill -0 "$pid" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; '
         'kill -KILL "$pid"; } >/dev/null 2>&1 & '
         'exec 3<&-; wait "$pid"')  # fmt: skip
# DETACH: run "$@" in a session of its own, logging to $1 (on the host); say its pid, return.
DETACH = ('log=$1; shift; mkdir -p "$(dirname "$log")" || exit 1; '
          'setsid "$@" </dev/null >>"$log" 2>&1 & echo "numaspark-pid $!"')  # fmt: skip
# GONE: which of the pids given have ended.
GONE = 'for p in "$@"; do kill -0 "$p" 2>/dev/null || echo "$p"; done'
# STOP: TERM each Spark pid given and its descendants, wait up to 10 s, then KILL what is left.
STOP = ('all=""; add() { all="$all $1"; for c in $(ps -o pid= --ppid "$1"); do add "$c"; done; }; '
        'for p in "$@"; do grep -qs org.apache.spark "/proc/$p/cmdline" && add "$p"; done; '
        '[ -z "$all" ] && exit 0; kill -TERM $all 2>/dev/null; i=0; '
        'while [ $i -lt 100 ]; do left=""; for p in $all; do [ -d "/proc/$p" ] && left=1; done; '
        '[ -z "$left" ] && exit 0; sleep 0.1; i=$((i+1)); done; kill -KILL $all 2>/dev/null; '
        'exit 0')  # fmt: skip
WRITE_SECRET = 'umask 077 && mkdir -p "$1" && cat > "$1/spark-auth.conf"'
FREE_PORTS = ("import socket,sys\nfor _ in range(int(sys.argv[2])):\n"
              " s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1]); s.close()")  # fmt: skip


def spark_home_on(host: Host) -> str:
    """Spark's home on ``host``: its inventory's, else this machine's path (the same venv)."""
    return host.spark_home or str(spark_home())


def auth_conf(secret: str, encrypt: bool) -> str:
    lines = ["spark.authenticate true", f"spark.authenticate.secret {secret}"]
    if encrypt:  # AES-based RPC encryption (spark.network.crypto), on top of authentication
        lines.append("spark.network.crypto.enabled true")
    return "\n".join(lines) + "\n"


def _remote_env(host: Host, extra: dict[str, str] | None = None) -> list[str]:
    """``env K=V ...``: what Spark's scripts need on the host (no secret among them)."""
    values = {"SPARK_HOME": spark_home_on(host), "PYSPARK_PYTHON": python_on(host),
              "SPARK_LOCAL_IP": host.address, "SPARK_LOCAL_HOSTNAME": host.address,
              "SPARK_DAEMON_MEMORY": "512m", "SPARK_DAEMON_JAVA_OPTS": DAEMON_JAVA_OPTS,
              "SPARK_NO_DAEMONIZE": "1", **(extra or {})}  # fmt: skip
    return ["env", *(f"{k}={v}" for k, v in values.items())]


@dataclass
class HostsCluster:
    """What ``cluster.json`` keeps of a cluster on several hosts; the watcher's view of it."""

    directory: Path
    master_url: str
    master_host: str
    master_webui: int
    driver_address: str
    hosts: list[Host]
    processes: list[dict] = field(default_factory=list)  # master first, then the workers
    placement: dict = field(default_factory=dict)
    encrypt: bool = False
    kept: bool = False
    _ssh: dict[str, Ssh] = field(default_factory=dict, repr=False)
    _clients: dict[int, Tracked] = field(default_factory=dict, repr=False)  # by process index

    # --- life cycle ---------------------------------------------------------------
    @classmethod
    def start(cls, plans: list[HostPlan], placement, directory: Path, tracker: ProcessTracker,
              driver_address: str, encrypt: bool = False, kept: bool = False,
              on_progress=None) -> HostsCluster:  # fmt: skip
        """The master on the first host, a bound worker per planned executor on each host;
        returns once every worker has registered with the master."""
        timeout_s = start_timeout()
        directory = directory.resolve()
        directory.mkdir(parents=True, exist_ok=True)
        if (directory / STATE_FILE).exists():
            raise UsageError(f"a cluster's state is in {directory}: stop it with 'numaspark "
                             f"cluster down {directory}' first")  # fmt: skip
        secret = auth_conf(secrets.token_hex(32), encrypt)
        local = directory / SECRET_FILE  # for the driver: spark-submit --properties-file
        local.touch(mode=0o600)
        local.write_text(secret)
        first = plans[0].host
        cluster = cls(directory=directory, master_url="", master_host=first.name,
                      master_webui=0, driver_address=driver_address,
                      hosts=[p.host for p in plans], placement=placement_to_dict(placement),
                      encrypt=encrypt, kept=kept)  # fmt: skip
        for found in plans:
            cluster.ssh(found.host).run(["sh", "-c", WRITE_SECRET, "sh", str(directory)],
                                        input=secret, what="writing the cluster's secret")  # fmt: skip
        port, webui = cluster._free_ports(first, 2)
        cluster.master_url, cluster.master_webui = f"spark://{first.address}:{port}", webui
        _progress(on_progress, f"master starting on {first.name}")
        cluster._start(tracker, first, "master", [
            f"{spark_home_on(first)}/bin/spark-class", "org.apache.spark.deploy.master.Master",
            "--host", first.address, "--port", str(port), "--webui-port", str(webui),
            "--properties-file", str(directory / SECRET_FILE)], port=port, webui=webui)  # fmt: skip
        if not wait_for(lambda: cluster.master_state() is not None or cluster.lost(), timeout_s):
            raise ClusterError(f"the Spark master on {first.name} did not start in "
                               f"{timeout_s:.0f} s: see {cluster.processes[0]['log']}")  # fmt: skip
        if cluster.lost():
            raise ClusterError(cluster.lost())
        index = 0
        for found in plans:
            ports = cluster._free_ports(found.host, 2 * len(found.placement.executors))
            for k, executor in enumerate(found.placement.executors):
                work = directory / f"worker-{index}"
                argv = [*numactl_argv(executor), f"{spark_home_on(found.host)}/bin/spark-class",
                        "org.apache.spark.deploy.worker.Worker", cluster.master_url,
                        "--host", found.host.address, "--port", str(ports[2 * k]),
                        "--webui-port", str(ports[2 * k + 1]), "--cores", str(executor.cores),
                        "--memory", f"{executor.heap // MIB}m", "--work-dir", str(work),
                        "--properties-file", str(directory / SECRET_FILE)]  # fmt: skip
                cluster._start(tracker, found.host, f"worker {index}", argv, index=index,
                               port=ports[2 * k], cores=executor.cores,
                               memory_mb=executor.heap // MIB, work_dir=str(work),
                               env=slots_env(executor.slots))  # fmt: skip
                index += 1
        _progress(on_progress, f"{index} worker(s) starting on {len(plans)} host(s)")
        if not wait_for(lambda: cluster.alive_workers() >= index or cluster.lost(), timeout_s):
            raise ClusterError(f"only {cluster.alive_workers()} of {index} workers registered in "
                               f"{timeout_s:.0f} s: see the logs in {directory}")  # fmt: skip
        if cluster.lost():
            raise ClusterError(cluster.lost())
        return cluster

    def ssh(self, host: Host) -> Ssh:
        if host.name not in self._ssh:
            self._ssh[host.name] = Ssh(host)
        return self._ssh[host.name]

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    def _free_ports(self, host: Host, count: int) -> list[int]:
        """Ports free now on ``host``'s address, chosen by its own OS."""
        out = self.ssh(host).run([python_on(host), "-c", FREE_PORTS, host.address, str(count)],
                                 what="choosing free ports")  # fmt: skip
        return [int(p) for p in out.split()]

    def _start(self, tracker: ProcessTracker, host: Host, name: str, argv: list[str],
               env: dict[str, str] | None = None, **facts) -> None:  # fmt: skip
        """Start ``argv`` on ``host`` (watched, or detached when the cluster is kept); record
        its remote pid in the state file as soon as the host says it."""
        log = self.directory / "logs" / f"{name.replace(' ', '-')}-{host.name}.log"
        command = [*_remote_env(host, env), *argv]
        ssh = self.ssh(host)
        entry = {"name": name, "host": host.name, "argv": argv, "log": str(log), **facts}
        self.processes.append(entry)
        if self.kept:
            out = ssh.run(["sh", "-c", DETACH, "sh", str(log), *command], what=f"starting {name}")
            entry["pid"] = _pid(out)
            self._save()
            return
        client = tracker.start(ssh.argv(["sh", "-c", WATCH, "sh", *command]),
                               name=f"{name} on {host.name}", log=log, stdin_pipe=True)  # fmt: skip
        self._clients[len(self.processes) - 1] = client
        self._save()
        if not wait_for(lambda: _pid_in(log) is not None or not client.alive(), 30):
            raise ClusterError(f"{name} on {host.name} did not start: see {log}")
        if _pid_in(log) is None:
            raise ClusterError(self.lost() or f"{name} on {host.name} did not start: see {log}")
        entry["pid"], entry["client"] = _pid_in(log), client.pid
        self._save()

    @classmethod
    def from_state(cls, directory: Path) -> HostsCluster:
        """The cluster its state file describes (running or not, even half-started)."""
        state = json.loads((directory.resolve() / STATE_FILE).read_text())
        return cls(
            directory=directory.resolve(), master_url=state["master_url"],
            master_host=state["master_host"], master_webui=state["master_webui"],
            driver_address=state["driver_address"],
            hosts=[_host_from(h) for h in state["hosts"]], processes=state["processes"],
            placement=state["placement"], encrypt=state.get("encrypt", False),
            kept=state.get("kept", False),
        )  # fmt: skip

    @classmethod
    def attach(cls, directory: Path) -> HostsCluster:
        """The running cluster in ``directory`` (``numaspark cluster up --hosts``)."""
        cluster = cls.from_state(directory)
        if cluster.master_state() is None:
            raise UsageError(f"the cluster in {directory} is not running: 'numaspark cluster "
                             f"down {directory}' cleans up, then 'numaspark cluster up'")  # fmt: skip
        return cluster

    def stop(self) -> list[str]:
        """Stop every process on every host (workers first), each with its descendants; then
        the local ssh clients. What could not be reached, in words."""
        problems = []
        by_host: dict[str, list[int]] = {}
        for entry in reversed(self.processes):
            if entry.get("pid"):
                by_host.setdefault(entry["host"], []).append(int(entry["pid"]))
        for name, pids in by_host.items():
            try:
                self.ssh(self.host(name)).run(["sh", "-c", STOP, "sh", *map(str, pids)],
                                              timeout_s=30, what="stopping Spark")  # fmt: skip
            except HostError as exc:  # a watched process ends with its ssh client anyway
                problems.append(str(exc))
        for client in self._clients.values():
            with contextlib.suppress(OSError, AttributeError):
                client.popen.stdin.close()
        for ssh in self._ssh.values():
            ssh.close()
        if not problems:  # else kept: 'cluster down' can try again once the host answers
            (self.directory / STATE_FILE).unlink(missing_ok=True)
        return problems

    def _save(self) -> None:
        state = {
            "schema": HOSTS_CLUSTER_SCHEMA, "master_url": self.master_url,
            "master_host": self.master_host, "master_webui": self.master_webui,
            "driver_address": self.driver_address,
            "hosts": [_host_dict(h) for h in self.hosts], "processes": self.processes,
            "placement": self.placement, "encrypt": self.encrypt, "kept": self.kept,
            "saved_at": time.time(),
        }  # fmt: skip
        path = self.directory / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(path)

    # --- what is running (the run's watcher asks) --------------------------------------
    @property
    def workers(self) -> list[dict]:
        return [p for p in self.processes if p["name"].startswith("worker")]

    @property
    def properties_file(self) -> Path:
        return self.directory / SECRET_FILE

    def master_state(self) -> dict | None:
        if not self.master_webui:
            return None
        return master_json(self.host(self.master_host).address, self.master_webui)

    def alive_workers(self) -> int:
        return alive_workers(self.master_state())

    def lost(self) -> str | None:
        """Why the cluster can no longer serve as planned (a host unreachable, a daemon gone),
        or None."""
        detached = [p for i, p in enumerate(self.processes)
                    if i not in self._clients and p.get("pid")]  # fmt: skip
        for name in dict.fromkeys(p["host"] for p in detached):
            pids = [str(p["pid"]) for p in detached if p["host"] == name]
            try:
                gone = self.ssh(self.host(name)).run(["sh", "-c", GONE, "sh", *pids],
                                                     timeout_s=10).split()  # fmt: skip
            except HostError as exc:
                return str(exc)
            for entry in (p for p in detached if str(p["pid"]) in gone):
                return f"{entry['name']} on {name} exited: see {entry['log']} on {name}"
        for index, client in self._clients.items():
            if client.alive():
                continue
            entry = self.processes[index]
            host = self.host(entry["host"])
            try:
                self.ssh(host).run(["true"], timeout_s=10)
            except HostError as exc:
                return f"{exc}: its {entry['name']} is gone with the connection"
            return f"{entry['name']} on {host.name} exited: {error_line(Path(entry['log']))}"
        return None

    def executor_pids(self) -> dict[int, list[int]]:
        """Executor JVMs under each worker (by worker index), asked of each host."""
        found: dict[int, list[int]] = {}
        for name in dict.fromkeys(w["host"] for w in self.workers):
            workers = [w for w in self.workers if w["host"] == name and w.get("pid")]
            try:
                out = self.ssh(self.host(name)).run(
                    ["ps", "-o", "ppid=,pid=,args=", "--ppid", ",".join(str(w["pid"]) for w in workers)],
                    timeout_s=10, what="ps")  # fmt: skip
            except HostError:
                continue  # a host gone: lost() says so
            by_pid = {int(w["pid"]): w["index"] for w in workers}
            for line in out.splitlines():
                parts = line.split(None, 2)
                if len(parts) == 3 and EXECUTOR_CLASS in parts[2]:
                    found.setdefault(by_pid[int(parts[0])], []).append(int(parts[1]))
        return found

    def read_effective(self, pid: int, worker: int) -> tuple[EffectivePlacement | None, dict]:
        """Where ``pid`` (an executor under ``worker``, or the worker) really runs, read from
        its host's /proc; and its host and resident bytes per node."""
        entry = next(w for w in self.workers if w["index"] == worker)
        try:
            out = self.ssh(self.host(entry["host"])).run(
                ["sh", "-c", 'cat "/proc/$1/status" && echo @@numa_maps@@ && cat "/proc/$1/numa_maps"',
                 "sh", str(pid)], timeout_s=10, what="reading /proc")  # fmt: skip
        except HostError:
            return None, {}
        status, _, maps = out.partition("@@numa_maps@@\n")
        pages = pages_per_node(maps)
        return parse_effective(pid, status, maps), {
            "host": entry["host"],
            "bytes_per_node": {str(n): b for n, b in sorted(pages.items())},
        }

    def app_ids(self) -> list[str]:
        return []  # the work directories are on the hosts; relaunch loops are not watched there

    def executor_launches(self, app_id: str) -> list[Path]:
        return []


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


def _host_dict(host: Host) -> dict:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in host.__dict__.items()}


def _host_from(data: dict) -> Host:
    return Host(**{**data, "key": Path(data["key"]) if data.get("key") else None,
                   "known_hosts": Path(data["known_hosts"]) if data.get("known_hosts") else None})  # fmt: skip


def hosts_status(directory: Path) -> dict:
    """``cluster status`` of a cluster on several hosts: the master's view and, per worker,
    its host, launch prefix, CPUs, memory policy and resident pages per node, read over SSH."""
    cluster = HostsCluster.attach(directory)
    state = cluster.master_state() or {}
    alive = {(w.get("host"), w.get("port")): w for w in state.get("workers", [])}
    workers = []
    for w in cluster.workers:
        argv = w["argv"]
        address = cluster.host(w["host"]).address
        effective, facts = cluster.read_effective(int(w["pid"]), w["index"])
        workers.append({
            "host": w["host"], "index": w["index"], "pid": w["pid"], "cores": w["cores"],
            "memory_mb": w["memory_mb"],
            "state": alive.get((address, w["port"]), {}).get("state", "missing"),
            "prefix": argv[: next(i for i, a in enumerate(argv) if a.endswith("spark-class"))],
            "effective": effective.to_dict() if effective else None,
            "bytes_per_node": facts.get("bytes_per_node", {}),
        })  # fmt: skip
    for ssh in cluster._ssh.values():
        ssh.close()
    return {"master_url": cluster.master_url, "status": state.get("status"), "workers": workers}


def stop_hosts_cluster_dir(directory: Path) -> list[int]:
    """``cluster down`` of a cluster on several hosts, even a half-started one: every pid its
    state names, stopped on its host; what could not be reached."""
    cluster = HostsCluster.from_state(directory)
    problems = cluster.stop()
    if problems:
        raise HostError("; ".join(problems) + f" (run 'numaspark cluster down {directory}' "
                        "again once the host answers)")  # fmt: skip
    return [int(p["pid"]) for p in cluster.processes if p.get("pid")]


def is_hosts_state(directory: Path) -> bool:
    try:
        state = json.loads((directory.resolve() / STATE_FILE).read_text())
    except (OSError, ValueError):
        return False
    return state.get("schema") == HOSTS_CLUSTER_SCHEMA
