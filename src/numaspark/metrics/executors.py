"""Executors that come and go: each executor's life from the event log, and what follows.

Spark writes ``SparkListenerExecutorAdded`` ("Timestamp", "Executor ID", "Executor
Info"."Host" and "Total Cores") when an executor registers with the driver, and
``SparkListenerExecutorRemoved`` ("Timestamp", "Removed Reason") when it goes. Under dynamic
allocation they come and go many times in one application, so "executors" is three figures:
the total ever added, the most at once (and their task slots), and the executor-seconds.

Removal reasons are Spark's free text (core's ExecutorLossReason.scala,
ExecutorAllocationManager.removeExecutors); they are kept, and classified:

- ``idle``: dynamic allocation removed it for idleness. Without decommissioning Spark kills
  it, and the text is the same as any kill by the driver, "Executor killed by driver." (on
  YARN and Kubernetes "Container ... exited from explicit termination request.", YarnAllocator
  and the pods' allocator): it is taken as idle when dynamic allocation is on and the executor
  ran no task for at least ``spark.dynamicAllocation.executorIdleTimeout`` before it went.
  With decommissioning the text is "Executor decommission: spark scale down" (the reason
  ExecutorAllocationManager gives).
- ``killed by driver``: those kill texts otherwise (sc.killExecutors, a barrier or excluded
  executor).
- ``decommissioned``: "Executor decommission: ..." for another reason (a worker or node
  decommissioned, a spot instance's notice).
- ``application end``: removed as the application stopped ("Application finished", "Stopped
  by driver"), or still running at its end (no removal event).
- ``lost``: anything else: an exit code ("Command exited with code 137"), a lost worker or
  heartbeat, a container YARN killed for memory or preempted ("Container ... was
  preempted."), "Remote RPC client disassociated".

An executor's start-up, as the application felt it, is read from the jobs: a job submitted
while no executor was alive waits from its submission until its first task launched (the
request for executors is made at the backlog, which the log does not record; the job's
submission stands for it, so Spark's schedulerBacklogTimeout is part of the wait). The log
also gives each executor's added time to its first task (`ExecutorSpan.first_task_ms`),
which is short: the JVM's own start comes before its added time and is not in the log.
"""

from __future__ import annotations

import math
import numbers
import re
import statistics
from dataclasses import dataclass, field

from numaspark.readback.plugin_reports import PluginReports, ReportedJvm

IDLE = "idle"
KILLED = "killed by driver"
DECOMMISSIONED = "decommissioned"
APPLICATION_END = "application end"
LOST = "lost"
ENDINGS = (IDLE, KILLED, DECOMMISSIONED, LOST, APPLICATION_END)

DYNAMIC_KEY = "spark.dynamicAllocation.enabled"
IDLE_TIMEOUT_KEY = "spark.dynamicAllocation.executorIdleTimeout"
IDLE_TIMEOUT_DEFAULT_MS = 60_000.0  # Spark's default, 60s
# the driver's own kill: ExecutorKilled; YARN's and Kubernetes' container the driver released
_KILLED_TEXTS = ("executor killed by driver", "exited from explicit termination request")
_DECOMMISSION_TEXT = "executor decommission"
_SCALE_DOWN_TEXT = "spark scale down"  # ExecutorAllocationManager's decommission reason
_AT_END_TEXTS = ("application finished", "stopped by driver")
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_MS_PER = {"ms": 1.0, "s": 1e3, "m": 60e3, "min": 60e3, "h": 3600e3, "d": 86400e3}


def spark_time_ms(text: str | None, default_ms: float) -> float:
    """A Spark time setting ("4s", "60s", "2min", "500ms"; a bare number is seconds, as for
    the idle timeout) in milliseconds; ``default_ms`` when unset or unreadable."""
    match = _TIME.match(text or "")
    if not match:
        return default_ms
    return float(match.group(1)) * _MS_PER[(match.group(2) or "s").lower()]


def dynamic_allocation(properties: dict[str, str]) -> bool:
    return str(properties.get(DYNAMIC_KEY, "false")).strip().lower() == "true"


def idle_timeout_ms(properties: dict[str, str]) -> float:
    return spark_time_ms(properties.get(IDLE_TIMEOUT_KEY), IDLE_TIMEOUT_DEFAULT_MS)


