"""What-if: an application's time on other core counts, simulated from one event log.

Sparklens' method: keep every task's real duration and replay the
application with ``cores`` task slots. Jobs run one after another, as they
were submitted; within a job a stage starts when its parent stages have
ended, and its tasks go, in the order Spark launched them, to the slot that
frees first. The time outside jobs (the driver alone: planning, collecting,
Python) stays as measured.

Executors that come and go (dynamic allocation, metrics/executors.py): the slots
are those that existed at each moment, not every executor ever added. A job that
started with no executor alive waits, in the replay, as long as it waited in the
log (its submission to its first task: the executors' start-up as the application
felt it); a job that started with fewer slots alive than simulated gets the others
after the measured start-up delay (the median of those waits). The default core
counts go up to twice the most slots alive at once. Without dynamic allocation every
slot is there from each job's start, as before.

Given a directory of event logs (a History Server's), each application that finished is
replayed at the same core counts: one row each (`whatif_directory`).

The simulation assumes task durations do not depend on the core count; what
changes with it in reality (memory bandwidth, GC, shuffle locality) is what
the error of a prediction measures.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from numaspark.errors import NumasparkError
from numaspark.experiment.store import recorded_topology
from numaspark.metrics import logdir
from numaspark.metrics.eventlog import EventLog, parse_event_log
from numaspark.metrics.executors import Churn, churn
from numaspark.metrics.logdir import attempt_named
from numaspark.records import Shape


@dataclass(frozen=True)
class Prediction:
    cores: int
    time_s: float  # driver time + simulated job time
    utilisation: float  # task time / (cores x simulated job time)
    critical_path_s: float  # driver time + per job the longest chain of longest tasks
    driver_s: float  # time with no job running
    startup_s: float = 0.0  # job time spent waiting for executors to start (dynamic allocation)


def executor_counts(log: EventLog, executors: Churn | None = None) -> dict:
    """What the replay counts as the application's width: the executors added in all, the
    most alive at once and their slots (under dynamic allocation the first is not the
    width), and whether dynamic allocation was on (``executors``: `churn` of the log)."""
    executors = executors or churn(log)
    return {
        "added": executors.total,
        "peak": executors.peak_executors,
        "peak_slots": executors.peak_slots,
        "dynamic_allocation": executors.dynamic,
    }


def default_counts(log: EventLog, source: Path) -> tuple[list[int], str]:
    """Core counts to simulate when none are given: powers of two up to the cores of the
    machine the run was recorded on (the topology.json of the results ``source`` is in), and
    that count; without one, up to twice the application's own task slots. Never this
    machine's."""

    topology = recorded_topology(source)[0]
    executors = churn(log)
    # the most slots alive at once: under dynamic allocation executors come and go, and the
    # sum over every executor ever added counts the same slot again each time
    slots = executors.peak_slots or None
    cores = len(topology.allowed_cores()) if topology is not None else 0
    if cores:
        limit, origin = cores, "the cores of the machine the run was recorded on"
    elif slots:
        limit, origin = 2 * slots, f"up to twice the application's {slots} task slot(s)"
        if executors.total > executors.peak_executors:
            origin += (
                f" (the most at once: {executors.peak_executors} executor(s) at most of "
                f"{executors.total} added in all)"
            )
    else:
        return [1, 2, 4, 8], "no machine or slot count recorded: 1, 2, 4, 8"
    counts = sorted(
        {2**k for k in range(limit.bit_length()) if 2**k <= limit}
        | {limit}
        | ({slots} if slots else set())
    )
    return counts, origin


def _jobs_span(log: EventLog) -> list[tuple[float, float]]:
    jobs = log.jobs.dropna(subset=["submissionTime", "completionTime"])
    return sorted(
        (float(a), float(b))
        for a, b in zip(jobs["submissionTime"], jobs["completionTime"], strict=True)
    )


def driver_time_ms(log: EventLog) -> float:
    """Application time during which no job ran (the union of job intervals taken out)."""
    if log.start_time is None or log.end_time is None:
        raise ValueError("the event log has no application start and end")
    busy, cursor = 0.0, float(log.start_time)
    for start, end in _jobs_span(log):
        start, end = max(start, cursor), max(end, cursor)
        busy += end - start
        cursor = max(cursor, end)
    return float(log.end_time - log.start_time) - busy


