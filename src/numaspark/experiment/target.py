"""Where a run happens: a `Target` starts (or finds) the JVMs a placement asks for and runs
one application on them.

- `LocalTarget`: local mode, one driver JVM that runs the tasks, under the plan's
  numactl prefix.
- `StandaloneTarget`: a Spark standalone cluster on this host, one bound worker per
  planned executor. It starts a cluster when the placement needs one and reuses it
  while later placements have the same shape (an executor takes ~15 s to start here,
  and the measurement does not depend on a fresh cluster: every application gets new
  executors); or it serves from a cluster left up by ``numaspark cluster up``
  (``attached``), which it checks but never stops.

- `HostsTarget`: a standalone cluster on several hosts, deployed over SSH (the same
  `Cluster`, spark/standalone.py, over SSH shells): each host planned from its own
  topology, the master on the first, bound workers on each; reused while the shape
  matches, like the local one.

- `ExternalTarget`: a cluster numaspark did not start (``--master``, seen through the
  plugin): it answers the same calls, so the run loop (experiment/runner.py) does not change
  for it.

Which target a request runs on, and its placement there, is experiment/placing.py's.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import yaml

from numaspark import records
from numaspark.errors import UsageError
from numaspark.hosts import driver_address, merge, plan_hosts
from numaspark.hosts.shell import HostError, shell_for
from numaspark.kernel import NUMA_BALANCING
from numaspark.placement import Placement, shipped_plugin_conf
from numaspark.placement.kubelet import PLUGIN_POD_TEMPLATE, run_pods
from numaspark.placement.plugin import PLACEMENT_FILE, PLACEMENT_KEY
from numaspark.placement.render import DynamicAllocation
from numaspark.spark import kept_clusters
from numaspark.spark.address import DriverAddress, address_for
from numaspark.spark.affinity import plugin_effective, require_jar
from numaspark.spark.app import DEPLOY_MODE_KEY, AppRun, Driver, SubmitOptions, run_app, submit_log
from numaspark.spark.conf import layered
from numaspark.spark.first_executor import DEFAULT_WAIT_S, FirstExecutorWait, master_status
from numaspark.spark.home import spark_python
from numaspark.spark.kube import PodRun, driver_pod_conf
from numaspark.spark.pyfiles import PYFILES_KEY, package_zip
from numaspark.spark.standalone import Cluster
from numaspark.spark.yarn import YarnCluster, kill_application
from numaspark.supervise.processes import ProcessTracker

Say = Callable[[str], None]
PYTHON_KEY = "spark.pyspark.python"  # the executors' (and, unless told, the driver's) Python
DRIVER_PYTHON_KEY = "spark.pyspark.driver.python"
PYTHON_ENV = "PYSPARK_PYTHON"  # what spark-submit gives the executors when no key is set
EXECUTOR_PYTHON = "python3"  # on a cluster numaspark did not start: the hosts' own


class Target(Protocol):
    """Where a run's JVMs run."""

    def prepare(self, placement: Placement, say: Say) -> None:
        """Make the JVMs ``placement`` needs ready (start a cluster, or check the one there)."""

    def submit(
        self, placement: Placement, job: str | Path, job_args: list[str], run_dir: Path, **options
    ) -> AppRun:
        """Run one application; ``options`` are `run_app`'s (conf, collectors, timeout...)."""

    @property
    def where(self) -> str | None:
        """What a run record names as the place it ran (a cluster's directory), if anything."""

    def close(self) -> None:
        """Stop what this target started."""


class LocalTarget:
    """Local mode: the driver JVM runs the tasks, bound by the plan's prefix."""

    def __init__(self, tracker: ProcessTracker) -> None:
        self.tracker = tracker

    def prepare(self, placement: Placement, say: Say) -> None:
        return None  # the JVM starts with the application

    def submit(
        self, placement: Placement, job: str | Path, job_args: list[str], run_dir: Path, **options
    ) -> AppRun:
        driver = Driver.local(placement)
        return run_app(
            placement, job, job_args, run_dir, self.tracker, driver, SubmitOptions(**options)
        )

    @property
    def where(self) -> str | None:
        return None

    def close(self) -> None:
        return None


