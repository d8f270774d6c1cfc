"""`RunResult`: one run, as stored. Typed, immutable, schema-versioned.

Schema history (``numaspark.run/N``):
1 - first version (numaspark 0.1): spec, environment, status, wall time,
    Spark aggregates, effective placement, check, app, artifacts. One run is
    one iteration; the iterations of one application share its app_id.
    Optional fields added since, absent (None) in older records: ``streaming``
    (input and processing rate, batch duration, end-to-end latency of a
    streaming workload's measured window); ``measurements`` (OS, NUMA, perf
    counters, GC per executor, executor CPU gap; numaspark 0.2); ``affinity``
    (the affinity plugin's record of each task's slot and CPU). ``readings``
    (lines for people) was written by numaspark 0.2 and is no longer: readings
    are computed when shown (decide/readings.py); old records keep theirs, and
    it is ignored when they load.
2 - a user's application is a workload (numaspark 0.3): ``spec.application`` (its path,
    content hash, class, arguments, name, its spark-submit line), ``spec.timed`` (which time
    ``wall_time_s`` is: ``iteration`` for the suite, ``app``, ``job`` or ``submit`` for an
    application), ``app.job_time_ms`` (the union of the jobs' spans), and ``check.command``
    (an application's ``--check``). Version 1 records load as they are (none of these set).
    Optional fields added since, absent (None) in older records: ``yarn`` (a run on YARN: its
    application id, and each executor's container id and host, from the executors' attributes
    in the event log); ``spec.numa_balancing`` ("on"/"off": the kernel's automatic NUMA
    balancing as switched for the run; None: left as found); ``app.spark_conf`` (the Spark
    configuration the application really ran with, key by key, from the event log's
    environment event) and ``app.ui_url`` (a user's application's Spark UI, when it had one).

Everything a reader needs is a typed field: the spec (`RunSpec`, with its
`Placement`), the environment (`Environment`) and the collectors' figures
(`Measurements`, whose accessors are the one place their keys are spelled).
The JSON on disk is what ``records.dump`` gives (each class's fields, and its ``__json__``
where the JSON differs), the same as before the types; ``records.load(RunResult, data)``
reads every version in `READABLE_SCHEMAS` (older ones through records.UPGRADES).
"""

from __future__ import annotations

import dataclasses
import enum
import time
import types
import typing
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from numaspark import records
from numaspark.errors import UsageError
from numaspark.metrics.registry import Metrics
from numaspark.placement import Placement, placement_to_dict
from numaspark.readback.proc import EffectiveJvm
from numaspark.records import Shape
from numaspark.workloads.application import Application

RUN_SCHEMA = "numaspark.run/2"
READABLE_SCHEMAS = ("numaspark.run/1", RUN_SCHEMA)
# what ``wall_time_s`` of an application's run can be (``--time``); the suite's is the
# iteration's time, measured by its driver around the iteration
TIMES = {
    "app": "application start to end (event log)",
    "job": "the union of its jobs' spans (no driver start-up)",
    "submit": "spark-submit's wall time",
}
DEFAULT_TIME = "app"


class Status(enum.StrEnum):
    """How a run ended. Stored as its value: ``ok``, ``failed`` or ``disturbed``."""

    OK = "ok"
    FAILED = "failed"
    DISTURBED = "disturbed"  # right answer, but Spark replaced an executor it lost meanwhile


