"""What the rules look at (`Subject`): a stored run, or an event log alone, with what the
rules ask of it (its heap, slots, executors, Spark settings) and the changed requests they
advise, checked by the planner on the run's own machine."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from numaspark.decide.advise.findings import Finding
from numaspark.decide.advise.settings import (
    changed_settings,
    layout_settings,
    submit_options,
    users_settings,
)
from numaspark.decide.prior import Machine, moderate_cores
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.request import (
    TEMPLATE_WORKLOAD,
    RunRequest,
    plan_request,
    request_of,
    run_command,
)
from numaspark.experiment.result import RunResult, RunSpec
from numaspark.metrics.eventlog import EventLog
from numaspark.metrics.executors import churn
from numaspark.metrics.memory import process_tree_memory
from numaspark.placement import Layout, Mode, spark_overhead
from numaspark.readback.plugin_reports import DRIVER, ReportedJvm
from numaspark.topology import Topology
from numaspark.units import jvm_size, parse_size

COMPRESSED_OOPS_LIMIT = 31 * 1024**3  # above ~32 GB the JVM turns compressed oops off
PARTITION_KEYS = ("spark.default.parallelism", "spark.sql.shuffle.partitions")
LAYOUT = frozenset(f.name for f in dataclasses.fields(Layout))


# why a placement rule cannot judge an event log: the plugin was not in the application (the
# same words for every such rule, so that the cause is said once)
NO_REPORTS = (
    "no placement reports in the log: an event log holds placement only from the affinity "
    "plugin (numaspark plan --target ... --out DIR writes its settings)"
)


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
        (decide/prior.py), at least two executors, the run's slots shared out; where the
        machine is not known, twice the executors it had, each with half their slots."""
        slots = self.slots() or 2
        machine = self.machine
        if machine is None:
            executors = 2 * (self.executor_count() or 1)
            return {"executors": executors, "cores_per_executor": max(1, slots // executors)}
        per_node = max(1, round(machine.cores_per_node / moderate_cores(machine)))
        executors = max(2, machine.nodes * per_node)
        return {
            "executors": executors,
            "cores_per_executor": max(1, min(slots, machine.cores) // executors),
        }

    def smaller_executors_request(self) -> RunRequest | None:
        """The run with several smaller executors, each with the planner's auto heap (which
        fits the nodes and stays under 31 GB); a local run moves to a standalone cluster, as
        local mode has one JVM whatever the executor options say. None where its executors
        run one task each already (no smaller one is possible)."""
        slots, count = self.slots(), self.executor_count()
        if self.machine is None and slots and count and slots <= count:
            return None
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
        """The task-running JVMs: an event log's most alive at once (dynamic allocation adds
        and removes executors: each one ever added is not the application's width)."""
        if self.result is not None and self.task_jvms():
            return len(self.task_jvms())
        if self.log is not None and self.log.executors:
            return churn(self.log).peak_executors or len(self.log.executors)
        return None

    def slots(self) -> int | None:
        """Task slots: an event log's most alive at once, as `executor_count`."""
        if self.task_jvms():
            return self.spec.slots or None
        if self.log is not None and self.log.executors:
            peak = churn(self.log).peak_slots
            return peak or sum(e.get("cores") or 0 for e in self.log.executors.values()) or None
        return None

    def request(self) -> RunRequest:
        """The request the run came from; from an event log alone, a template: its mode and
        its Spark settings, the workload to be filled in."""
        if self.result is not None:  # what the run was given: its user's, kept whole (an
            # address or a port pinned on purpose), less the launcher's JVM flags
            request = request_of(self.spec)
            given = users_settings(request.spark_conf, drop_own=False)
            return dataclasses.replace(request, spark_conf=given)
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
        """The suggestion of ``finding``'s request: for an event log alone, the settings that
        differ from the log's as spark-submit's options; for a stored run, the request's
        ``numaspark run`` once the planner took it on the run's machine (no command and the
        planner's reason when it refuses it)."""
        request = finding.request
        if request is None:
            return finding
        if self.result is None:  # a log alone: no run, nor its machine, to check on
            return self._as_settings(finding, request)
        change = changed_settings(self.request().spark_conf, request.spark_conf)
        command = run_command(request, self.spec.application)
        if self.topology is None:
            return dataclasses.replace(
                finding,
                command=command,
                change=change,
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
                change=change,
                check=f"no command: the planner refuses it on the run's machine: {refused}",
            )
        return dataclasses.replace(finding, command=command, change=change)

    def _as_settings(self, finding: Finding, request: RunRequest) -> Finding:
        """``finding`` on an event log alone: its change as the Spark settings that differ
        from the log's, in spark-submit's options (none where nothing differs)."""
        template = self.request()
        own = self.log.spark_properties if self.log else {}
        layout, options = layout_settings(
            template, request, own, self.executor_count(), self.slots(), self.heap_bytes()
        )
        change = {**changed_settings(own, request.spark_conf), **layout}
        command = submit_options(change, options) if change or options else ""
        return dataclasses.replace(finding, command=command, change=change)