class ClusterTarget:
    """A standalone cluster numaspark started (or keeps), here or on hosts: an application
    is submitted to its master, the driver here."""

    tracker: ProcessTracker
    cluster: Cluster | None

    def submit(
        self, placement: Placement, job: str | Path, job_args: list[str], run_dir: Path, **options
    ) -> AppRun:
        if self.cluster is None:
            raise RuntimeError("prepare() starts the cluster before submit()")
        if self.cluster.driver_address:  # on other hosts: the executors reach the driver there
            # this machine's collectors cannot sample JVMs on other hosts: their placement is
            # read over SSH instead (the run's effective entries)
            options.update(collectors=None, host=self.cluster.driver_address)
        return run_app(
            placement,
            job,
            job_args,
            run_dir,
            self.tracker,
            Driver.standalone(self.cluster),
            SubmitOptions(**options),
        )

    @property
    def where(self) -> str | None:
        return str(self.cluster.directory) if self.cluster else None


class StandaloneTarget(ClusterTarget):
    """A standalone cluster on this host whose workers, and so their executors, are bound."""

    def __init__(self, tracker: ProcessTracker, root: Path, attached: Path | None = None) -> None:
        self.tracker = tracker
        self.root = root  # where the clusters it starts keep their state and logs
        self.cluster: Cluster | None = None
        self._shape: tuple | None = None
        self._owned = False
        if attached is not None:
            self.cluster = kept_clusters.attach(attached)
            self._shape = records.load(Placement, self.cluster.placement).shape

    def prepare(self, placement: Placement, say: Say) -> None:
        if self.cluster is not None and self._shape == placement.shape:
            return
        if self.cluster is not None and not self._owned:
            # checked before any input is generated: a mismatch is the user's to fix first
            raise UsageError(
                f"the cluster in {self.cluster.directory} runs {len(self._shape or ())} "
                "executor(s) placed differently from this run's options: give the options it "
                "was started with, or start a new cluster"
            )
        self.release()
        say(f"starting a standalone cluster: {len(placement.executors)} bound worker(s)")
        digest = hashlib.sha256(repr(placement.shape).encode()).hexdigest()[:10]
        self.cluster = Cluster.here(
            placement, self.root / f"cluster-{digest}", self.tracker, on_progress=say
        )
        self._shape, self._owned = placement.shape, True

    def release(self) -> None:
        """Stop the cluster this target started (never one it was given)."""
        if self.cluster is not None and self._owned:
            self.cluster.stop()
            self.cluster, self._shape, self._owned = None, None, False

    def close(self) -> None:
        self.release()


class HostsTarget(ClusterTarget):
    """A standalone cluster on the inventory's hosts; the driver runs here, reached by the
    executors at the inventory's driver address. Each host is planned from its own
    topology, read once over SSH."""

    def __init__(
        self, tracker: ProcessTracker, root: Path, inventory, topologies: dict | None = None
    ) -> None:

        self.tracker = tracker
        self.root = root
        self.inventory = inventory
        self.driver_address = driver_address(inventory)
        self.cluster: Cluster | None = None
        self._shape: tuple | None = None
        # each host's topology by name, read once (given: shared with other targets)
        self._topologies: dict = {} if topologies is None else topologies
        self.plans: list = []

    def plan(self, place: Callable) -> Placement:
        """Plan every host with ``place(topology)`` (its topology read once); the merged
        placement, and the per-host plans kept for ``prepare``."""

        return self.plan_each(lambda host, topology: place(topology))

    def plan_each(self, place: Callable) -> Placement:
        """As `plan`, with ``place(host, topology)``: a plan that differs by host."""

        self.plans = plan_hosts(self.inventory, place, self._topologies)
        return merge(self.plans)

    def prepare(self, placement: Placement, say: Say) -> None:

        if self.cluster is not None and self._shape == placement.shape:
            return
        self.close()
        say(
            f"starting a cluster on {len(self.plans)} host(s): {len(placement.executors)} "
            "bound worker(s)"
        )
        digest = hashlib.sha256(repr(placement.shape).encode()).hexdigest()[:10]
        self.cluster = Cluster.start(
            [(p.host, p.placement) for p in self.plans],
            placement,
            self.root / f"hosts-{digest}",
            self.tracker,
            driver_address=self.driver_address,
            encrypt=self.inventory.encrypt,
            on_progress=say,
        )
        self._shape = placement.shape

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster, self._shape = None, None


