"""The mini YARN's launcher (jvm/yarn-mini/): built with Maven on request, started as one more
kind of cluster (spark/standalone.py, ``Cluster.yarn_mini``), and what it may leave behind;
and `MiniYarn`, what such a cluster does its own way (its start, stop, master and status).

The launcher is a small Java program around ``MiniYARNCluster`` (hadoop-client-minicluster, the
YARN Spark's own YARN suites start): a ResourceManager and N NodeManagers in one JVM, on
loopback, that writes ``DIR/conf/yarn-site.xml`` and prints a ready line. It runs in ``DIR``,
where MiniYARNCluster keeps its NodeManagers' directories, so every container's command line
names ``DIR``; that is how `leftovers` finds containers that outlived their NodeManager (the
default container executor starts each in a session of its own).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import psutil

from numaspark.errors import ToolMissingError, UsageError
from numaspark.hosts import LOCAL
from numaspark.spark.daemons import ClusterError, progress, start_timeout
from numaspark.spark.logs import error_line
from numaspark.spark.maven import mvn_package, sources_digest, up_to_date
from numaspark.spark.yarn import rm_json
from numaspark.supervise.processes import ProcessTracker, runs, wait_for
from numaspark.supervise.stop import stop_processes

SOURCE = Path(__file__).resolve().parents[3] / "jvm" / "yarn-mini"  # the repository's
MAIN_CLASS = "io.numaspark.yarnmini.YarnMini"
READY = "numaspark-yarn-mini ready"
CONTAINER_MARK = "container_"  # in every YARN container's working directory
CONF = "conf"  # DIR/conf: HADOOP_CONF_DIR
LAUNCHER_HEAP = "768m"  # the ResourceManager and NodeManagers share one JVM


def _built() -> tuple[Path, Path]:
    target = SOURCE / "target"
    return target / "numaspark-yarn-mini.jar", target / "classpath.txt"


def build_launcher(force: bool = False) -> Path:
    """Build jvm/yarn-mini with Maven (it resolves hadoop-client-minicluster once, into the
    local Maven repository) when its sources changed, unless ``force``; its jar."""
    jar, classpath = _built()
    stamp = jar.with_suffix(".sources")
    if not (SOURCE / "pom.xml").exists():
        raise ToolMissingError(
            f"{SOURCE}/pom.xml is missing: the mini YARN is built from a checkout of numaspark"
        )
    current = sources_digest(SOURCE, "*.*")
    if not force and classpath.exists() and up_to_date(jar, stamp, current):
        return jar
    mvn_package(SOURCE / "pom.xml", [], "the mini YARN")
    stamp.write_text(current)
    return jar


def require_launcher() -> tuple[Path, str]:
    """The built launcher's jar and its classpath, or one line saying how to build it."""
    jar, classpath = _built()
    if not jar.exists() or not classpath.exists():
        raise ToolMissingError(
            f"the mini YARN is not built ({jar}): run NUMASPARK_SETUP_YARN=1 "
            "bash scripts/setup.sh (Maven fetches hadoop-client-minicluster "
            "once)"
        )
    return jar, classpath.read_text().strip()