@dataclass(frozen=True)
class RunSpec:
    """What was run, and how it was placed: the configuration and which iteration of it."""

    workload: str | None = None
    category: str | None = None
    size: str | None = None
    rows: int | None = None
    seed: int | None = None
    params: dict = field(default_factory=dict)
    stream: dict | None = None  # streaming: rate, duration_s, warmup_s
    mode: str | None = None  # "local" or "standalone"
    binding: str | None = None  # none, node, core, pu
    mem_policy: str | None = None
    numa_balancing: str | None = None  # "on"/"off" as asked for the run; None: left as found
    executors: int | None = None
    cores_per_executor: int | None = None
    label: str | None = None  # the configuration's name in tables
    config: str | None = None  # the experiment configuration's key (--resume matches it)
    iteration: int | None = None
    iterations: int | None = None
    warmup: bool = False
    repetition: int | None = None
    cluster: str | None = None  # the directory of the cluster it ran on
    spark_conf: dict = field(default_factory=dict)  # the user's settings
    placement: Placement | None = None
    dataset: dict | None = None  # the generated input: sha256, bytes, rows, seed, facts
    application: Application | None = None  # a user's application (None: a built-in)
    timed: str | None = None  # what wall_time_s is: "iteration", or TIMES' keys

    # the placement as its plan document (numaspark.placement/1, docs/schemas.md)
    __json__: ClassVar[Shape] = Shape(forms={"placement": (placement_to_dict, None)})

    @property
    def title(self) -> str:
        """The configuration as reports name it: what ran (a workload or an application),
        then the configuration's label, so two workloads' same layouts are told apart."""
        if not self.label:
            return self.workload or "?"
        return f"{self.workload} · {self.label}" if self.workload else self.label

    @property
    def configuration(self) -> str:
        """The configuration in words: its label, else its shape as people write it (mode,
        executors x task slots, binding, memory policy), never "None"."""
        if self.label:
            return self.label
        shape = f"{self.executors or 1}x{self.cores_per_executor or 'all'}"
        policy = f" mem={self.mem_policy}" if self.mem_policy else ""
        return f"{self.mode or '?'} {shape} bind={self.binding or 'none'}{policy}"

    @property
    def own_conf(self) -> dict[str, str]:
        """The user's Spark settings as given: numaspark's ``--conf``, then their
        application's spark-submit line's ``--conf`` (which numaspark's replace)."""
        line = self.application.line.conf if self.application is not None else {}
        return {**line, **self.spark_conf}

    @property
    def task_jvms(self) -> tuple:
        """The JVMs that ran tasks (executors; the driver in local mode)."""
        return self.placement.executors if self.placement is not None else ()

    @property
    def slots(self) -> int:
        """Task slots in all, by the placement (0 when none is recorded)."""
        return sum(j.cores for j in self.task_jvms)


@dataclass(frozen=True)
class Environment:
    """What a run's numbers depend on besides the spec: compared before runs are compared."""

    host: str | None = None
    kernel: str | None = None
    cpu_model: str | None = None
    java: str | None = None
    spark: str | None = None
    python: str | None = None
    numaspark: str | None = None
    topology_fingerprint: str | None = None
    numa_balancing: str | None = None
    transparent_hugepages: str | None = None
    cpus: int | None = None

    # must match for two runs' times to compare (pyperf refuses to mix such runs)
    MUST_MATCH = ("topology_fingerprint", "spark", "java")

    def differences(self, other: Environment) -> list[str]:
        """What differs from ``other`` that makes their times incomparable, in words."""
        return [
            f"{k}: {getattr(self, k)} vs {getattr(other, k)}"
            for k in self.MUST_MATCH
            if getattr(self, k) != getattr(other, k)
        ]


@dataclass(frozen=True)
class JvmUse:
    """One JVM's CPU use and scheduling in a window (the OS collector)."""

    name: str
    pid: int | None
    cpu_s: float  # user + system
    migrations: int
    context_switches_per_s: float | None
    # its Python workers' and daemons' CPU time (None: it had none; PySpark's executors)
    python_cpu_s: float | None = None


@dataclass(frozen=True)
class JvmLocality:
    """Where one JVM's resident pages were (the NUMA collector)."""

    name: str
    pid: int | None
    bound_nodes: list[int] | None  # None: unbound, nothing to judge
    share_on_bound_nodes: float | None
    bytes_per_node: dict[str, int]