class ExternalTarget:
    """A cluster numaspark did not start (``--master spark://...``, ``yarn``, ``k8s://...``):
    the affinity plugin is shipped with the application (``spark.jars``), and what it
    reports from inside each executor (host, pid, CPUs, memory policy, pages per node)
    becomes the run's effective placement, since this machine cannot read those executors'
    /proc. Nothing is started or stopped here but the driver, which listens where the
    executors reach it (spark/address.py). The executors run the user's
    ``spark.pyspark.python``, else ``python3``: this machine's venv is not on their hosts,
    so a built-in workload ships numaspark's Python code with it (spark/pyfiles.py)."""

    def __init__(
        self,
        tracker: ProcessTracker,
        master: str,
        executor_wait_s: float = DEFAULT_WAIT_S,
        has: str | None = None,
        ui: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        driver_host: str | None = None,
    ) -> None:
        self.tracker = tracker
        self.master = master
        self.executor_wait_s = executor_wait_s  # an application with no executor by then stops
        self.has = has  # what the cluster has, in words (a standalone master's workers)
        self.ui = ui  # a standalone master's web UI: its workers, their room, their logs
        self.clock = clock
        self.driver_host = driver_host  # --driver-host
        self.address: DriverAddress | None = None
        self._said: str | None = None
        self.say: Say = lambda message: None

    def prepare(self, placement: Placement, say: Say) -> None:
        check_master(self.master)
        self.say = say
        if self.address is None:
            self.address = address_for(self.master, self.driver_host)

    def submit(
        self, placement: Placement, job: str | Path, job_args: list[str], run_dir: Path, **options
    ) -> AppRun:
        require_jar()
        cluster_mode = (options.get("app_conf") or {}).get(DEPLOY_MODE_KEY) == "cluster"
        reports = run_dir / PLACEMENT_FILE
        self._numaspark_conf(placement, job, run_dir, options, cluster_mode)
        drop = ("spark.executor.instances",) if self.master.startswith("spark://") else ()
        users = {**(options.get("app_conf") or {}), **options["extra_conf"]}
        pods = PodRun.start(self.master, users, run_dir) if self._on_k8s else None
        if pods is not None:
            options["extra_conf"] = layered(options["extra_conf"], pods.conf())
        address = self.address or address_for(self.master, self.driver_host)
        said = cluster_mode_line(self.master, job, run_dir) if cluster_mode else address.line(users)
        if said != self._said:  # once, unless an application changes it
            self._said = said
            self.say(said)
        options["extra_conf"].update(self._driver_python(users, cluster_mode))
        # cluster mode: the driver and its reports there (its event log, YARN or master say)
        dynamic = DynamicAllocation.of(users)
        wait = None if cluster_mode else self.first_executor(placement, reports, run_dir, dynamic)
        check = wait if pods is None else pods.check(wait)
        driver = Driver(
            master=self.master,
            drop_conf=drop,
            address=address,
            env=((PYTHON_ENV, EXECUTOR_PYTHON),),
            cluster_mode=cluster_mode,
        )
        app = None
        try:
            app = run_app(
                placement,
                job,
                job_args,
                run_dir,
                self.tracker,
                driver,
                SubmitOptions(check=check, **options),
            )
        finally:
            if cluster_mode and (app is None or app.failure is not None):
                self._stop_remote_driver(run_dir)
            if pods is not None:  # at the end, on failure and on Ctrl-C alike
                pods.end(self.say)
        if pods is not None and pods.driver_failure and app is not None:
            app.failure = app.failure or pods.driver_failure  # spark-submit only watched it
        return self._outcome(app, cluster_mode, reports, wait)

    def _numaspark_conf(
        self,
        placement: Placement,
        job: str | Path,
        run_dir: Path,
        options: dict,
        cluster_mode: bool,
    ) -> None:
        """numaspark's settings of a run, layered with the user's into
        ``options["extra_conf"]``: the executor pods' on Kubernetes (in cluster deploy mode
        the driver's pod's too), the plugin shipped, a built-in's Python code."""
        options["extra_conf"] = self._with_pods(placement, run_dir, options.get("extra_conf"))
        if cluster_mode and self._on_k8s:  # the driver's pod: the run's directory, mounted
            mine = {**(options.get("app_conf") or {}), **options["extra_conf"]}
            options["extra_conf"] = layered(driver_pod_conf(run_dir, job, mine), mine)
        plugin = shipped_plugin_conf(placement)
        if not cluster_mode:  # the driver here appends the executors' reports to this file
            plugin[PLACEMENT_KEY] = str(run_dir / PLACEMENT_FILE)
        options["extra_conf"] = layered(options.get("extra_conf") or {}, plugin)
        options["collectors"] = None  # the executors are not this machine's processes
        if options.get("app_conf") is None:  # a built-in: its tasks import numaspark's jobs
            options["extra_conf"] = layered(
                options["extra_conf"], {PYFILES_KEY: str(package_zip())}
            )

    def _driver_python(self, users: dict[str, str], cluster_mode: bool) -> dict[str, str]:
        """The driver's Python where the user named none and spark-submit's would be wrong:
        a driver pod's is its image's (not this machine's venv's, which spark-submit passes
        on); a driver here given the executors' would lack numaspark's venv."""
        if DRIVER_PYTHON_KEY in users:
            return {}
        if cluster_mode and self._on_k8s:
            return {DRIVER_PYTHON_KEY: users.get(PYTHON_KEY, EXECUTOR_PYTHON)}
        if PYTHON_KEY in users and not cluster_mode:
            return {DRIVER_PYTHON_KEY: spark_python() or sys.executable}
        return {}

    def _outcome(
        self, app: AppRun, cluster_mode: bool, reports: Path, wait: FirstExecutorWait | None
    ) -> AppRun:
        """What a run left: its executors' placement; a run numaspark stopped, killed over
        there (YARN, a standalone master) so that nothing of it stays (on Kubernetes its
        pods are deleted: PodRun.end)."""
        if cluster_mode:
            self._cluster_mode_outcome(app)
        else:
            app.effective = plugin_effective(reports)
        if app.failure is not None:  # stopped by numaspark: nothing of it may stay over there
            if self.master == "yarn":
                _kill_waiting(app)
            elif self.ui is not None and (wait.app_id if wait else app.app_id) is not None:
                _kill_standalone(self.ui, wait.app_id if wait else app.app_id)
        return app

    def _with_pods(self, placement: Placement, run_dir: Path, users: dict | None) -> dict:
        """On Kubernetes, the settings of executor pods that are Guaranteed and share their
        host's node slots (placement/kubelet.py run_pods) under the user's own (theirs win),
        their template written into the run; elsewhere the user's settings as they are."""
        if not self._on_k8s:
            return users or {}
        pods, template = run_pods(placement)
        written = run_dir / PLUGIN_POD_TEMPLATE
        run_dir.mkdir(parents=True, exist_ok=True)
        written.write_text(yaml.safe_dump(template, sort_keys=False))
        pods["spark.kubernetes.executor.podTemplateFile"] = str(written)
        return layered(pods, users or {})

    @property
    def _on_k8s(self) -> bool:
        return self.master.startswith("k8s://")

    def _stop_remote_driver(self, run_dir: Path) -> None:
        """A driver numaspark submitted in cluster mode outlives spark-submit here: kill it
        over there, through a standalone master's web UI or YARN's ResourceManager."""
        if self.master == "yarn":
            _kill_waiting(AppRun(run_dir=run_dir, log=submit_log(run_dir)))
            return
        driver_id = submitted_driver(submit_log(run_dir))
        if self.master.startswith("spark://") and self.ui is not None and driver_id:
            data = urllib.parse.urlencode({"id": driver_id, "terminate": "true"}).encode()
            with contextlib.suppress(urllib.error.URLError, OSError):
                urllib.request.urlopen(
                    f"{self.ui.rstrip('/')}/driver/kill/", data=data, timeout=5
                ).close()

    def _cluster_mode_outcome(self, app: AppRun) -> None:
        """What a cluster-mode run left: on a standalone master the driver's own end (its
        client here exits 0 whatever it was), then its executors' placement from the event
        log the driver wrote (in a directory it shares with this machine)."""
        if self.master.startswith("spark://") and app.failure is None:
            app.failure = self._driver_failure(app)
        if app.event_log is None:
            app.failure = app.failure or (
                f"no event log in {app.run_dir / 'eventlog'}: in cluster deploy mode the "
                "driver writes it on its own host, so numaspark's output directory must be "
                "on a path every host shares (give --out on a shared file system)"
            )
            return
        # lazy: it brings pandas, which a command that never runs cluster mode never loads
        from numaspark.metrics.eventlog import parse_event_log

        try:
            app.effective = parse_event_log(app.event_log, tasks=False).placement.effective()
        except UsageError as exc:
            app.placement_warnings.append(f"the event log's placement was not read: {exc}")

    def _driver_failure(self, app: AppRun) -> str | None:
        """Why a standalone driver in cluster mode failed, by its master's word (None: it
        finished, or its state is unknown, which is a warning)."""
        driver_id = submitted_driver(app.log) if app.log else None
        state = driver_state(self.ui, driver_id) if self.ui and driver_id else None
        if state is None:
            app.placement_warnings.append(
                f"the driver's final state is unknown (driver {driver_id or '?'}, master UI "
                f"{self.ui or 'not given: --master-ui'}): judged by spark-submit's exit"
            )
            return None
        if state == "FINISHED":
            return None
        return (
            f"the driver {driver_id} ended {state} on the cluster: see its stderr in the "
            f"master's UI ({self.ui})"
        )

    def first_executor(
        self,
        placement: Placement,
        reports: Path,
        run_dir: Path,
        dynamic: DynamicAllocation | None = None,
    ) -> FirstExecutorWait:
        """Why the application must stop before its first executor (the plugin reports from
        each executor as it starts): executors that die as they start, or none within
        ``executor_wait_s`` of its submission, or under dynamic allocation with no executor
        at the start, of the driver's first request for one (spark/first_executor.py)."""
        return FirstExecutorWait(
            self.master,
            self.executor_wait_s,
            reports,
            submit_log(run_dir),
            placement,
            say=self.say,
            has=self.has,
            ui=self.ui,
            clock=self.clock,
            dynamic=dynamic,
        )

    @property
    def where(self) -> str | None:
        return self.master

    def close(self) -> None:
        return None