def removal_kind(
    reason: str | None, idle_for_ms: float | None = None, idle_timeout: float | None = None
) -> str:
    """One removal reason classified (the module's list). ``idle_for_ms``: how long the
    executor had run no task when it went; ``idle_timeout``: dynamic allocation's, None when
    dynamic allocation is off (a kill is then never idle removal)."""
    text = (reason or "").strip().lower()
    if text.startswith(_DECOMMISSION_TEXT) or "decommission" in text:
        return IDLE if _SCALE_DOWN_TEXT in text else DECOMMISSIONED
    if any(t in text for t in _KILLED_TEXTS):
        idle = idle_timeout is not None and idle_for_ms is not None
        # Spark checks idleness about every 100 ms: a removal a little early is still idle
        return IDLE if idle and idle_for_ms >= 0.9 * idle_timeout else KILLED
    if any(t in text for t in _AT_END_TEXTS):
        return APPLICATION_END
    return LOST


@dataclass(frozen=True)
class ExecutorSpan:
    """One executor's life: added and removed (None: ran to the end), its cores, Spark's
    removal text and its class, and its first task's launch and last task's finish."""

    executor: str
    host: str | None
    cores: int
    added_ms: float | None
    removed_ms: float | None
    reason: str | None
    ended: str
    first_task_ms: float | None = None
    last_task_ms: float | None = None

    def end_ms(self, application_end: float | None) -> float | None:
        return self.removed_ms if self.removed_ms is not None else application_end

    def seconds(self, application_end: float | None) -> float:
        end = self.end_ms(application_end)
        if self.added_ms is None or end is None:
            return 0.0
        return max(0.0, end - self.added_ms) / 1000


@dataclass(frozen=True)
class JobWait:
    """A job submitted while no executor was alive: how long until its first task."""

    job: int
    submitted_ms: float
    first_task_ms: float
    gap_before_ms: float | None  # since the previous job ended (None: the first job)

    @property
    def wait_ms(self) -> float:
        return max(0.0, self.first_task_ms - self.submitted_ms)


@dataclass
class Churn:
    """The executors of one application over time."""

    spans: list[ExecutorSpan]
    start_ms: float | None
    end_ms: float | None
    dynamic: bool  # spark.dynamicAllocation.enabled
    idle_timeout_ms: float
    waits: list[JobWait] = field(default_factory=list)
    gaps_ms: list[float] = field(default_factory=list)  # between one job's end and the next
    submissions: dict[int, float] = field(default_factory=dict)  # each job's submission

    @property
    def total(self) -> int:
        return len(self.spans)

    def steps(self) -> list[tuple[float, int, int]]:
        """(time ms, executors alive, their slots) after each add and removal, in order (a
        removal and an add at one moment: the removal first)."""
        changes = []
        for span in self.spans:
            if span.added_ms is None:
                continue
            changes.append((span.added_ms, 1, 1, span.cores))
            end = span.end_ms(self.end_ms)
            if span.removed_ms is not None and end is not None:
                changes.append((end, 0, -1, -span.cores))
        changes.sort()
        alive = slots = 0
        out = []
        for time, _, count, cores in changes:
            alive, slots = alive + count, slots + cores
            out.append((time, alive, slots))
        return out

    @property
    def peak_executors(self) -> int:
        return max((a for _, a, _ in self.steps()), default=0)

    @property
    def peak_slots(self) -> int:
        return max((s for _, _, s in self.steps()), default=0)

    def alive_at(self, time_ms: float) -> tuple[int, int]:
        """Executors and slots alive at ``time_ms`` (after every change at that moment)."""
        alive = (0, 0)
        for time, executors, slots in self.steps():
            if time > time_ms:
                break
            alive = (executors, slots)
        return alive

    @property
    def executor_seconds(self) -> float:
        return sum(s.seconds(self.end_ms) for s in self.spans)

    @property
    def endings(self) -> dict[str, int]:
        found = {kind: 0 for kind in ENDINGS}
        for span in self.spans:
            found[span.ended] += 1
        return {k: v for k, v in found.items() if v}

    @property
    def wait_ms(self) -> float:
        return sum(w.wait_ms for w in self.waits)

    @property
    def startup_ms(self) -> float | None:
        """The median wait of a job submitted with no executor alive (None: none was)."""
        return statistics.median(w.wait_ms for w in self.waits) if self.waits else None

    @property
    def added_to_first_task_ms(self) -> float | None:
        """The median time from an executor's added event to its first task."""
        found = [
            s.first_task_ms - s.added_ms
            for s in self.spans
            if s.first_task_ms is not None and s.added_ms is not None
        ]
        return statistics.median(found) if found else None

    @property
    def duration_ms(self) -> float | None:
        if self.start_ms is None or self.end_ms is None or self.end_ms < self.start_ms:
            return None
        return self.end_ms - self.start_ms

    def figures(self) -> dict:
        """What ``--json`` gives of the executors (``results``, ``analyze``, the report)."""
        return {
            "total": self.total,
            "peak_executors": self.peak_executors,
            "peak_slots": self.peak_slots,
            "executor_seconds": round(self.executor_seconds, 3),
            "dynamic_allocation": self.dynamic,
            "idle_timeout_s": self.idle_timeout_ms / 1000 if self.dynamic else None,
            "endings": self.endings,
            "startup_wait_s": round(self.wait_ms / 1000, 3),
            "startup_median_s": _s(self.startup_ms),
            "added_to_first_task_median_s": _s(self.added_to_first_task_ms),
            "executors": [
                {
                    "executor": s.executor,
                    "host": s.host,
                    "cores": s.cores,
                    "added_s": self._since(s.added_ms),
                    "removed_s": self._since(s.removed_ms),
                    "ended": s.ended,
                    "reason": s.reason,
                }
                for s in self.spans
            ],
        }

    def _since(self, time_ms: float | None) -> float | None:
        if time_ms is None or self.start_ms is None:
            return None
        return round((time_ms - self.start_ms) / 1000, 3)