@dataclass(frozen=True)
class Measurements:
    """What the collectors saw in one iteration's window, and what the run loop derived from it.

    Stored as the collectors wrote it (``data``, see collect/); these accessors are
    the one place its keys are read, so a renamed figure is renamed here only.
    """

    data: dict = field(default_factory=dict)

    __json__: ClassVar[Shape] = Shape(value="data")  # stored as the collectors wrote it

    @classmethod
    def of(cls, value: Measurements | dict | None) -> Measurements:
        """Wrap what a record holds (older readers passed dicts around)."""
        return value if isinstance(value, Measurements) else cls(dict(value or {}))

    def _section(self, name: str) -> dict:
        value = self.data.get(name)
        return value if isinstance(value, dict) else {}

    # -- os -------------------------------------------------------------------------
    @property
    def seconds(self) -> float | None:
        """The window's length as the OS collector measured it."""
        return self._section("os").get("seconds")

    @property
    def cpu_utilisation(self) -> float | None:
        return self._section("os").get("cpu_utilisation")

    @property
    def cpu_shares(self) -> dict[str, float | None]:
        """Machine-wide CPU time by kind: user, system, iowait (shares of all CPU time)."""
        os_figures = self._section("os")
        return {k: os_figures.get(f"cpu_{k}_share") for k in ("user", "system", "iowait")}

    @property
    def context_switches_per_s(self) -> float | None:
        """Machine-wide."""
        return self._section("os").get("context_switches_per_s")

    @cached_property
    def jvm_use(self) -> list[JvmUse]:
        return [
            JvmUse(
                name=j.get("name", "?"),
                pid=j.get("pid"),
                cpu_s=(j.get("cpu_user_s") or 0.0) + (j.get("cpu_system_s") or 0.0),
                migrations=j.get("migrations") or 0,
                context_switches_per_s=j.get("context_switches_per_s"),
                python_cpu_s=j.get("python_cpu_s"),
            )
            for j in self._section("os").get("jvms") or []
        ]

    # -- numa -----------------------------------------------------------------------
    @cached_property
    def locality(self) -> list[JvmLocality]:
        return [
            JvmLocality(
                name=j.get("name", "?"),
                pid=j.get("pid"),
                bound_nodes=j.get("bound_nodes"),
                share_on_bound_nodes=j.get("share_on_bound_nodes"),
                bytes_per_node=j.get("bytes_per_node") or {},
            )
            for j in self._section("numa").get("jvms") or []
        ]

    # -- perf -----------------------------------------------------------------------
    @property
    def counter_problem(self) -> str | None:
        """Why perf counted nothing (not installed, not permitted), if so."""
        return self._section("perf").get("problem")

    @property
    def counted(self) -> bool:
        """perf counted events (software ones at least) in this window."""
        return bool(self._section("perf").get("events"))

    @property
    def unsupported_counters(self) -> list[str]:
        return list(self._section("perf").get("unsupported") or [])

    def _derived(self, name: str) -> float | None:
        return (self._section("perf").get("derived") or {}).get(name)

    @property
    def ipc(self) -> float | None:
        return self._derived("ipc")

    @property
    def cpi(self) -> float | None:
        return self._derived("cpi")

    @property
    def llc_load_misses(self) -> float | None:
        events = self._section("perf").get("events") or {}
        return (events.get("LLC-load-misses") or {}).get("value")

    # -- derived by the run loop -------------------------------------------------------
    @property
    def gc(self) -> object:
        """GC per executor, from the event log (metrics/gc.py)."""
        return self.data.get("gc")

    @property
    def cpu_gap(self) -> dict | None:
        """OS CPU time of the task JVMs over Spark's executorCpuTime (``ratio``, both sides)."""
        return self.data.get("executor_cpu_gap") or None

    @property
    def process_tree(self) -> dict:
        """Per executor and stage, the RSS of its JVM, its Python workers and other
        processes from Spark's process-tree metrics (metrics/memory.py), or a ``note``."""
        return self._section("process_tree")

    @property
    def bandwidth(self) -> dict:
        """Estimated memory bandwidth: ``estimate_bps``, ``share``, ``region``, or
        ``unavailable`` with why."""
        return self._section("memory_bandwidth")


@dataclass(frozen=True)
class AppInfo:
    """The application a run belongs to, as spark-submit and its event log saw it."""

    wall_time_s: float | None = None  # spark-submit's wall time
    elapsed_ms: float | None = None  # application start to end (event log)
    job_time_ms: float | None = None  # the union of its jobs' spans (event log)
    returncode: int | None = None
    # the Spark configuration it really ran with, key by key: the "Spark Properties" of the
    # event log's environment event (the user's settings merged with numaspark's; secrets
    # as Spark redacts them). None: not recorded (older records, no event log)
    spark_conf: dict[str, str] | None = None
    ui_url: str | None = None  # its Spark UI, as its driver bound it (None: no UI, or unsaid)

    # absent when not recorded, as in the records before them
    __json__: ClassVar[Shape] = Shape(omit_none=("spark_conf", "ui_url"))

    def seconds(self, time: str) -> float | None:
        """One of `TIMES` in seconds, None where it was not measured."""
        value = {
            "app": self.elapsed_ms,
            "job": self.job_time_ms,
            "submit": None if self.wall_time_s is None else self.wall_time_s * 1000,
        }[time]
        return None if value is None else round(value / 1000, 3)


@dataclass(frozen=True)
class CheckVerdict:
    """Whether a run did its work right: the suite's answer check, or an application's
    ``--check`` command (its exit status)."""

    passed: bool
    details: str
    answer: dict | None = None  # the suite's job answer
    command: list[str] | None = None  # an application's --check argv

    __json__: ClassVar[Shape] = Shape(omit_none=("command",))  # the suite's checks as before