def cluster_mode_line(master: str, job: str | Path, run_dir: Path) -> str:
    """What a cluster-mode run must say before it starts: where the driver runs, and where
    it reads the application from (on Kubernetes, where its pod finds the run's directory)."""
    if master.startswith("k8s://"):
        return (
            f"cluster deploy mode: the driver runs in a pod, which mounts {run_dir} from its "
            "node (its application is copied there, its event log written there): on a "
            "cluster of several nodes, give --out on a file system each mounts at that path"
        )
    where = "YARN's application master" if master == "yarn" else "a worker of " + master
    if master == "yarn" or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", str(job)):
        return f"cluster deploy mode: the driver runs in {where}"
    return (
        f"cluster deploy mode: the driver runs on {where}, which reads {job} at that path: "
        "it must be there on every worker (or give an hdfs:// or http:// URL)"
    )


def submitted_driver(log: Path) -> str | None:
    """The id a standalone master gave a driver submitted in cluster mode, as spark-submit's
    client logged it ("Driver successfully submitted as driver-...")."""
    try:
        found = re.findall(r"submitted as (driver-\S+)", log.read_text(errors="replace"))
    except OSError:
        return None
    return found[-1] if found else None


def driver_state(ui: str, driver_id: str) -> str | None:
    """A standalone driver's state as its master's JSON says it (FINISHED, FAILED, KILLED,
    ERROR; RUNNING and SUBMITTED while it runs); None when the master does not list it."""
    status = master_status(ui) or {}
    for entry in [*status.get("completeddrivers", []), *status.get("activedrivers", [])]:
        if entry.get("id") == driver_id:
            return entry.get("state")
    return None


