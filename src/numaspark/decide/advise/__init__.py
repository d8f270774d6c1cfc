"""Advice: rules that turn a run's numbers into what to change, and the command that tries it.

The rules are the studies' conclusions (their figures are the published studies', as
summarised in README.md "Why"): GC grows with the heap and several small executors beat one
large one (up to 36%); heaps above 31 GB lose compressed object pointers; an executor
spanning NUMA nodes or with pages off its node pays for remote memory (~10% on average);
automatic NUMA balancing moves pages of processes that are already bound; SMT helps some
workloads and hurts others; past the bandwidth knee more threads per node do not help. The
Spark-side rules (skew, spill, too few tasks per core, driver time) are
Sparklens' and Dr. Elephant's.

Each rule gives a `Finding` with a severity (none, low, moderate, severe,
critical), the evidence, a recommendation and, where it changes the
configuration, the changed `RunRequest`: the request the stored run came from
(experiment/request.py `request_of`, less any of Spark's own properties) with
the change made. The planner checks it on the machine the run was recorded on
(its stored topology, never this one), with the function the run loop plans
with; the command printed is the request's ``numaspark run`` (`run_command`)
when the planner takes it, and none, with the planner's reason in one line,
when it refuses it. Where the run's machine is not recorded the command is
printed and said to be unchecked. An event log alone names no run to repeat:
its suggestion is the Spark settings that differ from the log's own, as
spark-submit's ``--conf`` options (settings.py: never Spark's own properties).
A rule whose inputs are missing (an event log has no placement; this machine
has no hardware counters), or whose figures do not add up (a share over 100%),
is reported as not assessed, with why, and never guessed; a command says each
cause once (`not_assessed_by_cause`).

The package: `findings` (what a rule gives), `subject` (what it looks at), `settings` (the
Spark settings a suggestion carries), and the rules by
family: `jvm`, `numa`, `tasks`, `python`, `devices`, `churn` (executors that come and go).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from numaspark.decide.advise.churn import executor_churn
from numaspark.decide.advise.devices import device_node, nic_node
from numaspark.decide.advise.findings import (
    Advice,
    Finding,
    NotAssessed,
    NotAssessedCause,
    not_assessed_by_cause,
)
from numaspark.decide.advise.jvm import executor_count, gc, heap_size
from numaspark.decide.advise.numa import (
    memory_bandwidth,
    numa_balancing,
    numa_straddle,
    remote_pages,
    smt,
)
from numaspark.decide.advise.python import python_cpu, python_memory
from numaspark.decide.advise.subject import Subject
from numaspark.decide.advise.tasks import driver_time, spill, task_skew, tasks_per_core
from numaspark.decide.prior import Machine
from numaspark.decide.thresholds import Severity, grade
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.result import RunResult, RunSpec, by_configuration, refuse_mixed
from numaspark.experiment.store import ResultStore, recorded_topology
from numaspark.metrics.eventlog import EventLog, parse_event_log
from numaspark.topology import Topology

__all__ = [
    "NUMA_RULES",
    "Advice",
    "Finding",
    "NotAssessed",
    "NotAssessedCause",
    "Severity",
    "Subject",
    "advise",
    "advise_event_log",
    "advise_results",
    "grade",
    "not_assessed_by_cause",
]


Rule = Callable[[Subject], "Finding | NotAssessed"]


RULES: tuple[Rule, ...] = (
    gc,
    heap_size,
    numa_straddle,
    remote_pages,
    numa_balancing,
    smt,
    memory_bandwidth,
    task_skew,
    spill,
    tasks_per_core,
    driver_time,
    executor_count,
    executor_churn,
    python_cpu,
    python_memory,
    device_node,
    nic_node,
)


# what an event log alone tells of placement: the rules of the table of many logs
NUMA_RULES: tuple[Rule, ...] = (
    numa_straddle,
    remote_pages,
    numa_balancing,
    python_cpu,
    python_memory,
)


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
    log = parse_event_log(path)
    advice = advise(Subject(log, topology=topology), str(path))
    advice.warnings = list(log.warnings)  # a damaged log is said, as every reader says it
    return advice


def advise_results(results: list[RunResult], topology: Topology | None = None) -> list[Advice]:
    """One `Advice` per configuration: its median run, and its application's event log;
    ``topology``: the machine the runs were recorded on (None: not recorded)."""
    groups = by_configuration(results)
    advices = []
    logs: dict[str, EventLog | None] = {}
    unread: dict[str, str] = {}  # a log not read: why (missing, or damaged)
    for runs in groups.values():
        runs.sort(key=lambda r: r.wall_time_s)
        median = runs[(len(runs) - 1) // 2]
        path = median.artifacts.event_log
        if path not in logs:
            try:
                logs[path] = parse_event_log(path) if path and Path(path).exists() else None
            except (NumasparkError, OSError, ValueError) as exc:  # damaged: rules unassessed
                logs[path], unread[path] = None, " ".join(str(exc).split())
            if path and logs[path] is None and path not in unread:  # gone since the run
                unread[path] = f"the run's event log is missing: {path} (moved or deleted)"
        subject = Subject(logs[path], median, results, topology)
        advice = advise(subject, median.spec.title if median.spec.label else _name(median.spec))
        if path in unread:  # the rules that read the log say why it is not there
            advice.not_assessed = [
                NotAssessed(n.rule, unread[path], n.detail) if _reads_the_log(n.why) else n
                for n in advice.not_assessed
            ]
        advices.append(advice)
    return advices


def _reads_the_log(why: str) -> bool:
    """Whether a rule was not assessed for want of the run's event log."""
    return "event log" in why and "event log alone" not in why


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