def _s(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def _known(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return None if math.isnan(value) else float(value)


def _task_times(log) -> dict[str, tuple[float, float]]:
    """Each executor's first task launch and last task finish: from the task table when it
    has the columns, else from the per stage and executor sums."""
    tasks = log.tasks
    if not tasks.empty and {"executorId", "launchTime", "finishTime"} <= set(tasks.columns):
        frame = tasks[["executorId", "launchTime", "finishTime"]]
    elif not log.executor_sums.empty and "firstLaunch" in log.executor_sums:
        frame = log.executor_sums.rename(
            columns={"firstLaunch": "launchTime", "lastFinish": "finishTime"}
        )[["executorId", "launchTime", "finishTime"]]
    else:
        return {}
    grouped = frame.dropna(subset=["executorId"]).groupby("executorId")
    first, last = grouped["launchTime"].min(), grouped["finishTime"].max()
    return {str(e): (float(first[e]), float(last[e])) for e in first.index}


def _job_spans(log) -> list[tuple[int, float, float | None, list[int]]]:
    """(job id, submitted, completed, stage ids) of each job with a submission time, by it."""
    if log.jobs.empty:
        return []
    found = []
    for row in log.jobs.itertuples():
        submitted = _known(row.submissionTime)
        if submitted is not None:
            found.append((int(row.jobId), submitted, _known(row.completionTime), row.stageIds))
    return sorted(found, key=lambda j: j[1])


def _last_busy(
    span_added: float | None,
    removed: float,
    last_task: float | None,
    jobs: list,
    tasks_known: bool,
) -> float | None:
    """When an executor last had work before ``removed``: its last task's finish where the
    log's tasks say (its added time when they show it ran none), else the end of the last
    job that ended before it went (None: it went while a job ran, or before any job ended)."""
    if last_task is not None:
        return last_task
    if tasks_known:
        return span_added
    running = [j for j in jobs if j[1] <= removed and (j[2] is None or j[2] > removed)]
    if running:
        return None
    ended = [j[2] for j in jobs if j[2] is not None and j[2] <= removed]
    if ended:
        return max(ended)
    return span_added


def churn(log) -> Churn:
    """The executors of an `EventLog` over its life (metrics/eventlog.py's ``executors``)."""
    properties = log.spark_properties
    dynamic = dynamic_allocation(properties)
    timeout = idle_timeout_ms(properties)
    times = _task_times(log)
    jobs = _job_spans(log)
    spans = []
    for executor, entry in log.executors.items():
        added, removed = _known(entry.get("added")), _known(entry.get("removed"))
        first, last = times.get(executor, (None, None))
        reason = entry.get("removedReason")
        if removed is None:
            ended = APPLICATION_END
        else:
            busy = _last_busy(added, removed, last, jobs, bool(times))
            idle_for = None if busy is None else removed - busy
            ended = removal_kind(reason, idle_for, timeout if dynamic else None)
        spans.append(
            ExecutorSpan(
                executor,
                entry.get("host"),
                int(_known(entry.get("cores")) or 0),
                added,
                removed,
                None if reason is None else str(reason),
                ended,
                first,
                last,
            )
        )
    spans.sort(key=lambda s: (s.added_ms is None, s.added_ms or 0.0, s.executor))
    result = Churn(spans, _known(log.start_time), _known(log.end_time), dynamic, timeout, [], [])
    result.waits, result.gaps_ms = _waits(log, jobs, result)
    result.submissions = {job: submitted for job, submitted, _, _ in jobs}
    return result


def _first_launches(log) -> dict[int, float]:
    """Each stage's first task launch (the stage sums, else the task table)."""
    sums = log.stage_sums
    if not sums.empty and "firstLaunch" in sums:
        grouped = sums.groupby("stageId")["firstLaunch"].min()
    elif not log.tasks.empty and {"stageId", "launchTime"} <= set(log.tasks.columns):
        grouped = log.tasks.groupby("stageId")["launchTime"].min()
    else:
        return {}
    return {int(k): float(v) for k, v in grouped.items() if _known(v) is not None}


def _waits(log, jobs: list, churned: Churn) -> tuple[list[JobWait], list[float]]:
    """The jobs submitted with no executor alive, and the gaps between jobs."""
    launches = _first_launches(log)
    added = sorted(s.added_ms for s in churned.spans if s.added_ms is not None)
    waits, gaps = [], []
    ended: float | None = None
    for job, submitted, completed, stages in jobs:
        gap = None if ended is None else max(0.0, submitted - ended)
        if gap is not None:
            gaps.append(gap)
        if churned.spans and churned.alive_at(submitted)[0] == 0:
            first = [launches[s] for s in stages if s in launches and launches[s] >= submitted]
            after = [t for t in added if t >= submitted]
            start = min(first) if first else (after[0] if after else None)
            if start is not None and (completed is None or start <= completed):
                waits.append(JobWait(job, submitted, start, gap))
        if completed is not None:
            ended = completed if ended is None else max(ended, completed)
    return waits, gaps


# --- where the executors ran: the affinity plugin's reports, by executor-seconds ------------


def _bound_since(reports: list) -> tuple[float | None, str | None]:
    """When an executor's reports first show it bound, and to which nodes (None: never)."""
    for report in sorted(reports, key=lambda r: r.time_ms or 0):
        nodes = ReportedJvm(report, None).bound_nodes
        if nodes is not None and report.time_ms is not None:
            return float(report.time_ms), str(nodes)
    return None, None


def _reports_by_executor(placement: PluginReports) -> dict[str, list]:
    found: dict[str, list] = {}
    for report in placement.reports:
        if report.executor is not None:  # the driver's: local mode's only executor
            found.setdefault(str(report.executor), []).append(report)
    return found


def placement_seconds(churned: Churn, placement: PluginReports) -> dict | None:
    """Executor-seconds bound (from the plugin's first report that shows a node chosen or a
    bind/preferred policy to the executor's end), unbound (before that, or an executor that
    never was) and not reported (no report of it at all), and the bound share of those
    reported; None without any report. An executor that ran 5 s unbound weighs 5 s."""
    if not placement:
        return None
    by_executor = _reports_by_executor(placement)
    bound = unbound = unreported = 0.0
    for span in churned.spans:
        total = span.seconds(churned.end_ms)
        reports = by_executor.get(span.executor)
        if not reports:
            unreported += total
            continue
        since, _ = _bound_since(reports)
        end = span.end_ms(churned.end_ms)
        if since is None or end is None or span.added_ms is None:
            unbound += total
            continue
        held = max(0.0, end - max(since, span.added_ms)) / 1000
        bound += min(held, total)
        unbound += total - min(held, total)
    judged = bound + unbound
    return {
        "bound_s": round(bound, 3),
        "unbound_s": round(unbound, 3),
        "not_reported_s": round(unreported, 3),
        "bound_share": round(bound / judged, 4) if judged else None,
    }


def executors_per_node(churned: Churn, placement: PluginReports) -> dict[str, list[list[float]]]:
    """Executors alive on each node over time, for the report's timeline: lane (``host node
    N``; ``host unbound`` before an executor's plugin bound it, or without the plugin) ->
    [seconds since the application's start, executors] at each change, as a step series."""
    origin = churned.start_ms
    if origin is None:
        return {}
    by_executor = _reports_by_executor(placement) if placement else {}
    changes: dict[str, list[tuple[float, int]]] = {}
    for span in churned.spans:
        end = span.end_ms(churned.end_ms)
        if span.added_ms is None or end is None:
            continue
        host = span.host or "?"
        since, nodes = _bound_since(by_executor.get(span.executor, []))
        pieces = [(f"{host} unbound", span.added_ms, end)]
        if since is not None and since < end:
            switch = max(since, span.added_ms)
            pieces = [
                (f"{host} unbound", span.added_ms, switch),
                (f"{host} node {nodes}", switch, end),
            ]
        for lane, start, stop in pieces:
            if stop > start:
                changes.setdefault(lane, []).extend([(start, 1), (stop, -1)])
    lanes = {}
    for lane, steps in sorted(changes.items()):
        alive, series = 0, [[0.0, 0]]
        for time, delta in sorted(steps, key=lambda s: (s[0], s[1])):
            alive += delta
            series.append([round((time - origin) / 1000, 3), alive])
        lanes[lane] = series
    return lanes