def _stage_order(stages: pd.DataFrame, ids: list[int]) -> list[int]:
    """``ids`` so that parents come first (stage ids already mostly are)."""
    parents = {int(r.stageId): [int(p) for p in (r.parentIds or [])] for r in stages.itertuples()}
    done, order = set(), []

    def visit(stage: int) -> None:
        if stage in done:
            return
        done.add(stage)
        for parent in parents.get(stage, []):
            if parent in ids:
                visit(parent)
        order.append(stage)

    for stage in sorted(ids):
        visit(stage)
    return order


#: The task columns a replay reads (parse_event_log(..., tasks=TASK_COLUMNS) keeps only these)
TASK_COLUMNS = ("stageId", "successful", "launchTime", "duration")


def _ready(executors: Churn | None, cores: int) -> dict[int, list[float]]:
    """Per job, when each of ``cores`` slots is ready (ms from its submission) under dynamic
    allocation: the slots alive at its submission at once, the others after the start-up
    delay; a job that waited for its first executor in the log waits as long. Empty: every
    slot at once (no dynamic allocation, or no start-up measured)."""
    if executors is None or not executors.dynamic or executors.startup_ms is None:
        return {}
    waited = {w.job: w.wait_ms for w in executors.waits}
    ready = {}
    for job, submitted in executors.submissions.items():
        if job in waited:
            ready[job] = [waited[job]] * cores
            continue
        alive = min(cores, executors.alive_at(submitted)[1])
        ready[job] = [0.0] * alive + [executors.startup_ms] * (cores - alive)
    return ready


def simulate(log: EventLog, cores: int, executors: Churn | None = None) -> Prediction:
    """Replay the application's tasks on ``cores`` slots; ``executors``: its executors over
    time (`churn` of the log when not given), for the start-up waits of dynamic allocation."""
    if cores < 1:
        raise ValueError("cores must be at least 1")
    ready_at = _ready(executors if executors is not None else churn(log), cores)
    tasks = log.tasks[log.tasks["successful"]] if not log.tasks.empty else log.tasks
    stages = (
        log.stages.drop_duplicates("stageId", keep="last") if not log.stages.empty else log.stages
    )
    parents = (
        {int(r.stageId): [int(p) for p in (r.parentIds or [])] for r in stages.itertuples()}
        if "parentIds" in stages
        else {}
    )
    durations: dict[int, list[float]] = {}  # per stage, in launch order (then shortest first)
    for stage, group in tasks.groupby("stageId"):
        duration = group["duration"].fillna(0).to_numpy(dtype=float)
        order = np.lexsort((duration, group["launchTime"].to_numpy(dtype=float)))
        durations[int(stage)] = duration[order].tolist()
    jobs_ms, chain_ms, task_ms, startup_ms = 0.0, 0.0, 0.0, 0.0
    replayed: set[int] = set()
    ordered = log.jobs.sort_values("submissionTime")
    for job, stage_ids in zip(ordered["jobId"], ordered["stageIds"], strict=True):
        # a stage whose output a later job reuses is listed again there (skipped): replay it once
        ran = [s for s in stage_ids if s in durations and s not in replayed]
        replayed.update(ran)
        if not ran:
            continue
        slots = sorted(ready_at.get(job, [0.0] * cores))
        waited = slots[0]  # the job waits for its first slot
        startup_ms += waited
        ends: dict[int, float] = {}
        longest: dict[int, float] = {}
        for stage in _stage_order(stages, ran):
            ready = max((ends.get(p, 0.0) for p in parents.get(stage, [])), default=0.0)
            finish = ready
            for duration in durations[stage]:  # each task on the slot that frees first
                end = (slots[0] if slots[0] > ready else ready) + duration
                heapq.heapreplace(slots, end)
                if end > finish:
                    finish = end
            task_ms += sum(durations[stage])
            ends[stage] = finish
            longest[stage] = max(durations[stage]) + max(
                (longest.get(p, 0.0) for p in parents.get(stage, [])), default=0.0
            )
        jobs_ms += max(ends.values())
        chain_ms += waited + max(longest.values())
    driver_ms = driver_time_ms(log)
    return Prediction(
        cores=cores,
        time_s=(driver_ms + jobs_ms) / 1000,
        utilisation=task_ms / (cores * jobs_ms) if jobs_ms else 0.0,
        critical_path_s=(driver_ms + chain_ms) / 1000,
        driver_s=driver_ms / 1000,
        startup_s=startup_ms / 1000,
    )


