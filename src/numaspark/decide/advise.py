"""Advice: rules that turn a run's numbers into what to change, and the command that tries it.

The rules are the studies' conclusions (DESIGN.md): GC grows with the heap and
several small executors beat one large one (up to 36%); heaps above 31 GB lose
compressed object pointers; an executor spanning NUMA nodes or with pages off
its node pays for remote memory (~10% on average); automatic NUMA balancing
moves pages of processes that are already bound; SMT helps some workloads and
hurts others; past the bandwidth knee more threads per node do not help. The
Spark-side rules (skew, spill, too few tasks per core, driver time) are
Sparklens' and Dr. Elephant's.

Each rule gives a `Finding` with a severity (none, low, moderate, severe,
critical), the evidence (numbers), a recommendation and, where it changes the
configuration, the changed `RunRequest`: the request the stored run came from
(experiment/request.py `request_of`) with the change made. The planner checks it
on the machine the run was recorded on (its stored topology, never this one),
with the function the run loop plans with; the command printed is the request's
``numaspark run`` (`run_command`) when the planner takes it, and none, with the
planner's reason in one line, when it refuses it. Where the run's machine is not
recorded the command is printed and said to be unchecked. An event log alone
names no run to repeat: its requests are templates (``numaspark run WORKLOAD``,
the log's mode and settings), not checked. A rule whose inputs are missing (an
event log has no placement; this machine has no hardware counters) is reported
as not assessed, with why, and never guessed.
"""

from __future__ import annotations

import dataclasses
import shlex
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from numaspark import records
from numaspark.decide.prior import Machine, moderate_cores
from numaspark.decide.thresholds import (
    BANDWIDTH_REGION,
    DRIVER_ONLY,
    GC_SHARE,
    NARROW_STAGES,
    REMOTE_PAGES,
    SMT_FASTER,
    SMT_SLOWER,
    TASK_SKEW,
    Severity,
    grade,
)
from numaspark.decide.whatif import driver_time_ms
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.request import (
    TEMPLATE_WORKLOAD,
    RunRequest,
    plan_request,
    request_of,
    run_command,
)
from numaspark.experiment.result import (
    JvmLocality,
    RunResult,
    RunSpec,
    by_configuration,
    measured,
    refuse_mixed,
)
from numaspark.experiment.store import ResultStore, recorded_topology
from numaspark.metrics.aggregate import task_total
from numaspark.metrics.eventlog import EventLog, parse_event_log
from numaspark.metrics.memory import process_tree_memory
from numaspark.metrics.registry import Metrics
from numaspark.placement import Binding, Layout, MemPolicy, Mode, PuOrder, spark_overhead
from numaspark.placement.devices import RESOURCE_KINDS
from numaspark.placement.plugin import DEVICE_RESOURCE_KEY, LEVEL_KEY
from numaspark.readback.plugin_reports import DRIVER, ReportedJvm
from numaspark.records import Shape
from numaspark.topology import CpuSet, Topology
from numaspark.units import human_size, jvm_size, parse_size

COMPRESSED_OOPS_LIMIT = 31 * 1024**3  # above ~32 GB the JVM turns compressed oops off
PARTITION_KEYS = ("spark.default.parallelism", "spark.sql.shuffle.partitions")
AQE_SKEW = ("spark.sql.adaptive.enabled", "spark.sql.adaptive.skewJoin.enabled")  # both default on
LAYOUT = frozenset(f.name for f in dataclasses.fields(Layout))

# a severity is stored as its word: none, low, moderate, severe, critical
records.value_type(Severity, lambda severity: severity.word, lambda word: Severity[word.upper()])


@dataclass
class Finding:
    rule: str
    severity: Severity
    finding: str
    evidence: dict
    recommendation: str = ""
    request: RunRequest | None = None  # the run that tries the change (`advise` checks it)
    command: str = ""  # printed: the request's numaspark run once checked, or another command
    check: str = ""  # one line when the planner did not take the request: why, or unchecked

    __json__: ClassVar[Shape] = Shape(skip=("request",))  # the command says what it runs


@dataclass
class NotAssessed:
    rule: str
    why: str


@dataclass
class Advice:
    subject: str  # the configuration or the event log advised on
    findings: list[Finding] = field(default_factory=list)
    not_assessed: list[NotAssessed] = field(default_factory=list)

    __json__: ClassVar[Shape] = Shape(
        computed=("worst",), order=("subject", "worst", "findings", "not_assessed")
    )

    @property
    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), default=Severity.NONE)


__all__ = [
    "NUMA_RULES",
    "Advice",
    "Finding",
    "NotAssessed",
    "Severity",
    "Subject",
    "advise",
    "advise_event_log",
    "advise_results",
    "grade",
]


