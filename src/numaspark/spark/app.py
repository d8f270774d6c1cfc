"""Submit one application with spark-submit, watch it, and say what happened (`AppRun`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from numaspark.collect.base import Collector, CollectorSet
from numaspark.placement import Placement, bind_argv, spark_conf
from numaspark.placement.plugin import slots_env
from numaspark.placement.render import INSTANCES, DynamicAllocation
from numaspark.readback.proc import EffectiveJvm
from numaspark.spark.address import HOST_KEY, DriverAddress, local_ip
from numaspark.spark.conf import (
    layered,
    merged,
    spark_processor_count,
    with_dynamic_allocation,
)
from numaspark.spark.executor_deaths import DriverLog
from numaspark.spark.home import LOOPBACK, free_port, require_spark_python, spark_env, spark_home
from numaspark.spark.logs import UiWatch, error_line, error_lines, last_error_line, ui_url
from numaspark.spark.progress import AppProgress
from numaspark.spark.standalone import Cluster
from numaspark.supervise.processes import ProcessTracker, runs
from numaspark.supervise.watch import Watch, Watched, tree_here

MAX_EXECUTOR_RELAUNCHES = 3
DEFAULT_TIMEOUT_S = 1800.0
# how long an application that never shows its start (no event log, no Spark UI: it turned both
# off in its own code) is given to start before its --duration is counted from spark-submit's
STARTUP_ALLOWANCE_S = 60.0
# a running application's progress (its jobs, stages and tasks) is said at most this often
PROGRESS_EVERY_S = 10.0


class AppClock:
    """How long a user's application has run on Spark, for ``--duration``: from the moment it
    showed it was up (its event log appeared, or its Spark UI answered: both start with its
    SparkContext), not from spark-submit's start, which on a loaded machine can come many
    seconds earlier. An application that shows neither (it turned both off in its own code)
    is given `STARTUP_ALLOWANCE_S` to start, counted from spark-submit's start, and ``note``
    says so; without that it would run to the timeout."""

    def __init__(self, started: float, events: Path) -> None:
        self.started = started
        self.events = events
        self.since: float | None = None
        self.note: str | None = None

    def ran(self, now: float, ui_up: bool) -> float:
        """Seconds the application has run by ``now`` (0 before it shows its start)."""
        if self.since is None:
            if ui_up or any(self.events.iterdir()):
                self.since = now
            elif now - self.started > STARTUP_ALLOWANCE_S:
                self.since = self.started + STARTUP_ALLOWANCE_S
                self.note = (
                    f"the application wrote no event log and showed no Spark UI in "
                    f"{STARTUP_ALLOWANCE_S:.0f} s: --duration was counted from then, "
                    f"not from its start (does it set spark.eventLog.enabled=false "
                    f"in its own code?)"
                )
        return 0.0 if self.since is None else now - self.since


DEPLOY_MODE_KEY = "spark.submit.deployMode"  # client (the driver here) or cluster
# a standalone master's client returns once the driver is submitted unless told to wait
WAIT_COMPLETION_KEY = "spark.standalone.submit.waitAppCompletion"


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
    ui_url: str | None = None  # the application's Spark UI, as its driver said it bound it
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
    cluster: Cluster | None = None  # a standalone cluster numaspark watches
    runs_tasks: bool = False  # local mode: the driver is the JVM to watch
    properties: Path | None = None  # a 0600 file of secrets (spark.authenticate), not argv
    address: DriverAddress | None = None  # where the driver listens (None: run_app's host)
    # cluster deploy mode: the driver runs on the cluster (a standalone worker, YARN's
    # application master); spark-submit here lives as long as it, its UI is over there
    cluster_mode: bool = False

    @classmethod
    def local(cls, placement: Placement) -> Driver:
        """Local mode: the driver runs the tasks, so it is bound as the plan's one task JVM
        and gets its task slots (core/pu binding)."""
        jvm = placement.executors[0]
        return cls(
            master=spark_conf(placement)["spark.master"],
            runs_tasks=True,
            prefix=tuple(bind_argv(jvm)),
            env=tuple(slots_env(jvm.slots).items()),
        )

    @classmethod
    def standalone(cls, cluster: Cluster) -> Driver:
        """A standalone cluster: the driver runs unbound; executors inherit their workers'
        binding; the master sizes the application by cores.max, not executor instances."""
        return cls(
            master=cluster.master_url,
            drop_conf=("spark.executor.instances",),
            cluster=cluster,
            properties=cluster.properties_file,
        )


@dataclass(frozen=True)
class SubmitOptions:
    """How `run_app` runs an application, beyond where (the placement and the driver).

    ``collectors`` sample the JVMs that run tasks (and the machine) every ``interval_s``
    from the start of spark-submit to its end. A user's application brings ``app_conf``
    (its own settings, which numaspark's are merged over, spark/conf.py) and
    ``submit_options`` (its spark-submit options that set no key, ``--class`` among them);
    ``stop_after_s`` stops it, as planned rather than failed, once it has run that long
    (from the moment its SparkContext is up: its event log appears); ``check``, asked twice
    a second, says why it must stop (no executor came), or None. A user's application keeps
    its Spark UI (on a free port of the driver's address unless it says otherwise), and
    ``say`` is told its URL once the driver has bound it; the suite's runs have none.
    """

    extra_conf: dict[str, str] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    host: str = LOOPBACK
    collectors: list[Collector] | None = None
    interval_s: float = 1.0
    java_options: list[str] | None = None
    task_jvm_options: list[str] | None = None
    app_conf: dict[str, str] | None = None
    submit_options: list[str] | None = None
    stop_after_s: float | None = None
    check: Callable[[], str | None] | None = None
    say: Callable[[str], None] | None = None


def run_app(
    placement: Placement,
    job: str | Path,
    job_args: list[str],
    run_dir: Path,
    tracker: ProcessTracker,
    driver: Driver,
    options: SubmitOptions = SubmitOptions(),
) -> AppRun:
    """Run ``job`` as placed, submitted as ``driver`` says, as ``options`` say."""
    if str(job).endswith(".py"):
        require_spark_python()  # one line where no Python here imports the Spark it runs on
    run_dir.mkdir(parents=True, exist_ok=True)
    events = run_dir / "eventlog"
    events.mkdir(exist_ok=True)
    run = AppRun(run_dir=run_dir, log=submit_log(run_dir))
    conf, run.conf_notes = _submit_conf(
        placement,
        driver,
        events,
        options.host,
        options.app_conf,
        options.extra_conf or {},
        pyspark=str(job).endswith(".py"),
        java_options=(options.java_options or [], options.task_jvm_options or []),
    )
    argv = _submit_argv(driver, conf, [*(options.submit_options or []), str(job), *job_args])

    cluster = driver.cluster
    known_apps = set(cluster.app_ids()) if cluster else set()
    started = time.monotonic()
    clock = AppClock(started, events)
    # the driver ends with numaspark, killed or not: its shutdown hook ends the application on
    # the cluster, so a remote cluster's executors stop too
    submit = tracker.start(
        argv,
        name="spark-submit",
        log=run.log,
        die_with_parent=True,
        env={
            **spark_env(local_ip(conf, options.host), hostname=conf.get(HOST_KEY)),
            **dict(driver.env),
        },
    )
    ui = _ui_watch(driver, conf, options.host, run.log)
    dynamic_log = run.log if DynamicAllocation.of(conf) is not None else None
    watcher = _started_watch(placement, driver, submit.pid, known_apps, options.check, dynamic_log)
    if options.collectors:
        run.collectors = CollectorSet(options.collectors, watcher.jvms, run_dir, options.interval_s)
        run.collectors.begin()
    limits = (options.stop_after_s, options.timeout_s)
    try:
        _watch_until_it_ends(run, submit, watcher, ui, clock, options.say, limits)
    finally:
        _stop_watching(run, watcher, submit, tracker)
    run.wall_s = time.monotonic() - started
    run.returncode = submit.popen.returncode
    _what_it_left(run, watcher, clock, events, ui, users_app=options.app_conf is not None)
    return run


def _submit_conf(
    placement: Placement,
    driver: Driver,
    events: Path,
    host: str,
    app_conf: dict[str, str] | None,
    extra_conf: dict[str, str],
    pyspark: bool,
    java_options: tuple[list[str], list[str]],
) -> tuple[dict[str, str], list[str]]:
    """Every setting spark-submit is given, and the notes on the user's settings numaspark
    replaced: the run's (run_settings), the java options, the user's merged under them, then
    what the driver's master decides by itself dropped and the deploy mode set."""
    address = driver.address or DriverAddress(host, "numaspark's cluster")
    conf = run_settings(
        placement,
        events,
        address,
        app_conf,
        extra_conf,
        pyspark=pyspark,
        cluster_mode=driver.cluster_mode,
    )
    _add_java_options(conf, placement, *java_options)
    conf, notes = merged(app_conf or {}, conf)
    for key in ("spark.master", *driver.drop_conf):
        conf.pop(key, None)
    users = {**(app_conf or {}), **extra_conf}
    if DynamicAllocation.of(conf) is not None:  # the user's count stands: no line replaced it
        notes = [n for n in notes if not n.startswith(f"your {INSTANCES}=")]
    conf, said = with_dynamic_allocation(conf, users, driver.master)
    conf, more = spark_processor_count(conf, driver.master)
    notes += said + more
    if driver.cluster_mode:  # a standalone client waits for the driver's end, as YARN's does
        conf[DEPLOY_MODE_KEY] = "cluster"
        conf[WAIT_COMPLETION_KEY] = "true"
    else:
        conf.pop(DEPLOY_MODE_KEY, None)
    return conf, notes


def _ui_watch(driver: Driver, conf: dict[str, str], host: str, log: Path) -> UiWatch | None:
    """What reads the application's UI address from its driver's log: none in cluster mode
    (the UI is the driver host's) or with the UI off."""
    if driver.cluster_mode or conf.get("spark.ui.enabled", "true").strip().lower() == "false":
        return None
    bind = local_ip(conf, host)
    return UiWatch(log, conf.get(HOST_KEY, bind), bind, conf.get("spark.ui.port"))


def _started_watch(
    placement: Placement,
    driver: Driver,
    submit_pid: int,
    known_apps: set[str],
    check: Callable[[], str | None] | None,
    dynamic_log: Path | None = None,
) -> Watch:
    """The watch over the JVMs that run tasks (the driver itself in local mode), asking the
    standalone cluster's relaunches and the target's ``check`` why it must stop
    (``dynamic_log``: the driver's log, when dynamic allocation is on)."""
    relaunches = _relaunches(driver.cluster, known_apps, dynamic_log)
    checks = [c for c in (relaunches, check) if c is not None]
    watcher = Watch(
        _watched(placement, driver.cluster, submit_pid if driver.runs_tasks else None),
        check=lambda: next((why for why in (c() for c in checks) if why), None),
    )
    watcher.start()
    return watcher


def _stop_watching(run: AppRun, watcher: Watch, submit, tracker: ProcessTracker) -> None:
    """Once the loop ends, however: the collectors and the watch stopped, and spark-submit
    stopped if it still runs (forgotten if it ended by itself)."""
    if run.collectors is not None:
        run.collectors.finish()
    watcher.stop()
    if submit.popen.poll() is None:
        tracker.stop(submit)
    else:
        tracker.forget(submit)


def _watch_until_it_ends(
    run: AppRun,
    submit,
    watcher: Watch,
    ui: UiWatch | None,
    clock: AppClock,
    say: Callable[[str], None] | None,
    limits: tuple[float | None, float],
) -> None:
    """Five times a second until spark-submit exits or `_ends` says why it must stop
    (``limits``: the --duration and the timeout): the UI's URL said once it is bound, the
    progress said as it changes."""
    progress = _Progress(say)
    while submit.popen.poll() is None:
        if ui is not None and run.ui_url is None:
            run.ui_url = ui.poll()
            if run.ui_url is not None and say is not None:
                say(f"the application's Spark UI: {run.ui_url}")
        progress.tell(run.ui_url)
        if _ends(run, watcher, clock, *limits):
            return
        time.sleep(0.2)


def _add_java_options(
    conf: dict[str, str], placement: Placement, options: list[str], task_options: list[str]
) -> None:
    """``options`` on every JVM's, and ``task_options`` on those of the JVMs that run tasks
    (the driver in local mode), added to the plan's and the user's, not instead of them."""
    task_key = (
        "spark.driver.extraJavaOptions"  # local mode: the driver runs the tasks
        if placement.executors[0].role == "driver"
        else "spark.executor.extraJavaOptions"
    )
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        extra = [*options, *(task_options if key == task_key else [])]
        if extra:
            conf[key] = " ".join(filter(None, [conf.get(key, ""), *extra]))


def _submit_argv(driver: Driver, conf: dict[str, str], application: list[str]) -> list[str]:
    """spark-submit's argv: under the driver's prefix, to its master, every setting as a
    --conf (secrets in its properties file, never here), then the application and its
    arguments."""
    argv = [*driver.prefix, str(spark_home() / "bin" / "spark-submit"), "--master", driver.master]
    if driver.properties is not None:
        argv += ["--properties-file", str(driver.properties)]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    return [*argv, *application]


def _ends(
    run: AppRun, watcher: Watch, clock: AppClock, stop_after_s: float | None, timeout_s: float
) -> bool:
    """Whether the watch loop stops the application now, and why (in ``run``): the watch's
    failure, its --duration run out (as planned), or the timeout."""
    if watcher.failure:
        run.failure = watcher.failure
        return True
    # counted from the application's start, not spark-submit's: on a loaded machine a JVM
    # slow to start would otherwise eat the time a stream was asked to run
    now = time.monotonic()
    if stop_after_s is not None and clock.ran(now, run.ui_url is not None) > stop_after_s:
        run.stopped = True
        return True
    if now - clock.started > timeout_s:
        run.failure = f"timed out after {timeout_s:.0f} s"
        return True
    return False


def _what_it_left(
    run: AppRun,
    watcher: Watch,
    clock: AppClock,
    events: Path,
    ui: UiWatch | None,
    users_app: bool,
) -> None:
    """Fill ``run`` from what the application left once it ended: where its JVMs ran, its
    event log, its UI's URL, and why it failed (the last error of a user's application's
    log; the first of the suite's)."""
    run.effective = watcher.effective()
    run.placement_warnings = watcher.warnings() + ([clock.note] if clock.note else [])
    run.placement_warnings += _plugin_off(run.log)
    run.event_log, run.app_id = find_event_log(events)
    if ui is not None and run.ui_url is None:  # an application shorter than a poll
        run.ui_url = ui_url(ui.follower.new_text(), ui.host)
    if run.failure is None and run.returncode != 0 and not run.stopped:
        line = last_error_line(run.log) if users_app else error_line(run.log)
        run.failure = f"spark-submit exited with {run.returncode}: {line}"


#: What the affinity plugin's entry class logs in a JVM older than Java 17 (AffinityPlugin.java)
PLUGIN_OFF = "numaspark's affinity plugin needs Java 17; this JVM is "


def _plugin_off(log: Path) -> list[str]:
    """The plugin's word, in the driver's log, that it stayed off (a Java older than 17: the
    tasks were not pinned, nothing was bound or reported from inside), as a warning."""
    try:
        with log.open(errors="replace") as lines:
            said = next((line for line in lines if PLUGIN_OFF in line), None)
    except OSError:
        return []
    return [said[said.index(PLUGIN_OFF) :].strip()] if said else []


class _Progress:
    """Says a running application's progress, read from its REST API (spark/progress.py):
    when it changed, at most every `PROGRESS_EVERY_S`, as ``progress: ...``."""

    def __init__(self, say: Callable[[str], None] | None) -> None:
        self.say = say
        self.reader: AppProgress | None = None
        self.said: tuple[float, str | None] = (0.0, None)

    def tell(self, ui: str | None) -> None:
        if self.say is None or ui is None:
            return
        if self.reader is None:
            self.reader = AppProgress(ui)
        now = time.monotonic()
        line = self.reader.line(now)
        if line is not None and line != self.said[1] and now - self.said[0] >= PROGRESS_EVERY_S:
            self.said = (now, line)
            self.say(f"progress: {line}")


def submit_log(run_dir: Path) -> Path:
    """Where a run's spark-submit writes its output: the driver's log."""
    return run_dir / "spark-submit.log"


def run_settings(
    placement: Placement,
    events: Path,
    address: DriverAddress,
    app_conf: dict[str, str] | None,
    extra_conf: dict[str, str],
    pyspark: bool = False,
    cluster_mode: bool = False,
) -> dict[str, str]:
    """numaspark's settings for the run, before the user's application's are merged under
    them: the plan's, the event log's, the driver's address and UI where the user set none
    (``app_conf``: their application's own; ``extra_conf``: numaspark's --conf and the
    target's), then ``extra_conf``: its class paths and plugins added to the plan's, so the
    affinity plugin's jar stays on the class path beside the user's (spark/conf.py layered).
    A PySpark application (``pyspark``) also gets Spark's process-tree metrics and its
    workers' BLAS threads capped at the task's CPUs. In ``cluster_mode`` the driver runs on
    the cluster: its address and UI are its host's, none of them set here."""
    users = {**(app_conf or {}), **extra_conf}
    driver = {} if cluster_mode else address.conf(users)
    ui = (
        {} if cluster_mode else _ui_conf(users, app_conf is not None, local_ip({**driver, **users}))
    )
    return layered(
        {
            **spark_conf(placement),
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": events.resolve().as_uri(),
            **driver,
            **ui,
            # minor/major GC counts and times per executor and stage (metrics/gc.py)
            "spark.eventLog.logStageExecutorMetrics": "true",
            # its log is captured in a file: Spark's console bar would fill it with \r lines
            # (numaspark says the progress itself, spark/progress.py)
            "spark.ui.showConsoleProgress": "false",
            **(_process_tree_conf(users) | _blas_conf(users) if pyspark else {}),
        },
        extra_conf,
    )


# what numpy's BLAS reads before OMP_NUM_THREADS (OpenBLAS: OPENBLAS_NUM_THREADS, then
# GOTO_NUM_THREADS, then OMP_NUM_THREADS; MKL: MKL_NUM_THREADS, then OMP_NUM_THREADS)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_conf(users: dict[str, str]) -> dict[str, str]:
    """Each Python worker's BLAS threads at the task's CPUs: Spark sets OMP_NUM_THREADS to
    spark.task.cpus (PythonRunner, SPARK-42613) unless spark.executorEnv.OMP_NUM_THREADS is
    set, but OPENBLAS_NUM_THREADS or MKL_NUM_THREADS in the executor's environment would win
    over it and oversubscribe the executor's CPUs; numaspark sets them to the same. The
    user's own settings are kept."""
    threads = users.get("spark.executorEnv.OMP_NUM_THREADS") or users.get("spark.task.cpus", "1")
    ours = {f"spark.executorEnv.{name}": threads for name in BLAS_THREADS}
    return {k: v for k, v in ours.items() if k not in users}


def _process_tree_conf(users: dict[str, str]) -> dict[str, str]:
    """A PySpark application's Python workers' RSS beside the JVM's, per executor and stage:
    Spark's process-tree metrics, polled every second (at the default, only at heartbeats,
    every 10 s, a short stage's peaks are all 0: seen here). Each poll forks a ``pgrep -P``
    per process of the executor's tree. The user's own values are kept."""
    ours = {
        "spark.executor.processTreeMetrics.enabled": "true",
        "spark.executor.metrics.pollingInterval": "1s",
    }
    return {k: v for k, v in ours.items() if k not in users}


def _ui_conf(users: dict[str, str], own: bool, address: str) -> dict[str, str]:
    """The suite's runs have no UI (they are measured, and nobody looks); a user's
    application keeps its own, on a free port of the driver's address unless it set one."""
    if not own:
        return {"spark.ui.enabled": "false"}
    if users.get("spark.ui.enabled", "true").strip().lower() == "false" or "spark.ui.port" in users:
        return {}
    try:
        return {"spark.ui.port": str(free_port(address))}
    except OSError:  # an address this machine does not have (behind NAT): Spark retries ports
        return {"spark.ui.port": str(free_port(LOOPBACK))}


def _watched(
    placement: Placement, cluster: Cluster | None, driver_pid: int | None
) -> Callable[[], list[Watched]]:
    """What the watch reads: the executors under a cluster's workers, or the local-mode driver
    once spark-submit has exec'd java (until numactl and the scripts have, the pid is not the
    JVM yet); nothing when the executors are elsewhere (the plugin reports for them). Each
    one's Python processes too (PySpark's workers; the local-mode driver's script)."""
    if cluster is not None:
        executors = {e.index: e for e in placement.executors}

        def on_cluster() -> list[Watched]:
            return [
                Watched(
                    pid,
                    executors[worker],
                    partial(_read_on, cluster, worker),
                    tree=partial(cluster.read_tree, worker=worker),
                )
                for worker, pids in cluster.executor_pids().items()
                if worker in executors
                for pid in pids
            ]

        return on_cluster
    if driver_pid is None:
        return lambda: []
    driver = [Watched(driver_pid, placement.executors[0], tree=tree_here, driver=True)]
    execed: list[bool] = []  # once java runs, it stays java: asked no more

    def local() -> list[Watched]:
        if not execed and runs(driver_pid, "org.apache.spark.deploy.SparkSubmit"):
            execed.append(True)
        return driver if execed else []

    return local


def _read_on(cluster: Cluster, worker: int, pid: int):
    return cluster.read_effective(pid, worker)


def _relaunches(
    cluster: Cluster | None, known_apps: set[str], dynamic_log: Path | None = None
) -> Callable[[], str | None] | None:
    """Why the run must stop: its cluster lost (a host, a daemon), or executors that keep
    dying (each launch has a work directory of its own). Under dynamic allocation
    (``dynamic_log``: the driver's log) executors removed when idle are launched again, which
    is no death: only those the driver's log says died (FAILED, LOST, EXITED) count."""
    if cluster is None:
        return None

    def check() -> str | None:
        lost = cluster.lost()
        if lost:
            return lost
        for app in (a for a in cluster.app_ids() if a not in known_apps):
            launches = cluster.executor_launches(app)
            dead = len(launches)
            if dynamic_log is not None:
                dead = sum(d.executor.startswith(app) for d in DriverLog.read(dynamic_log).deaths)
            if dead > len(cluster.workers) + MAX_EXECUTOR_RELAUNCHES:
                return (
                    f"executors keep dying ({len(launches)} launched for "
                    f"{len(cluster.workers)} workers): {_executor_error(launches)}"
                )
        return None

    return check


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
