"""Submit one application with spark-submit, watch it, and say what happened (`AppRun`)."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from numaspark.collect.base import Collector, CollectorSet
from numaspark.placement import Binding, Placement, numactl_argv, spark_conf
from numaspark.placement.plugin import slots_env
from numaspark.readback.proc import EffectiveJvm, read_effective
from numaspark.spark.cluster import StandaloneCluster
from numaspark.spark.conf import merged
from numaspark.spark.home import LOOPBACK, spark_env, spark_home
from numaspark.spark.logs import error_line, error_lines, last_error_line
from numaspark.supervise.processes import ProcessTracker

MAX_EXECUTOR_RELAUNCHES = 3
DEFAULT_TIMEOUT_S = 1800.0


@dataclass
class AppRun:
    """What one spark-submit did."""

    run_dir: Path
    returncode: int | None = None
    wall_s: float = 0.0
    app_id: str | None = None
    event_log: Path | None = None
    log: Path | None = None
    failure: str | None = None
    effective: list[EffectiveJvm] = field(default_factory=list)  # one per JVM that ran tasks
    placement_warnings: list[str] = field(default_factory=list)
    collectors: CollectorSet | None = None  # what sampled the OS, NUMA and counters meanwhile
    conf_notes: list[str] = field(default_factory=list)  # the user's settings numaspark replaced
    stopped: bool = False  # stopped by numaspark after its duration (a streaming application)

    @property
    def ok(self) -> bool:
        return self.failure is None and self.returncode == 0


@dataclass(frozen=True)
class Driver:
    """How spark-submit starts the application's driver and where it sends it: the part of
    a run its `Target` decides (experiment/target.py)."""

    master: str  # local[N], spark://HOST:PORT, ...
    prefix: tuple[str, ...] = ()  # what spark-submit runs under (numactl for local mode)
    env: tuple[tuple[str, str], ...] = ()  # added to spark-submit's environment
    drop_conf: tuple[str, ...] = ()  # plan settings this master sizes by itself
    cluster: StandaloneCluster | None = None  # a standalone cluster numaspark watches
    runs_tasks: bool = False  # local mode: the driver is the JVM to watch
    properties: Path | None = None  # a 0600 file of secrets (spark.authenticate), not argv

    @classmethod
    def local(cls, placement: Placement) -> Driver:
        """Local mode: the driver runs the tasks, so it is bound as the plan's one task JVM
        and gets its task slots (core/pu binding)."""
        jvm = placement.executors[0]
        return cls(master=spark_conf(placement)["spark.master"], runs_tasks=True,
                   prefix=tuple(numactl_argv(jvm)), env=tuple(slots_env(jvm.slots).items()))  # fmt: skip

    @classmethod
    def standalone(cls, cluster: StandaloneCluster) -> Driver:
        """A standalone cluster: the driver runs unbound; executors inherit their workers'
        binding; the master sizes the application by cores.max, not executor instances."""
        return cls(master=cluster.master_url, drop_conf=("spark.executor.instances",),
                   cluster=cluster, properties=cluster.properties_file)  # fmt: skip


def run_app(
    placement: Placement,
    job: str | Path,
    job_args: list[str],
    run_dir: Path,
    tracker: ProcessTracker,
    driver: Driver,
    extra_conf: dict[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    host: str = LOOPBACK,
    collectors: list[Collector] | None = None,
    interval_s: float = 1.0,
    java_options: list[str] | None = None,
    task_jvm_options: list[str] | None = None,
    app_conf: dict[str, str] | None = None,
    submit_options: list[str] | None = None,
    stop_after_s: float | None = None,
) -> AppRun:
    """Run ``job`` as placed, submitted as ``driver`` says.

    ``collectors`` sample the JVMs that run tasks (and the machine) every
    ``interval_s`` from the start of spark-submit to its end. A user's application brings
    ``app_conf`` (its own settings, which numaspark's are merged over, spark/conf.py) and
    ``submit_options`` (its spark-submit options that set no key, ``--class`` among them);
    ``stop_after_s`` stops it, as planned rather than failed, after that long.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    events = run_dir / "eventlog"
    events.mkdir(exist_ok=True)
    conf = {
        **spark_conf(placement),
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.resolve().as_uri(),
        "spark.driver.host": host,
        "spark.driver.bindAddress": host,
        "spark.ui.enabled": "false",
        # minor/major GC counts and times per executor and stage (metrics/gc.py)
        "spark.eventLog.logStageExecutorMetrics": "true",
        **(extra_conf or {}),
    }
    # added to the plan's and the user's options, not instead of them
    task_key = (
        "spark.driver.extraJavaOptions"  # local mode: the driver runs the tasks
        if placement.executors[0].role == "driver"
        else "spark.executor.extraJavaOptions"
    )
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        extra = [*(java_options or []), *(task_jvm_options or [] if key == task_key else [])]
        if extra:
            conf[key] = " ".join(filter(None, [conf.get(key, ""), *extra]))
    run = AppRun(run_dir=run_dir, log=run_dir / "spark-submit.log")
    conf, run.conf_notes = merged(app_conf or {}, conf)
    for key in ("spark.master", "spark.submit.deployMode", *driver.drop_conf):
        conf.pop(key, None)
    argv = [*driver.prefix, str(spark_home() / "bin" / "spark-submit"), "--master", driver.master]
    if driver.properties is not None:
        argv += ["--properties-file", str(driver.properties)]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    argv += [*(submit_options or []), str(job), *job_args]

    cluster = driver.cluster
    known_apps = set(cluster.app_ids()) if cluster else set()
    started = time.monotonic()
    submit = tracker.start(argv, name="spark-submit", log=run.log,
                           env={**spark_env(host), **dict(driver.env)})  # fmt: skip
    watcher = _Watcher(placement, cluster, submit.pid if driver.runs_tasks else None, known_apps)
    watcher.start()
    if collectors:
        run.collectors = CollectorSet(collectors, watcher.jvms, run_dir, interval_s)
        run.collectors.begin()
    try:
        while submit.popen.poll() is None:
            if watcher.failure:
                run.failure = watcher.failure
                break
            if stop_after_s is not None and time.monotonic() - started > stop_after_s:
                run.stopped = True
                break
            if time.monotonic() - started > timeout_s:
                run.failure = f"timed out after {timeout_s:.0f} s"
                break
            time.sleep(0.2)
    finally:
        if run.collectors is not None:
            run.collectors.finish()
        watcher.stop()
        if submit.popen.poll() is None:
            tracker.stop(submit)
        else:
            tracker.forget(submit)
    run.wall_s = time.monotonic() - started
    run.returncode = submit.popen.returncode
    run.effective = watcher.effective()
    run.placement_warnings = watcher.warnings()
    run.event_log, run.app_id = find_event_log(events)
    if run.failure is None and run.returncode != 0 and not run.stopped:
        line = last_error_line(run.log) if app_conf is not None else error_line(run.log)
        run.failure = f"spark-submit exited with {run.returncode}: {line}"
    return run


class _Watcher(threading.Thread):
    """Samples the JVMs that run tasks while the app runs; catches executor relaunch loops."""

    def __init__(
        self, placement: Placement, cluster, driver_pid: int | None, known_apps: set[str]
    ) -> None:
        super().__init__(daemon=True)
        self.placement = placement
        self.cluster = cluster
        self.driver_pid = driver_pid
        self.known_apps = known_apps
        self.failure: str | None = None
        self._seen: dict[int, dict] = {}
        self._planned: dict[int, object] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            with contextlib.suppress(psutil.Error, OSError):  # a JVM gone between list and read
                self._sample()
            self._stop_event.wait(0.5)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)

    def _sample(self) -> None:
        if self.cluster is None:
            if self.driver_pid is None:  # executors elsewhere: the plugin reports for them
                return
            # until numactl and the scripts have exec'd java, the pid is not the JVM yet
            if self.driver_pid not in self._seen and _is_jvm(self.driver_pid):
                self._record(self.driver_pid, self.placement.executors[0])
            return
        if self.failure is None:
            self.failure = self.cluster.lost()
        executors = {e.index: e for e in self.placement.executors}
        for worker, pids in self.cluster.executor_pids().items():
            for pid in pids:
                if pid not in self._seen and worker in executors:
                    self._record(pid, executors[worker], worker)
        new_apps = [a for a in self.cluster.app_ids() if a not in self.known_apps]
        for app in new_apps:
            launches = self.cluster.executor_launches(app)
            if len(launches) > len(self.cluster.workers) + MAX_EXECUTOR_RELAUNCHES:
                self.failure = (
                    f"executors keep dying ({len(launches)} launched for {len(self.cluster.workers)} "
                    f"workers): {_executor_error(launches)}"
                )

    def _record(self, pid: int, planned, worker: int | None = None) -> None:
        if self.cluster is not None:  # its host's /proc: here, or over SSH
            actual, facts = self.cluster.read_effective(pid, worker)
        else:
            actual, facts = read_effective(pid), {}
        if actual is None:
            return
        self._planned[pid] = planned
        self._seen[pid] = EffectiveJvm.read(planned, actual, facts)

    def jvms(self) -> dict[int, tuple[str, frozenset[int] | None]]:
        """The task-running JVMs seen so far: pid -> (name, nodes its memory is bound to)."""
        found = {}
        for pid, entry in list(self._seen.items()):
            planned = self._planned[pid]
            nodes = planned.mem_nodes if len(planned.mem_nodes) else planned.nodes
            bound = frozenset(nodes) if planned.binding is not Binding.NONE else None
            found[pid] = (entry.jvm, bound)
        return found

    def effective(self) -> list[EffectiveJvm]:
        return sorted(self._seen.values(), key=lambda e: (e.index, e.pid))

    def warnings(self) -> list[str]:
        return [d for e in self.effective() for d in e.differences]


def _is_jvm(pid: int) -> bool:
    try:
        return "org.apache.spark.deploy.SparkSubmit" in " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


def find_event_log(events: Path) -> tuple[Path | None, str | None]:
    """The event log a run wrote into ``events`` (a rolling directory or a file), and its app id."""
    if not events.is_dir():
        return None, None
    candidates = sorted(events.glob("eventlog_v2_*")) + sorted(
        p for p in events.iterdir() if p.is_file() and not p.name.startswith(".")
    )
    if not candidates:
        return None, None
    path = candidates[-1]
    app_id = path.name.removeprefix("eventlog_v2_").split(".")[0]
    return path, app_id


def _executor_error(launches: list[Path]) -> str:
    """The errors of the newest executor launch that has written one (stdout and stderr)."""
    for launch in reversed(launches):
        found = [line for name in ("stdout", "stderr") for line in error_lines(launch / name)]
        if found:
            return " / ".join(dict.fromkeys(found))[:500]
    return "no executor wrote an error; see the worker logs"