@dataclass
class Subject:
    """What the rules look at: a stored run (with its app's event log), or an event log alone."""

    log: EventLog | None
    result: RunResult | None = None
    peers: list[RunResult] = field(default_factory=list)  # every run in the same results
    topology: Topology | None = None  # the machine the run was recorded on (never this one)

    @property
    def machine(self) -> Machine | None:
        return Machine.of(self.topology) if self.topology is not None else None

    def smaller_executors(self) -> dict[str, int]:
        """Several smaller executors on the run's own machine: the tuner's moderate width
        (decide/prior.py), at least two executors, the run's slots shared out; two halves
        of the slots when the machine is not known."""
        slots = self.slots() or 2
        machine = self.machine
        if machine is None:
            return {"executors": 2, "cores_per_executor": max(1, slots // 2)}
        per_node = max(1, round(machine.cores_per_node / moderate_cores(machine)))
        executors = max(2, machine.nodes * per_node)
        return {
            "executors": executors,
            "cores_per_executor": max(1, min(slots, machine.cores) // executors),
        }

    def smaller_executors_request(self) -> RunRequest:
        """The run with several smaller executors, each with the planner's auto heap (which
        fits the nodes and stays under 31 GB); a local run moves to a standalone cluster, as
        local mode has one JVM whatever the executor options say."""
        change: dict[str, object] = {"memory_per_executor": None, **self.smaller_executors()}
        if self.local:
            change["mode"] = Mode.STANDALONE
        return self.changed(**change)

    @property
    def conf(self) -> dict:
        """The Spark settings the run was given (an event log's: all its properties)."""
        if self.result is not None:
            return self.result.settings
        return self.log.spark_properties if self.log else {}

    def more_partitions(self, floor: int) -> dict[str, str]:
        """Shuffle partitions (SQL and RDD) of at least ``floor``, and at least twice what the
        run had: advice that repeats the run's own setting would change nothing."""
        change = {}
        for key in PARTITION_KEYS:
            try:
                had = int(self.conf.get(key) or 0)
            except (TypeError, ValueError):
                had = 0
            change[key] = str(max(floor, 2 * had))
        return change

    def twice_the_heap(self) -> RunRequest | None:
        """The run with twice its heap, where the heap is recorded and twice it stays under
        31 GB (whether it fits the machine is the planner's to say)."""
        heap = self.heap_bytes()
        if not heap or heap * 2 > COMPRESSED_OOPS_LIMIT:
            return None
        return self.changed(memory_per_executor=parse_size(jvm_size(heap * 2), "heap"))

    def doubled_heap(self) -> RunRequest | None:
        """`twice_the_heap`, where the planner also takes it on the run's machine."""
        request = self.twice_the_heap()
        return None if request is None or self.refusal(request) else request

    @property
    def spec(self) -> RunSpec:
        return self.result.spec if self.result else RunSpec()

    @property
    def local(self) -> bool:
        if self.result is not None:
            return self.spec.mode == "local"
        master = (self.log.spark_properties if self.log else {}).get("spark.master", "")
        # local-cluster[N,C,M] starts executors of their own: not local mode
        return master == "local" or master.startswith("local[")

    def task_jvms(self) -> tuple:
        return self.spec.task_jvms

    def reported(self) -> list[ReportedJvm]:
        """The task-running JVMs as the affinity plugin reported them from inside, from the
        event log (its placement events): any application with the plugin, numaspark's runs
        or not; the driver's own only in local mode, where it runs the tasks."""
        if self.log is None:
            return []
        jvms = self.log.placement.jvms(driver=True)
        if self.local:
            return jvms
        return [j for j in jvms if j.latest.executor != DRIVER]

    def heap_bytes(self) -> int | None:
        jvms = self.task_jvms()
        if jvms:
            return max(j.heap for j in jvms) or None
        properties = self.log.spark_properties if self.log else {}
        text = properties.get("spark.driver.memory" if self.local else "spark.executor.memory")
        if not text:
            return None
        try:
            return parse_size(text if text[-1].isalpha() else text + "m", "heap")
        except UsageError:  # a setting written in a form we do not read: no heap rule
            return None

    def overhead_bytes(self) -> int | None:
        """The executors' memoryOverhead: as set, else Spark's default for the heap."""
        text = self.conf.get("spark.executor.memoryOverhead")
        if text:
            try:
                return parse_size(text if text[-1].isalpha() else text + "m", "memoryOverhead")
            except UsageError:
                return None
        jvms = self.task_jvms()
        if jvms:
            return max(j.overhead for j in jvms) or None
        heap = self.heap_bytes()
        return spark_overhead(heap) if heap else None

    def python_memory(self) -> list[dict]:
        """Per executor, the peak RSS of its JVM and its Python workers: Spark's process-tree
        metrics (the run's window, or the whole log), else the affinity plugin's reports in
        the log; empty when neither was logged."""
        found: list[dict] = []
        if self.result is not None and self.result.figures.process_tree.get("executors"):
            found = list(self.result.figures.process_tree["executors"])
        elif self.log is not None:
            found = list(process_tree_memory(self.log).get("executors") or [])
        if not found:  # Spark's process-tree metrics off: the plugin's reports, if any
            found = [
                {
                    "executor": j.latest.executor,
                    "python_rss_bytes": j.python_rss_peak,
                    "jvm_rss_bytes": j.jvm_rss_peak,
                    "source": "the affinity plugin's reports",
                }
                for j in self.reported()
                if j.python_rss_peak
            ]
        # off local mode the driver's Python is the user's script, not a worker
        return [e for e in found if self.local or e["executor"] != "driver"]

    def executor_count(self) -> int | None:
        if self.result is not None and self.task_jvms():
            return len(self.task_jvms())
        if self.log is not None and self.log.executors:
            return len(self.log.executors)
        return None

    def slots(self) -> int | None:
        if self.task_jvms():
            return self.spec.slots or None
        if self.log is not None and self.log.executors:
            return sum(e.get("cores") or 0 for e in self.log.executors.values()) or None
        return None

    def request(self) -> RunRequest:
        """The request the run came from; from an event log alone, a template: its mode and
        its Spark settings, the workload to be filled in."""
        if self.result is not None:
            return request_of(self.spec)
        conf = {k: str(v) for k, v in self.conf.items() if k != "spark.master"}
        mode = Mode.LOCAL if self.local else Mode.STANDALONE
        return RunRequest(workload=TEMPLATE_WORKLOAD, layout=Layout(mode=mode), spark_conf=conf)

    def changed(self, conf: dict[str, str] | None = None, **changes: object) -> RunRequest:
        """The run's request with ``changes``: `Layout` fields (a new executor count replaces
        the other way of counting, and lets the planner share out the CPUs unless the cores
        are given too), other `RunRequest` fields, and Spark settings in ``conf``."""
        request = self.request()
        layout = {k: changes.pop(k) for k in list(changes) if k in LAYOUT}
        if "executors" in layout or "executors_per_node" in layout:
            layout.setdefault("executors", None)
            layout.setdefault("executors_per_node", None)
            layout.setdefault("cores_per_executor", None)
        return dataclasses.replace(
            request,
            layout=dataclasses.replace(request.layout, **layout),
            spark_conf={**request.spark_conf, **(conf or {})},
            **changes,
        )

    def refusal(self, request: RunRequest) -> str | None:
        """Why the planner refuses ``request`` on the run's own machine, in one line; None
        when it takes it, or cannot be asked (no recorded machine, or an event log alone)."""
        if self.topology is None or self.result is None:
            return None
        try:
            plan_request(self.topology, request)
        except NumasparkError as exc:  # PlacementError, or a UsageError of the layout's numbers
            return " ".join(str(exc).split())
        return None

    def settle(self, finding: Finding) -> Finding:
        """The command of ``finding``'s request, once the planner took it on the run's machine;
        no command and the planner's reason when it refuses it."""
        request = finding.request
        if request is None:
            return finding
        command = run_command(request, self.spec.application)
        if self.result is None:  # a template: there is no run, nor its machine, to check on
            return dataclasses.replace(finding, command=command)
        if self.topology is None:
            return dataclasses.replace(
                finding,
                command=command,
                check=(
                    "not checked by the planner: the run's machine is not recorded (no "
                    "topology.json with its results)"
                ),
            )
        refused = self.refusal(request)
        if refused:
            return dataclasses.replace(
                finding,
                command="",
                check=f"no command: the planner refuses it on the run's machine: {refused}",
            )
        return dataclasses.replace(finding, command=command)


Rule = Callable[[Subject], "Finding | NotAssessed"]


def _gc(subject: Subject) -> Finding | NotAssessed:
    if subject.result is not None and subject.result.metrics.gcShare is not None:
        share = subject.result.metrics.gcShare
        gc_ms = subject.result.metrics.jvmGCTime or 0.0
        run_ms = subject.result.metrics.executorRunTime or 0.0
    elif subject.log is not None and not subject.log.tasks.empty:
        gc_ms = float(subject.log.tasks["jvmGCTime"].sum())
        run_ms = float(subject.log.tasks["executorRunTime"].sum())
        share = gc_ms / run_ms if run_ms else 0.0
    else:
        return NotAssessed("gc", "no task metrics")
    heap = subject.heap_bytes()
    severity = GC_SHARE.grade(share)
    evidence = {
        "gc_share": round(share, 4),
        "gc_ms": gc_ms,
        "executor_run_ms": run_ms,
        "heap_bytes": heap,
    }
    text = f"GC takes {share:.0%} of executor time" + (
        f" with a {human_size(heap)} heap" if heap else ""
    )
    if severity is Severity.NONE:
        return Finding("gc", severity, text, evidence)
    bigger = subject.doubled_heap()
    if heap and bigger is not None:
        return Finding(
            "gc",
            severity,
            text,
            evidence,
            f"give each executor more heap ({human_size(heap)} -> "
            f"{jvm_size(heap * 2)}), or use more, smaller executors (numaspark "
            "study executors)",
            bigger,
        )
    why = "the heap is already large"
    if not heap:
        why = "the heap is not recorded"
    elif (twice := subject.twice_the_heap()) is not None:  # the planner refused it: its reason
        why = (
            f"twice the heap ({human_size(heap * 2)}) does not fit the run's machine: "
            f"{subject.refusal(twice)}"
        )
    return Finding(
        "gc",
        severity,
        text,
        evidence,
        f"use more, smaller executors: {why}",
        subject.smaller_executors_request(),
    )


def _heap(subject: Subject) -> Finding | NotAssessed:
    heap = subject.heap_bytes()
    if heap is None:
        return NotAssessed("heap-size", "the executor heap is not recorded")
    evidence = {"heap_bytes": heap, "limit_bytes": COMPRESSED_OOPS_LIMIT}
    if heap <= COMPRESSED_OOPS_LIMIT:
        return Finding(
            "heap-size",
            Severity.NONE,
            f"heap {human_size(heap)}: compressed object pointers on",
            evidence,
        )
    text = (
        f"heap {human_size(heap)} is above 31 GB: the JVM turns compressed object "
        "pointers off, every reference takes 8 bytes and the heap holds less"
    )
    if subject.local:  # one JVM: a smaller heap fits where the larger one did
        return Finding(
            "heap-size",
            Severity.MODERATE,
            text,
            evidence,
            "keep the heap at or under 31 GB",
            subject.changed(memory_per_executor=COMPRESSED_OOPS_LIMIT),
        )
    return Finding(
        "heap-size",
        Severity.MODERATE,
        text,
        evidence,
        "keep heaps at or under 31 GB: split the nodes among more executors (the "
        "auto heap stays under 31 GB)",
        subject.smaller_executors_request(),
    )


def _straddle(subject: Subject) -> Finding | NotAssessed:
    """JVMs that run tasks on more than one NUMA node: as planned (numaspark's runs), else as
    the plugin reported them (their CPUs against their host's nodes)."""
    jvms = [
        {"jvm": f"{j.role} {j.index}", "nodes": j.nodes, "cpus": str(j.cpus)}
        for j in subject.task_jvms()
    ] or [
        {"jvm": j.name, "host": j.latest.host, "nodes": j.nodes, "cpus": j.latest.cpus}
        for j in subject.reported()
        if j.nodes is not None
    ]
    if not jvms:
        return NotAssessed("numa-straddle", f"no placement recorded ({NO_REPORTS})")
    spanning = [j for j in jvms if len(j["nodes"]) > 1]
    evidence = {"jvms": [{**j, "nodes": str(j["nodes"])} for j in spanning]}
    if not spanning:
        return Finding(
            "numa-straddle", Severity.NONE, "every task-running JVM sits on one NUMA node", evidence
        )
    return Finding(
        "numa-straddle",
        Severity.MODERATE,
        f"{len(spanning)} of {len(jvms)} task-running JVM(s) span NUMA nodes: their "
        "threads reach remote memory (~10% slower on average)",
        evidence,
        "one executor (or more) per node, bound to it",
        subject.changed(
            executors_per_node=1,
            binding=Binding.NODE,
            mem_policy=MemPolicy.BIND,
            mode=Mode.STANDALONE,
        ),
    )


# why a placement rule cannot judge an event log: the plugin was not in the application
NO_REPORTS = (
    "an event log holds placement only from the affinity plugin: "
    "numaspark plan --target ... --out DIR writes its settings"
)


def _bound_locality(subject: Subject) -> list[JvmLocality]:
    """Each bound JVM's pages: the NUMA collector's (numaspark's runs here), else the
    plugin's reports (the share of the JVM's and its Python processes' pages on its nodes)."""
    locality = subject.result.figures.locality if subject.result else []
    bound = [j for j in locality if j.share_on_bound_nodes is not None]
    if bound:
        return bound
    return [
        JvmLocality(
            name=j.name,
            pid=j.latest.pid,
            bound_nodes=list(j.bound_nodes or ()),
            share_on_bound_nodes=j.latest.local_share,
            bytes_per_node=j.latest.bytes_per_node or {},
        )
        for j in subject.reported()
        if j.bound_nodes is not None and j.latest.local_share is not None
    ]


def _pages(subject: Subject) -> Finding | NotAssessed:
    bound = _bound_locality(subject)
    if not bound:
        why = "no bound JVM with per-node page counts"
        return NotAssessed("remote-pages", why if subject.result else f"{why} ({NO_REPORTS})")
    worst = min(bound, key=lambda j: j.share_on_bound_nodes or 0.0)
    off = 1 - (worst.share_on_bound_nodes or 0.0)
    severity = REMOTE_PAGES.grade(off)
    evidence = {
        "jvm": worst.name,
        "share_on_bound_nodes": worst.share_on_bound_nodes,
        "bound_nodes": worst.bound_nodes,
        "bytes_per_node": worst.bytes_per_node,
    }
    text = f"{worst.name}: {off:.0%} of its resident pages are off its bound node(s)"
    if severity is Severity.NONE:
        return Finding("remote-pages", severity, text, evidence)
    return Finding(
        "remote-pages",
        severity,
        text,
        evidence,
        "bind memory with the CPUs (numactl --membind)",
        subject.changed(mem_policy=MemPolicy.BIND),
    )


def _balancing_state(subject: Subject) -> tuple[str | None, str | None, str]:
    """kernel.numa_balancing and the binding the run had, and where they were read: the run's
    record, else the plugin's reports in the log (each host's; on if any host's is)."""
    if subject.result is not None:
        return subject.result.environment.numa_balancing, subject.spec.binding, "the run"
    hosts = subject.log.placement.balancing() if subject.log else {}
    if not hosts:
        return None, None, "log"
    setting = max(hosts.values())  # "0" off, "1" on, "2" tiering: any host on counts
    level = subject.conf.get(LEVEL_KEY, "none")
    bound = any(j.bound_nodes is not None for j in subject.reported())
    return setting, level if bound or level != "none" else "none", f"{len(hosts)} host(s)"


def _balancing(subject: Subject) -> Finding | NotAssessed:
    setting, binding, where = _balancing_state(subject)
    if setting is None:
        why = "kernel.numa_balancing was not readable"
        if where == "log":
            why = f"the kernel's settings are not in this event log ({NO_REPORTS})"
        return NotAssessed("numa-balancing", why)
    evidence = {"numa_balancing": setting, "binding": binding, "read_from": where}
    if setting == "0" or binding in (None, "none"):
        return Finding(
            "numa-balancing",
            Severity.NONE,
            f"numa_balancing={setting} with binding {binding}",
            evidence,
        )
    return Finding(
        "numa-balancing",
        Severity.LOW,
        "automatic NUMA balancing is on while the JVMs are bound: it unmaps pages to "
        "sample accesses and migrates pages of processes that are already placed",
        evidence,
        "turn it off while bound runs are measured (as root: sysctl -w "
        "kernel.numa_balancing=0), then run again",
        subject.request(),
    )


def _smt(subject: Subject) -> Finding | NotAssessed:
    medians: dict[str, list[float]] = {}
    workload = subject.spec.workload
    for r in measured(subject.peers):
        note = (r.spec.label or "").split(" ")[0]
        if r.spec.workload == workload and note in ("ST", "SMT"):
            medians.setdefault(r.spec.label, []).append(r.wall_time_s)
    st = [statistics.median(v) for k, v in medians.items() if k.startswith("ST ")]
    smt = [statistics.median(v) for k, v in medians.items() if k.startswith("SMT ")]
    if not st or not smt:
        return NotAssessed(
            "smt",
            "no SMT measurement of this workload in these results "
            "(numaspark study smt WORKLOAD measures it)",
        )
    gain = st[0] / smt[0]  # ST on n cores over SMT on the same n cores
    evidence = {"st_n_s": st[0], "smt_n_s": smt[0], "smt_gain": round(gain, 3)}
    if gain < SMT_SLOWER:
        return Finding(
            "smt",
            Severity.MODERATE,
            f"SMT made this workload {1 / gain - 1:.0%} slower on the same cores",
            evidence,
            "one task per physical core: bind at hardware-thread level, one thread per core",
            subject.changed(binding=Binding.PU, pu_order=PuOrder.CORES_FIRST),
        )
    if gain > SMT_FASTER:
        return Finding(
            "smt",
            Severity.LOW,
            f"SMT gave this workload {gain - 1:.0%} more on the same cores",
            evidence,
            "use both hardware threads of each core (core-level binding)",
            subject.changed(binding=Binding.CORE),
        )
    return Finding("smt", Severity.NONE, f"SMT changed this workload by {gain - 1:+.0%}", evidence)


def _bandwidth(subject: Subject) -> Finding | NotAssessed:
    found = subject.result.figures.bandwidth if subject.result else {}
    if "region" not in found:
        return NotAssessed(
            "memory-bandwidth",
            found.get("unavailable")
            or "no bandwidth estimate (needs LLC-miss counters and a probe)",
        )
    region = found["region"]
    severity = BANDWIDTH_REGION[region]
    text = (
        f"memory bandwidth ~{found['estimate_bps'] / 1e9:.1f} GB/s, {found['share']:.0%} of "
        f"the probed maximum: {region} region"
    )
    if severity is Severity.NONE:
        return Finding("memory-bandwidth", severity, text, found)
    return Finding(
        "memory-bandwidth",
        severity,
        text,
        found,
        "fewer threads per node, or executors spread over more nodes: past the knee "
        "more threads only queue for memory",
        subject.changed(executors_per_node=1, binding=Binding.NODE, mode=Mode.STANDALONE),
    )


def _stages_that_matter(log: EventLog):
    stages = log.stages
    if stages.empty or "stageDuration" not in stages:
        return stages
    total = float(stages["stageDuration"].fillna(0).sum())
    return stages[stages["stageDuration"].fillna(0) >= max(1000.0, 0.05 * total)]


def _skew(subject: Subject) -> Finding | NotAssessed:
    log = subject.log
    if log is None or log.tasks.empty:
        return NotAssessed("task-skew", "no event log with tasks")
    tasks = log.tasks[log.tasks["successful"] & log.tasks["duration"].notna()]
    worst = None
    for stage in _stages_that_matter(log).itertuples():
        durations = tasks[tasks["stageId"] == stage.stageId]["duration"]
        if len(durations) < 4:
            continue
        median = float(durations.median())
        ratio = float(durations.max()) / median if median > 0 else 0.0
        if worst is None or ratio > worst[1]:
            worst = (int(stage.stageId), ratio, median, float(durations.max()), len(durations))
    if worst is None:
        return NotAssessed("task-skew", "no stage of 1 s or more with 4 or more tasks")
    stage, ratio, median, longest, count = worst
    evidence = {
        "stage": stage,
        "longest_ms": longest,
        "median_ms": median,
        "ratio": round(ratio, 2),
        "tasks": count,
    }
    severity = TASK_SKEW.grade(ratio)
    text = f"stage {stage}: longest task {ratio:.1f}x the median ({longest:.0f} vs {median:.0f} ms)"
    if severity is Severity.NONE:
        return Finding("task-skew", severity, text, evidence)
    slots = subject.slots() or 1
    change = subject.more_partitions(4 * slots)
    # AQE's skew join is on by default since Spark 3.2 (and splits only sort-merge join
    # inputs): setting it is advice only where the run turned it, or AQE, off
    conf = subject.conf
    off = [key for key in AQE_SKEW if str(conf.get(key, "true")).strip().lower() == "false"]
    change.update({key: "true" for key in off})
    back_on = f"turn {' and '.join(off)} back on, " if off else ""
    how = f"{back_on}more partitions, or salt the hot key (AQE's skew join splits only joins)"
    return Finding(
        "task-skew",
        severity,
        text,
        evidence,
        f"split the skewed partitions: {how}",
        subject.changed(change),
    )


def _spill(subject: Subject) -> Finding | NotAssessed:
    if subject.result is not None:
        disk = subject.result.metrics.diskBytesSpilled or 0.0
        memory = subject.result.metrics.memoryBytesSpilled or 0.0
    elif subject.log is not None and not subject.log.tasks.empty:
        disk = float(subject.log.tasks["diskBytesSpilled"].sum())
        memory = float(subject.log.tasks["memoryBytesSpilled"].sum())
    else:
        return NotAssessed("spill", "no task metrics")
    evidence = {"disk_bytes_spilled": disk, "memory_bytes_spilled": memory}
    if disk <= 0 and memory <= 0:
        return Finding("spill", Severity.NONE, "no spill", evidence)
    severity = Severity.MODERATE if disk > 0 else Severity.LOW
    heap = subject.heap_bytes()
    doubled = subject.doubled_heap()
    how = "a larger heap, or more, smaller partitions"
    if heap and not doubled:
        how = "more, smaller partitions (twice the heap would pass 31 GB or not fit the machine)"
    elif not heap:
        how = "more, smaller partitions"
    partitions = subject.more_partitions(4 * (subject.slots() or 1))
    heap_change = {"memory_per_executor": doubled.layout.memory_per_executor} if doubled else {}
    return Finding(
        "spill",
        severity,
        f"tasks spilled {human_size(int(disk))} to disk ({human_size(int(memory))} in memory)",
        evidence,
        f"more execution memory per task: {how}",
        subject.changed(partitions, **heap_change),
    )


def _parallelism(subject: Subject) -> Finding | NotAssessed:
    log, slots = subject.log, subject.slots()
    if log is None or log.stages.empty or not slots:
        return NotAssessed("tasks-per-core", "no event log with stages, or no task slot count")
    stages = log.stages.dropna(subset=["stageDuration"])
    total = float(stages["stageDuration"].sum())
    if total <= 0:
        return NotAssessed("tasks-per-core", "no stage time")
    narrow = stages[stages["numTasks"] < slots]
    share = float(narrow["stageDuration"].sum()) / total
    evidence = {
        "slots": slots,
        "stage_time_with_fewer_tasks_than_slots": round(share, 3),
        "stages": [int(s) for s in narrow["stageId"]],
    }
    text = f"{share:.0%} of stage time ran with fewer tasks than the {slots} task slots"
    severity = NARROW_STAGES.grade(share)
    if severity is Severity.NONE:
        return Finding("tasks-per-core", severity, text, evidence)
    return Finding(
        "tasks-per-core",
        severity,
        text,
        evidence,
        "give every stage 2-3 tasks per slot (partitions, input splits)",
        subject.changed(subject.more_partitions(3 * slots)),
    )


def _driver(subject: Subject) -> Finding | NotAssessed:
    log = subject.log
    if log is None or log.start_time is None or log.end_time is None:
        return NotAssessed("driver-time", "no finished event log")
    total = float(log.end_time - log.start_time)
    if total < 0:
        return NotAssessed("driver-time", "the log ends before the application starts")
    if total == 0:
        return NotAssessed("driver-time", "the application took no time")
    driver = driver_time_ms(log)
    share = driver / total
    evidence = {"driver_ms": driver, "application_ms": total, "share": round(share, 3)}
    text = f"{share:.0%} of the application ran no job (driver only: start-up, planning, Python)"
    severity = DRIVER_ONLY.grade(share)
    if severity is Severity.NONE:
        return Finding("driver-time", severity, text, evidence)
    return Finding(
        "driver-time",
        severity,
        text,
        evidence,
        "that time does not shrink with executors or cores; measure what more "
        "cores would give before adding them",
        command=shlex.join(["numaspark", "whatif", str(log.path)]),
    )


def _executors(subject: Subject) -> Finding | NotAssessed:
    count = subject.executor_count()
    metrics = subject.result.metrics if subject.result else Metrics()
    if subject.log is not None and not subject.log.tasks.empty and not metrics.measured:
        tasks = subject.log.tasks
        run = float(tasks["executorRunTime"].sum())
        remote_bytes = float(tasks["shuffleRemoteBytesRead"].sum())
        metrics = Metrics(
            gcShare=float(tasks["jvmGCTime"].sum()) / run if run else None,
            shuffleRemoteBytesRead=remote_bytes,
            shuffleTotalBytesRead=remote_bytes + float(tasks["shuffleLocalBytesRead"].sum()),
        )
    if count is None or metrics.gcShare is None:
        return NotAssessed("executor-count", "no executor count or GC share")
    gc = metrics.gcShare
    total = metrics.shuffleTotalBytesRead or 0.0
    remote = (metrics.shuffleRemoteBytesRead or 0.0) / total if total else 0.0
    evidence = {
        "executors": count,
        "gc_share": round(gc, 4),
        "remote_shuffle_share": round(remote, 3),
    }
    if count == 1 and gc >= 0.10 and not subject.local:
        return Finding(
            "executor-count",
            Severity.MODERATE,
            f"one executor with {gc:.0%} GC: one large heap collects longer",
            evidence,
            "several smaller executors (up to 36% faster through less GC in the studies)",
            subject.smaller_executors_request(),
        )
    if count == 1 and gc >= 0.10:
        return Finding(
            "executor-count",
            Severity.MODERATE,
            f"one JVM (local mode) with {gc:.0%} GC",
            evidence,
            "several smaller executors on a standalone cluster",
            subject.smaller_executors_request(),
        )
    if count > 1 and remote >= 0.5 and gc < 0.05:
        return Finding(
            "executor-count",
            Severity.LOW,
            f"{remote:.0%} of shuffle bytes crossed executors, with little GC",
            evidence,
            "fewer, larger executors keep more of the shuffle in one JVM",
            subject.changed(executors=max(1, count // 2)),
        )
    return Finding(
        "executor-count",
        Severity.NONE,
        f"{count} executor(s): GC {gc:.0%}, {remote:.0%} of shuffle bytes remote",
        evidence,
    )


PYSPARK_MEMORY = "spark.executor.pyspark.memory"


def _python_cpu(subject: Subject) -> Finding | NotAssessed:
    """A PySpark run's CPU time: the JVMs', their Python workers' and Spark's task CPU, and
    which dominates (executorCpuTime counts the JVMs' task threads, never Python's)."""
    gap = subject.result.figures.cpu_gap if subject.result is not None else None
    if not gap and subject.log is not None:
        gap = _reported_cpu_gap(subject.log)
    if not gap or gap.get("python_cpu_s") is None:
        return NotAssessed(
            "python-cpu",
            "no Python workers' CPU time measured (not a PySpark "
            "application, or measured from an event log alone)",
        )
    jvm, python, task = gap["os_cpu_s"], gap["python_cpu_s"], gap["spark_executor_cpu_s"]
    evidence = {"jvm_cpu_s": jvm, "python_cpu_s": python, "spark_executor_cpu_s": task}
    text = (
        f"CPU time: JVMs {jvm:.1f} s, Python workers {python:.1f} s, Spark's task CPU {task:.1f} s"
    )
    if python < jvm:
        return Finding("python-cpu", Severity.NONE, f"{text}: the JVMs dominate", evidence)
    return Finding(
        "python-cpu",
        Severity.LOW,
        f"{text}: the Python workers dominate",
        evidence,
        "judge this application by its Python workers' CPU time: Spark's task "
        "figures (executorCpuTime, the CPU gap) count only the JVMs' task threads; "
        "the workers run on their executor's CPUs, so give the executors the cores "
        "(spark.task.cpus caps each worker's BLAS threads)",
    )


def _reported_cpu_gap(log: EventLog) -> dict | None:
    """The CPU gap of an event log alone: the executors' JVM and Python CPU time as the
    plugin reported them, Spark's task CPU from the log's tasks."""
    gap = log.placement.cpu_gap()
    if gap is None:
        return None
    task_ms = task_total(log, "executorCpuTime")  # the registry's unit: ms
    return {**gap, "spark_executor_cpu_s": round(task_ms / 1000, 2)}


def _python_memory(subject: Subject) -> Finding | NotAssessed:
    """The Python workers' resident memory against what the executor sets aside for them:
    spark.executor.pyspark.memory when set, else the memoryOverhead they live in."""
    peaks = subject.python_memory()
    if not peaks:
        return NotAssessed(
            "python-memory",
            "no Python workers' memory measured (not a PySpark application, or Spark's "
            "process-tree metrics were off and the affinity plugin was not in it)",
        )
    worst = max(peaks, key=lambda e: e["python_rss_bytes"])
    python, executor = worst["python_rss_bytes"], worst["executor"]
    heap = subject.heap_bytes()
    evidence = {
        "executor": executor,
        "python_rss_bytes": python,
        "jvm_rss_bytes": worst["jvm_rss_bytes"],
        "heap_bytes": heap,
    }
    suggested = max(python * 3 // 2, 256 * 1024**2)
    raise_it = subject.changed(conf={PYSPARK_MEMORY: jvm_size(suggested)})
    text = f"executor {executor}'s Python workers peaked at {human_size(python)}"
    limit = subject.conf.get(PYSPARK_MEMORY)
    if limit:
        return _python_memory_limited(limit, text, evidence, suggested, raise_it)
    return _python_memory_in_overhead(subject.overhead_bytes(), text, evidence, suggested, raise_it)


def _python_memory_limited(
    limit: str, text: str, evidence: dict, suggested: int, raise_it: RunRequest
) -> Finding | NotAssessed:
    """The workers' peak against spark.executor.pyspark.memory (``limit``; MiB without a
    unit): each worker is limited to its share of it, and fails with MemoryError past it."""
    python = evidence["python_rss_bytes"]
    try:
        allowed = parse_size(limit if limit[-1].isalpha() else limit + "m", PYSPARK_MEMORY)
    except UsageError:
        return NotAssessed("python-memory", f"{PYSPARK_MEMORY}={limit} is not a size we read")
    evidence["pyspark_memory_bytes"] = allowed
    if python <= allowed * 0.9:
        return Finding(
            "python-memory",
            Severity.NONE,
            f"{text}, within {PYSPARK_MEMORY} {human_size(allowed)}",
            evidence,
        )
    return Finding(
        "python-memory",
        Severity.SEVERE,
        f"{text}, at {PYSPARK_MEMORY} {human_size(allowed)}: each worker is "
        "limited to its share of it, and fails with MemoryError past it",
        evidence,
        f"raise {PYSPARK_MEMORY} to {jvm_size(suggested)}",
        raise_it,
    )


def _python_memory_in_overhead(
    overhead: int | None, text: str, evidence: dict, suggested: int, raise_it: RunRequest
) -> Finding:
    """The workers' peak against the memoryOverhead they share with the JVM's off-heap
    memory (spark.executor.pyspark.memory unset): a container is killed past it."""
    python = evidence["python_rss_bytes"]
    evidence["overhead_bytes"] = overhead
    if overhead is None or python <= overhead // 2:
        within = f", within the {human_size(overhead)} overhead" if overhead else ""
        return Finding("python-memory", Severity.NONE, f"{text}{within}", evidence)
    severity = Severity.MODERATE if python > overhead else Severity.LOW
    return Finding(
        "python-memory",
        severity,
        f"{text}, against a memoryOverhead of {human_size(overhead)} that they share "
        f"with the JVM's off-heap memory ({PYSPARK_MEMORY} unset): a YARN or "
        "Kubernetes container is killed past heap + overhead; standalone and local "
        "mode limit nothing, and the workers compete with the JVM for the node's "
        "memory",
        evidence,
        f"set {PYSPARK_MEMORY} to {jvm_size(suggested)}: their own share, added to "
        "the container (numaspark plan --target yarn|k8s --python-memory sizes it)",
        raise_it,
    )


def _devices_of(jvm: ReportedJvm) -> list[dict]:
    """A JVM's devices as evidence: each resource's address, PCI function and node."""
    keys = ("resource", "address", "pci_busid", "node")
    return [{k: d.get(k) for k in keys} for d in jvm.latest.devices or ()]


def _device_fix(subject: Subject, jvms: list[ReportedJvm]) -> str:
    """``numaspark plan`` giving each executor the devices of its own node, as many of each
    resource as these executors had (the cluster manager's target from the log's master)."""
    counts: dict[str, int] = {}
    for jvm in jvms:
        for device in jvm.latest.devices or ():
            name = str(device.get("resource"))
            had = sum(1 for d in jvm.latest.devices or () if d.get("resource") == name)
            counts[name] = max(counts.get(name, 0), had)
    flags = [
        flag
        for name, n in sorted(counts.items())
        if name in RESOURCE_KINDS
        for flag in (
            ["--gpus-per-executor", str(n)] if name == "gpu" else ["--resource", f"{name}={n}"]
        )
    ]
    master = str(subject.conf.get("spark.master", ""))
    target = "yarn" if master == "yarn" else "k8s" if master.startswith("k8s://") else "standalone"
    return shlex.join(
        ["numaspark", "plan", "--target", target, "--bind", "node", *flags, "--out", "DIR"]
    )


def _device_node(subject: Subject) -> Finding | NotAssessed:
    """Executors whose devices (the resources Spark gave them, each device's node read from
    sysfs inside its host by the plugin) sit on another node than their CPUs."""
    reported = subject.reported()
    given = [j for j in reported if j.latest.devices]
    if not given:
        why = "no executor reported devices (none was given a resource: spark.executor.resource"
        return NotAssessed("device-node", f"{why}.NAME.amount)" if reported else NO_REPORTS)
    judged = [j for j in given if j.device_nodes and j.nodes is not None]
    if not judged:
        unknown = next((d.get("unknown") for j in given for d in j.latest.devices or ()), None)
        why = f"their nodes are not known ({unknown})" if unknown else "their hosts are unknown"
        return NotAssessed("device-node", f"executors reported devices, but {why}")
    off = [j for j in judged if j.nodes != j.device_nodes]
    evidence = {
        "executors": [
            {
                "jvm": j.name,
                "host": j.latest.host,
                "devices": _devices_of(j),
                "device_nodes": str(j.device_nodes),
                "cpu_nodes": str(j.nodes),
            }
            for j in off
        ]
    }
    if not off:
        text = f"every executor given devices ({len(judged)}) runs on its devices' node(s)"
        return Finding("device-node", Severity.NONE, text, evidence)
    first = off[0]
    apart = [j for j in off if not set(j.nodes or ()) & set(j.device_nodes)]
    return Finding(
        "device-node",
        Severity.MODERATE if apart else Severity.LOW,
        f"{len(off)} of {len(judged)} executor(s) given devices run on other nodes than their "
        f"devices: {first.name} on node(s) {first.nodes}, its devices on node(s) "
        f"{first.device_nodes}: host-to-device copies and the threads that feed them cross "
        "the interconnect",
        evidence,
        _device_advice(subject),
        command=_device_fix(subject, off),
    )


def _device_advice(subject: Subject) -> str:
    """What binds executors by their devices, or, where level node was on, why it did not."""
    if str(subject.conf.get(LEVEL_KEY, "none")).strip().lower() == "node":
        return (
            "level node is set, yet they were not bound by their devices: each one's choice "
            "says why (an older plugin, their devices' node outside their container's CPUs, "
            f"or a resource {DEVICE_RESOURCE_KEY} does not name); or let numaspark plan give "
            "each executor its own node's devices"
        )
    return (
        "bind each executor to its devices' node: the affinity plugin does it from inside on "
        f"any cluster manager (--conf {LEVEL_KEY}=node; {DEVICE_RESOURCE_KEY} names the "
        "resources, default gpu), or numaspark plan gives each executor its own node's devices"
    )


def _nic_node(subject: Subject) -> Finding | NotAssessed:
    """Executors on another node than the interface their traffic leaves by (the route to
    the driver, as the plugin read it): advice only, nothing is bound by it."""
    reported = subject.reported()
    with_nic = [j for j in reported if (j.latest.nic or {}).get("name")]
    if not with_nic:
        why = "no executor reported the interface its traffic leaves by (an older plugin)"
        return NotAssessed("nic-node", why if reported else NO_REPORTS)
    known = [j for j in with_nic if j.nic_node is not None and j.nodes is not None]
    if not known:
        nic = with_nic[0].latest.nic or {}
        why = nic.get("unknown") or "its node, or the executor's host, is not known"
        return NotAssessed("nic-node", f"the interface {nic['name']}: {why}")
    elsewhere = [j for j in known if j.nic_node not in (j.nodes or ())]
    interfaces = sorted({(str(j.latest.host), j.latest.nic["name"], j.nic_node) for j in known})
    evidence = {
        "executors": len(known),
        "interfaces": [{"host": h, "name": n, "node": node} for h, n, node in interfaces],
        "elsewhere": [
            {"jvm": j.name, "host": j.latest.host, "nodes": str(j.nodes)} for j in elsewhere
        ],
    }
    first = (elsewhere or known)[0]
    iface, node = first.latest.nic["name"], first.nic_node
    if not elsewhere:
        text = f"every executor runs on the node of the interface it talks through ({iface}, node {node})"
        return Finding("nic-node", Severity.NONE, text, evidence)
    nodes = CpuSet(n for j in elsewhere for n in j.nodes or ())
    return Finding(
        "nic-node",
        Severity.LOW,
        f"{len(elsewhere)} of {len(known)} executor(s) run on node {nodes} while their traffic "
        f"leaves by {iface} on node {node}: their shuffle and the driver's messages cross the "
        "interconnect to reach it",
        evidence,
        f"try binding one executor per node and comparing the executors of node {node} with "
        f"the others (shuffle fetch wait, task times); where node {node}'s are faster, give "
        f"that node the shuffle-heavy executors, and keep {iface}'s interrupts on its CPUs "
        "(/proc/irq/N/smp_affinity_list). Advice only: numaspark binds nothing by it",
    )


RULES: tuple[Rule, ...] = (
    _gc,
    _heap,
    _straddle,
    _pages,
    _balancing,
    _smt,
    _bandwidth,
    _skew,
    _spill,
    _parallelism,
    _driver,
    _executors,
    _python_cpu,
    _python_memory,
    _device_node,
    _nic_node,
)


# what an event log alone tells of placement: the rules of the table of many logs
NUMA_RULES: tuple[Rule, ...] = (_straddle, _pages, _balancing, _python_cpu, _python_memory)


def advise(subject: Subject, name: str, rules: tuple[Rule, ...] = RULES) -> Advice:
    advice = Advice(name)
    for rule in rules:
        outcome = rule(subject)
        if isinstance(outcome, NotAssessed):
            advice.not_assessed.append(outcome)
        else:
            advice.findings.append(subject.settle(outcome))
    advice.findings.sort(key=lambda f: -f.severity)
    return advice


def _name(spec: RunSpec) -> str:
    """A configuration without a study label, as people write it."""
    what = f"{spec.workload} {spec.size}" if spec.size else f"{spec.workload}"
    return f"{what}: {spec.configuration}"


def recorded_machine(source: Path) -> Machine | None:
    """The machine of the results ``source`` is (or is in), from its stored topology."""

    topology, path = recorded_topology(source)
    return Machine.of(topology, str(path)) if topology else None


def advise_event_log(path: Path) -> Advice:
    """Advice on an event log alone: its commands are templates (no stored run to repeat);
    the machine of the results it is in, if any, sizes the smaller executors."""
    topology, _ = recorded_topology(path)
    return advise(Subject(parse_event_log(path), topology=topology), str(path))


def advise_results(results: list[RunResult], topology: Topology | None = None) -> list[Advice]:
    """One `Advice` per configuration: its median run, and its application's event log;
    ``topology``: the machine the runs were recorded on (None: not recorded)."""
    groups = by_configuration(results)
    advices = []
    logs: dict[str, EventLog | None] = {}
    for runs in groups.values():
        runs.sort(key=lambda r: r.wall_time_s)
        median = runs[(len(runs) - 1) // 2]
        path = median.artifacts.event_log
        if path not in logs:
            try:
                logs[path] = parse_event_log(path) if path and Path(path).exists() else None
            except (NumasparkError, OSError, ValueError):  # a damaged log: its rules unassessed
                logs[path] = None
        subject = Subject(logs[path], median, results, topology)
        advices.append(
            advise(subject, median.spec.title if median.spec.label else _name(median.spec))
        )
    return advices


def advise_source(source: Path, mixed: bool = False) -> list[Advice]:
    """Advice on a results directory (one per configuration; runs of several places refused
    unless ``mixed``) or on one event log."""

    if not source.exists():
        raise UsageError(f"{source} does not exist: give a results directory or an event log")
    store = ResultStore(source)
    if not (source.is_dir() and store.path.exists()):
        return [advise_event_log(source)]
    stored = store.load()
    refuse_mixed(stored, source, mixed)
    advices = advise_results(stored, recorded_topology(source)[0])
    if not advices:
        raise UsageError(f"{source}: no measured ok run to advise on")
    return advices