def java_home() -> str | None:
    """JAVA_HOME for the NodeManagers' containers (their launch scripts run $JAVA_HOME/bin/java)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return str(Path(java).resolve().parents[1]) if java else None


def launcher_argv(
    directory: Path,
    nodemanagers: int,
    memory_mb: int,
    vcores: int,
    minimum_mb: int,
    host: str,
    site: Path | None = None,
) -> list[str]:
    """The launcher's argv, run in ``directory``; ``site``: a yarn-site.xml fragment applied
    over its settings (``plan --target yarn --out``'s)."""
    if site is not None and not site.is_file():
        raise UsageError(
            f"--site {site}: no such file; give the yarn-site.xml that "
            "'numaspark plan --target yarn --out DIR' wrote"
        )
    if nodemanagers < 1 or memory_mb < minimum_mb or vcores < 1 or minimum_mb < 1:
        raise UsageError(
            f"a mini YARN needs at least one NodeManager of 1 vcore and the minimum "
            f"allocation ({minimum_mb} MB) or more memory: got {nodemanagers} of "
            f"{vcores} vcore(s) and {memory_mb} MB"
        )
    jar, classpath = require_launcher()
    home = java_home()
    java = str(Path(home) / "bin" / "java") if home else "java"
    return [
        "env",
        "-C",
        str(directory),
        *([f"JAVA_HOME={home}"] if home else []),
        java,
        f"-Xmx{LAUNCHER_HEAP}",
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-cp",
        f"{jar}:{classpath}",
        MAIN_CLASS,
        "--dir",
        str(directory),
        "--nodemanagers",
        str(nodemanagers),
        "--nm-memory-mb",
        str(memory_mb),
        "--nm-vcores",
        str(vcores),
        "--min-allocation-mb",
        str(minimum_mb),
        "--host",
        host,
        *(["--site", str(site.resolve())] if site is not None else []),
    ]


def ready_line(log: Path) -> dict[str, str] | None:
    """The launcher's ready line's fields (``rm-webapp``, ``rm``, ``nodemanagers``), once
    printed."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(READY):
            return dict(f.split("=", 1) for f in line[len(READY) :].split() if "=" in f)
    return None


def failure_line(log: Path) -> str | None:
    """Why the launcher failed, as it said it (``numaspark-yarn-mini failed: ...``)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    return next((ln.strip() for ln in reversed(lines) if "numaspark-yarn-mini failed" in ln), None)


def leftovers(directory: Path) -> list[psutil.Process]:
    """Processes of the mini YARN in ``directory`` still running: its launcher, and containers
    (application masters, executors, their shells) whose command line names the directory."""
    mark = str(directory.resolve())
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            args = " ".join(proc.info["cmdline"] or ())
        except psutil.Error:
            continue
        if (
            proc.pid != os.getpid()
            and mark in args
            and (MAIN_CLASS in args or CONTAINER_MARK in args)
        ):
            found.append(proc)
    return found


def stop_leftovers(directory: Path, grace_s: float = 10.0) -> list[int]:
    """Stop (TERM, then KILL) whatever `leftovers` finds; their pids."""
    pids = [p.pid for p in leftovers(directory)]
    if pids:
        stop_processes(pids, grace_s)
    return pids


class MiniYarn:
    """A cluster of kind ``yarn-mini`` (spark/standalone.py's `Cluster` holds one of these):
    a ResourceManager and NodeManagers in one launcher JVM on this machine, its one process;
    the same life cycle and state file as a standalone cluster's. ``cluster`` below is that
    `Cluster`: what the methods read of it is its state, its hosts and its processes."""

    def argv(
        self,
        directory: Path,
        nodemanagers: int,
        memory_mb: int,
        vcores: int,
        minimum_mb: int,
        host: str,
        site: Path | None,
    ) -> list[str]:
        """The launcher's argv (`launcher_argv`), an old run's yarn-site.xml (its ports) gone."""
        argv = launcher_argv(directory, nodemanagers, memory_mb, vcores, minimum_mb, host, site)
        (directory / CONF / "yarn-site.xml").unlink(missing_ok=True)
        return argv

    def start(
        self,
        cluster,
        tracker: ProcessTracker,
        argv: list[str],
        on_progress=None,
        site: Path | None = None,
        **size,
    ) -> None:
        """Start the launcher (``size``: its NodeManagers, their memory_mb, vcores and
        minimum_mb) and return once every NodeManager has registered, its yarn-site.xml is
        written and its ResourceManager answers."""
        described = (
            f"sized by {site.name}"
            if site is not None
            else f"of {size['vcores']} vcores and {size['memory_mb']} MB"
        )
        progress(
            on_progress,
            f"mini YARN starting: a ResourceManager and {size['nodemanagers']} NodeManager(s) "
            f"{described}",
        )
        cluster._start(tracker, cluster.hosts[0], "yarn", argv, **size)
        self._await(cluster, start_timeout(180.0))

    def _await(self, cluster, timeout_s: float) -> None:
        log = Path(cluster.processes[0]["log"])
        if not wait_for(lambda: ready_line(log) is not None or cluster.lost(), timeout_s):
            raise ClusterError(
                f"the mini YARN did not start in {timeout_s:.0f} s: see {log} (on "
                "a slow machine, set NUMASPARK_START_TIMEOUT to more seconds)"
            )
        ready = ready_line(log)
        if ready is None:
            raise ClusterError(
                f"the mini YARN exited: {failure_line(log) or error_line(log)} (see {log})"
            )
        cluster.master_webui = int(ready["rm-webapp"].rpartition(":")[2])
        cluster.processes[0].update(rm=ready.get("rm"), rm_webapp=ready["rm-webapp"])
        cluster._save()
        # up means answering: the web app's first REST answer (Jersey starting) takes seconds
        # here and minutes under emulation, and the next command sizes its plan by it
        webapp = f"http://{ready['rm-webapp']}"
        if not wait_for(
            lambda: (
                rm_json(webapp, "/ws/v1/cluster/info", timeout_s=30) is not None or cluster.lost()
            ),
            timeout_s,
            interval_s=1.0,
        ):
            raise ClusterError(
                f"the mini YARN's ResourceManager did not answer at {webapp} in "
                f"{timeout_s:.0f} s (on a slow machine, set "
                "NUMASPARK_START_TIMEOUT to more seconds)"
            )

    def conf_dir(self, cluster) -> Path | None:
        """Its HADOOP_CONF_DIR (its yarn-site.xml)."""
        return cluster.directory / CONF

    def stop_daemons(self, cluster, problems: list[str]) -> list[int]:
        """The launcher, gracefully (its NodeManagers end their containers)."""
        pids = [p for p in cluster.pids_by_host().get(LOCAL, []) if runs(p, MAIN_CLASS)]
        stop_processes(pids)
        return pids

    def stop_rest(self, cluster) -> list[int]:
        """Any container that outlived the launcher."""
        return stop_leftovers(cluster.directory)

    def _webapp(self, cluster) -> str:
        return f"http://{cluster.host(cluster.master_host).address}:{cluster.master_webui}"

    def master_state(self, cluster) -> dict | None:
        """The ResourceManager's cluster info."""
        info = rm_json(self._webapp(cluster), "/ws/v1/cluster/info", timeout_s=2)
        return (info or {}).get("clusterInfo")

    def status(self, cluster) -> dict:
        """``cluster status``: the ResourceManager's view of its NodeManagers."""
        info = cluster.master_state() or {}
        webapp = self._webapp(cluster)
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
        launcher = cluster.processes[0] if cluster.processes else {}
        return {
            "master_url": "yarn",
            "kind": cluster.kind,
            "status": info.get("state"),
            "rm_webapp": webapp,
            "hadoop_conf_dir": str(cluster.hadoop_conf_dir),
            "pid": launcher.get("pid"),
            "nodes": nodes,
            "workers": [],
        }


MINI_YARN = MiniYarn()
