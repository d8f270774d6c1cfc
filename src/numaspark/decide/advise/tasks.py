"""Spark's task rules (Sparklens' and Dr. Elephant's): skewed stages (`task_skew`), spill
(`spill`), too few tasks per slot (`tasks_per_core`) and time no job ran (`driver_time`)."""

from __future__ import annotations

import shlex

from numaspark.decide.advise.findings import Finding, NotAssessed
from numaspark.decide.advise.subject import Subject
from numaspark.decide.thresholds import DRIVER_ONLY, NARROW_STAGES, TASK_SKEW, Severity
from numaspark.decide.whatif import driver_time_ms
from numaspark.metrics.eventlog import EventLog
from numaspark.units import human_size

AQE_SKEW = ("spark.sql.adaptive.enabled", "spark.sql.adaptive.skewJoin.enabled")  # both default on


def _stages_that_matter(log: EventLog):
    stages = log.stages
    if stages.empty or "stageDuration" not in stages:
        return stages
    total = float(stages["stageDuration"].fillna(0).sum())
    return stages[stages["stageDuration"].fillna(0) >= max(1000.0, 0.05 * total)]


def task_skew(subject: Subject) -> Finding | NotAssessed:
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


def spill(subject: Subject) -> Finding | NotAssessed:
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


def tasks_per_core(subject: Subject) -> Finding | NotAssessed:
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


def driver_time(subject: Subject) -> Finding | NotAssessed:
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
