"""A cluster's daemons as its hosts' shells start them: their command lines and environment,
the ``sh`` scripts that start them, and the files written on a host for them.

The pip package of Spark has no sbin/ start scripts, so each daemon is started directly with
``bin/spark-class``, which execs java. A worker whose executor owns devices
(``--gpus-per-executor``, ``--resource``) offers Spark exactly those: a resources file of its
own (``spark.worker.resourcesFile``, written on its host in the cluster's directory) and
their amounts, in SPARK_WORKER_OPTS; their addresses are in its environment too, for the
discovery script its executor runs should Spark ask it (placement/resources.py).

Each daemon is started through its host's shell (hosts/shell.py: `Local` here, `Ssh` on a
host) under a small ``sh`` watch (`WATCH`) run by one local process that the process tracker
owns: the daemon ends when that process ends, whether numaspark stopped it, numaspark died
(even by SIGKILL), or the connection to the host dropped (the watch sees its stdin close). A
kept cluster starts its daemons detached instead (`DETACH`); either says the daemon's pid.

On several hosts ``spark.authenticate`` is on, with a fresh secret per cluster: it travels
on the shell's stdin into a 0600 properties file on each host (and here, for the driver) and
never appears on a command line or in a log; executors get it from their worker.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from numaspark.errors import NumasparkError, UsageError
from numaspark.hosts import Host, Shell, python_on
from numaspark.placement import Binder, JvmPlacement, bind_argv
from numaspark.placement.resources import allocations, worker_env
from numaspark.spark.home import DAEMON_JAVA_OPTS, spark_home
from numaspark.supervise.processes import ProcessTracker, Tracked
from numaspark.units import MIB

SECRET_FILE = "spark-auth.conf"
START_TIMEOUT_S = 90.0  # for the master, then for the workers; NUMASPARK_START_TIMEOUT overrides
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


class ClusterError(NumasparkError):
    exit_code = 1


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


def progress(callback, message: str) -> None:
    if callback is not None:
        callback(message)


# --- what a daemon runs ----------------------------------------------------------------
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


def master_argv(host: Host, port: int, webui: int, properties: list[str]) -> list[str]:
    """A standalone master on ``host``, listening on ``port`` with its web UI on ``webui``."""
    return [
        f"{spark_home_on(host)}/bin/spark-class",
        "org.apache.spark.deploy.master.Master",
        "--host",
        host.address,
        "--port",
        str(port),
        "--webui-port",
        str(webui),
        *properties,
    ]


def worker_argv(
    executor: JvmPlacement,
    binder: Binder,
    host: Host,
    master_url: str,
    ports: list[int],
    work: Path,
    properties: list[str],
) -> list[str]:
    """A worker on ``host`` for ``executor``, bound as it is planned (its executors inherit
    the binding): its cores and heap, on ``ports`` (its own, its web UI's), working in
    ``work``."""
    return [
        *bind_argv(executor, binder),
        f"{spark_home_on(host)}/bin/spark-class",
        "org.apache.spark.deploy.worker.Worker",
        master_url,
        "--host",
        host.address,
        "--port",
        str(ports[0]),
        "--webui-port",
        str(ports[1]),
        "--cores",
        str(executor.cores),
        "--memory",
        f"{executor.heap // MIB}m",
        "--work-dir",
        str(work),
        *properties,
    ]


# --- what is written on a host for its daemons -----------------------------------------
def offer_devices(
    shell: Shell, directory: Path, index: int, executor: JvmPlacement
) -> dict[str, str]:
    """The worker of ``executor`` offers Spark exactly its planned devices: their resources
    file, written on its host (a worker per executor, so the master hands that executor
    those), and the environment that names it; nothing for an executor without devices."""
    entries = allocations([executor])
    if not entries:
        return {}
    path = str(directory / f"worker-{index}-resources.json")
    shell.run(
        ["sh", "-c", WRITE_FILE, "sh", path],
        input=json.dumps(entries, indent=2),
        what=f"writing worker {index}'s resources file",
    )
    return worker_env(executor, path, os.environ.get("SPARK_WORKER_OPTS", ""))


def share_secret(directory: Path, shells: list[Shell], encrypt: bool) -> None:
    """A fresh secret in a 0600 file here (for the driver) and on every host's ``shells``."""
    secret = auth_conf(secrets.token_hex(32), encrypt)
    local = directory / SECRET_FILE
    local.touch(mode=0o600)
    local.write_text(secret)
    for shell in shells:
        shell.run(
            ["sh", "-c", WRITE_SECRET, "sh", str(directory)],
            input=secret,
            what="writing the cluster's secret",
        )


# --- starting one ------------------------------------------------------------------------
def start_detached(shell: Shell, name: str, log: Path, command: list[str]) -> int:
    """Start ``command`` on ``shell``'s host in a session of its own; its pid."""
    out = shell.run(["sh", "-c", DETACH, "sh", str(log), *command], what=f"starting {name}")
    return pid_said(out)


def start_watched(
    tracker: ProcessTracker, shell: Shell, what: str, log: Path, command: list[str]
) -> Tracked:
    """Start ``command`` on ``shell``'s host under the watch, held by a process of
    ``tracker`` (``what``: its name there) logging to ``log``."""
    return tracker.start(
        shell.argv(["sh", "-c", WATCH, "sh", *command]), name=what, log=log, stdin_pipe=True
    )


def pid_said(text: str) -> int:
    for line in text.splitlines():
        if line.startswith(PID_LINE):
            return int(line[len(PID_LINE) :])
    raise ClusterError(f"the host did not say the pid it started: {text[-200:]!r}")


def pid_in(log: Path) -> int | None:
    try:
        with log.open(errors="replace") as f:
            for line in f:
                if line.startswith(PID_LINE):
                    return int(line[len(PID_LINE) :])
    except (OSError, ValueError):
        return None
    return None