@dataclass(frozen=True)
class Artifacts:
    """Where a run's files are: its directory, event log, spark-submit's log, the collectors'
    samples, flame graphs and GC logs (paths as text; None or empty when it has none)."""

    run_dir: str | None = None
    event_log: str | None = None
    spark_submit_log: str | None = None
    collector_samples: str | None = None
    flame_graphs: tuple[str, ...] = ()
    gc_logs: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)  # keys a newer numaspark wrote

    # the files a run has, as before: absent optional ones left out
    __json__: ClassVar[Shape] = Shape(
        omit_empty=("collector_samples", "flame_graphs", "gc_logs"), extra="extra"
    )


@dataclass(frozen=True)
class YarnContainer:
    """One executor's YARN container, as Spark's event log names it."""

    executor: str
    container_id: str
    host: str | None = None  # the NodeManager's host
    node_http_address: str | None = None  # its web address (the container's logs)


@dataclass(frozen=True)
class YarnApplication:
    """The YARN application a run was, and its executors' containers."""

    application_id: str
    containers: tuple[YarnContainer, ...] = ()

    @classmethod
    def of(cls, app_id: str | None, executors: dict[str, dict]) -> YarnApplication | None:
        """From the event log's executors (their YARN attributes); None where none has any
        (a run elsewhere than YARN)."""
        containers = tuple(
            YarnContainer(
                executor=executor,
                container_id=attrs["CONTAINER_ID"],
                host=attrs.get("NM_HOST"),
                node_http_address=attrs.get("NM_HTTP_ADDRESS"),
            )
            for executor, entry in sorted(executors.items(), key=lambda e: _executor_order(e[0]))
            if "CONTAINER_ID" in (attrs := entry.get("attributes") or {})
        )
        if not containers or not app_id:
            return None
        return cls(application_id=app_id, containers=containers)


def _executor_order(executor: str) -> tuple[int, str]:
    return (int(executor), executor) if executor.isdigit() else (1 << 30, executor)


@dataclass(frozen=True)
class RunResult:
    spec: RunSpec  # workload, size, params, mode, layout, binding, placement, spark conf
    environment: Environment
    status: Status
    failure_reason: str | None = None
    wall_time_s: float | None = None
    app_id: str | None = None
    metrics: Metrics = field(default_factory=Metrics)  # Spark aggregates (metrics/registry.py)
    streaming: dict | None = None  # streaming workloads: metrics.streaming.STREAM_METRICS
    # what the collectors saw during this iteration: os, numa, perf, gc, executor CPU gap
    measurements: Measurements | None = None
    # core/pu binding: each task's slot and CPU, from the affinity plugin (spark/affinity.py)
    affinity: dict | None = None
    effective_placement: list[EffectiveJvm] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    check: CheckVerdict | None = None
    app: AppInfo = field(default_factory=AppInfo)  # the application that ran it
    artifacts: Artifacts = field(default_factory=Artifacts)  # paths: run dir, event log, logs
    yarn: YarnApplication | None = None  # a run on YARN: its application and containers
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    schema: str = RUN_SCHEMA

    # a run on YARN only has ``yarn``: other lines stay as they were; a record without a spec
    # or an environment (one a person wrote) reads them empty
    __json__: ClassVar[Shape] = Shape(
        omit_none=("yarn",), absent={"spec": {}, "environment": {}}, schemas=READABLE_SCHEMAS
    )

    def __post_init__(self) -> None:
        # records built from their JSON parts (tests, hand-written fixtures) get their types
        if isinstance(self.spec, dict):
            object.__setattr__(self, "spec", records.load(RunSpec, self.spec))
        if isinstance(self.environment, dict):
            object.__setattr__(self, "environment", records.load(Environment, self.environment))
        if isinstance(self.measurements, dict):
            object.__setattr__(self, "measurements", Measurements(self.measurements))
        if not isinstance(self.metrics, Metrics):
            object.__setattr__(self, "metrics", Metrics.of(self.metrics))
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))
        if isinstance(self.app, dict):
            object.__setattr__(self, "app", records.load(AppInfo, self.app))
        if isinstance(self.check, dict):
            object.__setattr__(self, "check", records.load(CheckVerdict, self.check))
        if isinstance(self.yarn, dict):
            object.__setattr__(self, "yarn", records.load(YarnApplication, self.yarn))
        if not isinstance(self.artifacts, Artifacts):
            object.__setattr__(self, "artifacts", records.load(Artifacts, self.artifacts or {}))
        if not all(isinstance(e, EffectiveJvm) for e in self.effective_placement):
            object.__setattr__(
                self, "effective_placement", [_effective(e) for e in self.effective_placement]
            )

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def place(self) -> str:
        """Where it ran, as comparisons tell runs apart: a cluster numaspark did not start (its
        master URL, or yarn), else the host the driver ran on; and the topology it was
        planned on."""
        cluster = self.spec.cluster or ""
        where = cluster if "://" in cluster or cluster == "yarn" else self.environment.host
        fingerprint = self.environment.topology_fingerprint
        return f"{where or 'a host not recorded'} (topology {fingerprint or 'not recorded'})"

    @property
    def measured(self) -> bool:
        """A measured run: ok, not a warm-up, timed. What every comparison counts."""
        return self.ok and not self.spec.warmup and self.wall_time_s is not None

    @property
    def figures(self) -> Measurements:
        """The measurements, empty when none were taken."""
        return self.measurements or Measurements()

    @property
    def key(self) -> str:
        """Identifies the configuration (not the repetition): runs with one key compare."""
        spec = self.spec
        return "|".join(
            str(v)
            for v in (
                spec.workload,
                spec.size,
                spec.mode,
                spec.binding,
                spec.mem_policy,
                spec.executors,
                spec.cores_per_executor,
            )
        )

    @property
    def config_key(self) -> str:
        """The experiment configuration's key, or the shape's key for a lone run."""
        return self.spec.config or self.key

    @property
    def settings(self) -> dict[str, str]:
        """The user's Spark settings (`RunSpec.own_conf`) at the values Spark ran them with,
        where the record has them (``app.spark_conf``)."""
        ran = self.app.spark_conf or {}
        return {key: ran.get(key, value) for key, value in self.spec.own_conf.items()}

    @property
    def name(self) -> str:
        """What the run ran, in tables: the workload's or the application's name."""
        return self.spec.workload or "?"

    def timed_by(self, time: str) -> RunResult:
        """This run with ``wall_time_s`` as ``time`` (one of `TIMES`), for an application's
        run; a run of the suite keeps its iteration's time."""
        if self.spec.application is None or self.spec.timed == time:
            return self
        return dataclasses.replace(
            self,
            wall_time_s=self.app.seconds(time),
            spec=dataclasses.replace(self.spec, timed=time),
        )