def measured_s(log: EventLog) -> float:
    return float(log.end_time - log.start_time) / 1000


# --- many applications: a directory of event logs ------------------------------------------


@dataclass(frozen=True)
class ApplicationWhatif:
    """One application's replay: its log, its id (and attempt), name, measured time and one
    prediction per core count."""

    event_log: str
    app_id: str | None
    attempt_id: str | None
    name: str | None
    measured_s: float
    predictions: list[Prediction]
    executors: dict = field(default_factory=dict)  # `executor_counts`

    __json__: ClassVar[Shape] = Shape(
        computed=("application",),
        order=(
            *("application", "name", "app_id", "attempt_id", "event_log", "measured_s"),
            *("executors", "predictions"),
        ),
    )

    @property
    def application(self) -> str:
        """Its id, with its attempt where the log names one (else its log's name)."""
        return attempt_named(self.app_id, self.attempt_id) or Path(self.event_log).name


@dataclass
class ManyWhatif:
    """``whatif DIR``: one replay per application that finished, the logs not replayed (each
    with why), the logs' warnings (named by log), and the core counts and where they came
    from."""

    source: str
    counts: list[int]
    counts_from: str
    applications: list[ApplicationWhatif] = field(default_factory=list)
    not_simulated: list[dict] = field(default_factory=list)  # event_log, why
    warnings: list[str] = field(default_factory=list)


def holds_many_logs(path: Path) -> bool:
    """Whether ``path`` is a directory of event logs (a History Server's), not one log."""
    if not path.is_dir() or logdir.is_one_log(path):
        return False
    entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].name.startswith(logdir.ROLLING_PREFIX):
        return False  # a run's eventlog/ folder of one rolling log
    return logdir.holds_event_logs(path)


def not_finished(log: EventLog) -> str:
    """Why a log cannot be replayed: what-if needs the application's end."""
    why = log.truncated or "no application end (still running, or its driver died)"
    return f"{why}; what-if needs the application's end"


def whatif_directory(directory: Path, counts: list[int] | None = None) -> ManyWhatif:
    """Every finished application of a directory of event logs replayed at ``counts`` (None:
    each application's `default_counts`, all of them on every application, so that the rows
    compare)."""
    listed = logdir.list_logs(directory)
    found = ManyWhatif(str(directory), [], "--cores" if counts else "")
    found.warnings += [f"{directory / entry}" for entry in listed.not_logs]
    logs: list[EventLog] = []
    for path in listed.logs:
        try:
            log = parse_event_log(path, tasks=TASK_COLUMNS)
        except (NumasparkError, OSError, ValueError) as exc:  # not a log, or damaged at start
            why = " ".join(str(exc).split()).removeprefix(f"{path}: ").removeprefix(f"{path} ")
            found.not_simulated.append({"event_log": str(path), "why": why})
            continue
        if not log.complete or log.start_time is None or log.end_time < log.start_time:
            found.not_simulated.append({"event_log": str(path), "why": not_finished(log)})
            continue  # its damage is in why
        found.warnings += [f"{path}: {w}" for w in log.warnings]
        logs.append(log)
    if counts is None:
        most = max((max(default_counts(log, log.path)[0]) for log in logs), default=8)
        counts = sorted({2**k for k in range(most.bit_length())} | {most})
        found.counts_from = (
            f"powers of two up to {most}, the largest of the applications' own counts (twice "
            "its task slots, or its machine's cores), on every application"
        )
    found.counts = counts
    for log in sorted(logs, key=lambda x: (x.app_name or "", x.start_time or 0, x.app_id or "")):
        executors = churn(log)
        found.applications.append(
            ApplicationWhatif(
                str(log.path),
                log.app_id,
                log.attempt_id,
                log.app_name,
                measured_s(log),
                [simulate(log, c, executors) for c in counts],
                executor_counts(log, executors),
            )
        )
    return found
