"""Spark's task rules (Sparklens' and Dr. Elephant's): skewed stages (`task_skew`), spill
(`spill`), too few tasks per slot (`tasks_per_core`) and time no job ran (`driver_time`)."""

from __future__ import annotations

import shlex

import pandas as pd

from numaspark.decide.advise.findings import Finding, NotAssessed, share_beyond_whole
from numaspark.decide.advise.subject import Subject
from numaspark.decide.thresholds import DRIVER_ONLY, NARROW_STAGES, TASK_SKEW, Severity
from numaspark.decide.whatif import driver_time_ms
from numaspark.errors import UsageError
from numaspark.metrics.eventlog import EventLog
from numaspark.units import human_size, jvm_size, parse_size

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
    rows = log.stages[log.stages["stageId"] == stage]
    kind = stage_reads(rows).iloc[0] if not rows.empty else READS_SHUFFLE
    if kind != READS_SHUFFLE:  # its tasks are the input's splits or the code's partitions
        words, settings = _more_tasks(subject, rows, kind, 4 * slots)
        return Finding(
            "task-skew",
            severity,
            f"{text}; it reads {kind}",
            evidence,
            f"split the skewed partitions: {words}",
            subject.changed(settings) if settings else None,
        )
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


# what decides a stage's task count, by what its tasks read (`stage_reads`)
READS_SHUFFLE, READS_INPUT, READS_NEITHER = "shuffle", "input", "neither"
MAX_PARTITION_BYTES = "spark.sql.files.maxPartitionBytes"  # a file source's split, 128 MiB
SMALLEST_SPLIT = 1024**2  # below this, a file's splits cost more to open than they hold


def stage_reads(stages: pd.DataFrame) -> pd.Series:
    """What each stage's tasks read, from its tasks' sums: shuffle data (its task count is
    the shuffle partitions), else input (a file's or table's splits), else neither (data
    made in the driver or by a range: the partitions the code asked for). Without the sums
    (no task ended), a stage with parent stages reads their shuffle."""

    def column(name: str) -> pd.Series:
        return stages[name].fillna(0) if name in stages else pd.Series(0, index=stages.index)

    shuffle = (
        column("shuffleRecordsRead")
        + column("shuffleLocalBytesRead")
        + column("shuffleRemoteBytesRead")
    ) > 0
    if "parentIds" in stages:  # per stage: one with no task ended has no sums
        unsummed = (
            stages["shuffleRecordsRead"].isna()
            if "shuffleRecordsRead" in stages
            else pd.Series(True, index=stages.index)
        )
        parents = stages["parentIds"].map(lambda ids: bool(ids) if isinstance(ids, list) else False)
        shuffle |= unsummed & parents
    reads_input = (column("bytesRead") + column("recordsRead")) > 0
    kinds = pd.Series(READS_NEITHER, index=stages.index)
    kinds[reads_input & ~shuffle] = READS_INPUT
    kinds[shuffle] = READS_SHUFFLE
    return kinds


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
    kinds = stage_reads(narrow)
    by_kind = {
        kind: [int(s) for s in narrow["stageId"][kinds == kind]]
        for kind in (READS_INPUT, READS_SHUFFLE, READS_NEITHER)
        if (kinds == kind).any()
    }
    evidence = {
        "slots": slots,
        "stage_time_with_fewer_tasks_than_slots": round(share, 3),
        "stages": [int(s) for s in narrow["stageId"]],
        "stages_by_what_they_read": by_kind,
    }
    text = f"{share:.0%} of stage time ran with fewer tasks than the {slots} task slots"
    severity = NARROW_STAGES.grade(share)
    if severity is Severity.NONE:
        return Finding("tasks-per-core", severity, text, evidence)
    read = ", ".join(f"{len(ids)} reading {kind}" for kind, ids in by_kind.items())
    target = 3 * slots
    how, change = [], {}
    # the stages that took the most time first: their fix is the one that matters
    time_of = narrow.groupby(kinds)["stageDuration"].sum().sort_values(ascending=False)
    for kind in time_of.index:
        words, settings = _more_tasks(subject, narrow[kinds == kind], kind, target)
        how.append(words)
        for key, value in settings.items():  # the kind of the most time says it first
            change.setdefault(key, value)
    return Finding(
        "tasks-per-core",
        severity,
        f"{text} ({read})",
        evidence,
        f"give every stage 2-3 tasks per slot ({target}): " + "; ".join(how),
        subject.changed(change) if change else None,
    )


DEFAULT_PARALLELISM = "spark.default.parallelism"


def _more_tasks(
    subject: Subject, stages: pd.DataFrame, kind: str, target: int
) -> tuple[str, dict[str, str]]:
    """What gives ``stages`` (all reading ``kind``) ``target`` tasks: the words, and the
    settings that do it where a setting does (a shuffle's partitions, a file source's splits;
    an RDD's input or data made in the driver is partitioned in the code)."""
    if kind == READS_SHUFFLE:
        return "more shuffle partitions", subject.more_partitions(target)
    if kind == READS_NEITHER:
        words = (
            "more partitions where the data is made (parallelize's numSlices, range's "
            f"numPartitions: {target})"
        )
        if _count_setting(subject.conf.get(DEFAULT_PARALLELISM)) >= target:
            return f"{words}: the code gave these stages their partitions", {}
        return (
            f"{words}; spark.default.parallelism where the code gives none",
            {DEFAULT_PARALLELISM: subject.more_partitions(target)[DEFAULT_PARALLELISM]},
        )
    largest = float(stages["bytesRead"].fillna(0).max()) if "bytesRead" in stages else 0.0
    split = int(largest // target)
    if split < SMALLEST_SPLIT:
        return (
            f"the input ({human_size(int(largest))}) is too small to split further: "
            f"repartition({target}) after reading it",
            {},
        )
    had = _size_setting(subject.conf.get(MAX_PARTITION_BYTES)) or 128 * 1024**2
    rdd = (
        f"an RDD's input takes them in the code (textFile(path, {target}), or "
        f"repartition({target}) after reading)"
    )
    if split >= had:
        return f"more input splits: {rdd}", {}
    return (
        f"smaller input splits: {MAX_PARTITION_BYTES} for a file source; {rdd}",
        {MAX_PARTITION_BYTES: jvm_size(split)},
    )


def _count_setting(text: object) -> int:
    """A count setting as a number; 0: unset or not a number."""
    try:
        return int(str(text).strip()) if text else 0
    except ValueError:
        return 0


def _size_setting(text: object) -> int | None:
    """A size setting in bytes (Spark reads a bare number as bytes here); None: unset or a
    form not read."""
    if not text:
        return None
    value = str(text).strip()
    try:
        return int(value) if value.isdigit() else parse_size(value, MAX_PARTITION_BYTES)
    except UsageError:
        return None


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
    if beyond := share_beyond_whole(
        "driver-time", share, "driver-only time over the application's"
    ):
        return beyond
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