def _effective(entry: object) -> EffectiveJvm:
    if isinstance(entry, EffectiveJvm):
        return entry
    if not isinstance(entry, dict):
        raise TypeError(f"an effective placement entry is a {type(entry).__name__}, not an object")
    return records.load(EffectiveJvm, entry)


def retimed(results: Iterable[RunResult], time: str | None) -> list[RunResult]:
    """The runs with applications' times as ``time`` (``--time``); None keeps them."""
    if time is not None and time not in TIMES:
        raise UsageError(f"--time {time!r}: choose one of {', '.join(TIMES)}")
    return [r.timed_by(time) for r in results] if time else list(results)


def measured(results: Iterable[RunResult]) -> list[RunResult]:
    """The measured runs (ok, not warm-ups, timed): the one filter every comparison uses."""
    return [r for r in results if r.measured]


def refuse_mixed(results: list[RunResult], source: object, mixed: bool = False) -> None:
    """One line, unless ``mixed``, when ``results`` ran in more than one place (a cluster or
    host, and a topology: `RunResult.place`): their times do not compare."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.place] = counts.get(result.place, 0) + 1
    if mixed or len(counts) < 2:
        return
    listed = "; ".join(f"{place}: {n} run(s)" for place, n in counts.items())
    raise UsageError(
        f"{source} holds runs of {len(counts)} places, whose times do not compare ({listed}): "
        "give --mixed to compare them anyway, or a directory of one place's runs"
    )


def by_configuration(results: Iterable[RunResult]) -> dict[str, list[RunResult]]:
    """The measured runs of each configuration, by its key."""
    groups: dict[str, list[RunResult]] = {}
    for r in measured(results):
        groups.setdefault(r.config_key, []).append(r)
    return groups


def json_kinds(cls: type) -> dict[str, type | tuple[type, ...]]:
    """The JSON type each field of a record's class is stored as, read from its annotations:
    what the store checks a line against before decoding it (experiment/store.py)."""
    kinds: dict[str, type | tuple[type, ...]] = {}
    for name, hint in typing.get_type_hints(cls).items():
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if isinstance(hint, types.UnionType) and len(options) == 1:
            hint = options[0]  # X | None: X, or null
        origin = typing.get_origin(hint) or hint
        if not isinstance(origin, type):
            continue
        if issubclass(origin, (list, tuple)):
            kinds[name] = list
        elif issubclass(origin, str):  # str, and str-valued enums (Status)
            kinds[name] = str
        elif issubclass(origin, (int, float)) and not issubclass(origin, bool):
            kinds[name] = (int, float)
        elif issubclass(origin, dict) or dataclasses.is_dataclass(origin) or origin is Measurements:
            kinds[name] = dict
    return kinds