def _kill_waiting(app: AppRun) -> None:
    """A YARN application whose driver numaspark stopped (no executor in time, a timeout)
    could still wait in the ResourceManager's queue: kill it there, by the id spark-submit
    printed when it submitted it."""
    try:
        text = app.log.read_text(errors="replace") if app.log else ""
    except OSError:
        return
    found = re.findall(r"Submitted application (application_\d+_\d+)", text)
    if found:
        with contextlib.suppress(UsageError):
            kill_application(YarnCluster.read().webapp, found[-1])


def _kill_standalone(ui: str, app_id: str) -> None:
    """A standalone application whose driver numaspark stopped is unregistered by the
    driver's shutdown hook; one whose driver died without it (SIGKILLed after the grace)
    stays until the master notices: kill it through the master's web UI (``/app/kill/``,
    ``spark.ui.killEnabled``, on by default), so that its workers stop launching executors."""
    status = master_status(ui) or {}
    if not any(a.get("id") == app_id for a in status.get("activeapps", [])):
        return
    data = urllib.parse.urlencode({"id": app_id, "terminate": "true"}).encode()
    with contextlib.suppress(urllib.error.URLError, OSError):
        urllib.request.urlopen(f"{ui.rstrip('/')}/app/kill/", data=data, timeout=5).close()


def check_master(master: str) -> None:
    """A master URL spark-submit can use; a standalone master must answer on its port."""
    import socket

    if master.startswith("spark://"):
        address, _, port = master.removeprefix("spark://").split(",")[0].rpartition(":")
        try:
            with socket.create_connection((address, int(port)), timeout=3):
                return
        except (OSError, ValueError) as exc:
            raise UsageError(
                f"--master {master}: no Spark master answers there ({exc}): is "
                "it running, and is the address right?"
            ) from None
    if master != "yarn" and not master.startswith(("k8s://", "mesos://")):
        raise UsageError(
            f"--master {master!r}: give spark://HOST:PORT, yarn or k8s://URL "
            "(local mode is --mode local)"
        )


def read_hosts_balancing(inventory) -> str:
    """The kernel's NUMA balancing on each host of ``inventory``, read over SSH, as one line
    for a study whose unbound configurations run with it as found."""
    states = []
    for host in inventory.hosts:
        shell = shell_for(host, local=False)
        try:
            value = shell.run(["cat", NUMA_BALANCING], timeout_s=20, what="numa_balancing")
            states.append(f"{host.name} {_BALANCING.get(value.strip(), value.strip() or '?')}")
        except HostError as exc:
            states.append(f"{host.name} unknown ({exc})")
        finally:
            shell.close()
    return "the unbound configurations ran with the kernel's NUMA balancing as found: " + (
        ", ".join(states)
    )


_BALANCING = {"0": "off", "1": "on", "2": "on (memory tiering)", "3": "on (and tiering)"}
