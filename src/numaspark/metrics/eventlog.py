"""Read Spark event logs (plain, rolling, compressed) into task and stage tables.

The bytes come from metrics/logfiles.py (files, codecs, bounded pieces); a
log is cut into segments (a rolling log's files, a plain file's line-aligned
byte ranges) that are parsed in parallel worker processes when the log is
large. Task-end events, nearly all of a log, are decoded straight into
columns (metrics/taskend.py); task-start events are skipped unread; the few
other events are decoded whole, the affinity plugin's placement reports among
them (``NumaPlacementEvent``, read by readback/plugin_reports.py). Unknown
event types are skipped; a line that is not JSON is skipped and reported, a log cut
mid-line (a driver that crashed mid-write, a short copy) is said to be truncated, where and
with what it leaves out, and a file that is no event log is refused: metrics/damage.py
words each.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd

from numaspark.errors import UsageError
from numaspark.metrics import damage
from numaspark.metrics.damage import BadLine
from numaspark.metrics.logdir import attempt_named, still_written
from numaspark.metrics.logfiles import (
    Segment,
    codec,
    event_log_files,
    lines,
    rolling_gaps,
    segments,
)
from numaspark.metrics.registry import TASK_METRICS
from numaspark.metrics.streaming import compact_progress
from numaspark.metrics.taskend import (
    COLUMNS,
    STRING_COLUMNS,
    TaskColumns,
    merge_summaries,
    scaled,
    summarize,
)
from numaspark.placement.plugin import PLACEMENT_EVENT
from numaspark.readback.plugin_reports import PluginReports

GC_METRICS = ("MinorGCCount", "MinorGCTime", "MajorGCCount", "MajorGCTime")
# spark.executor.processTreeMetrics.enabled: the resident bytes of the executor's process tree,
# split by process name (java, python, the rest), peaks per stage and executor
PROCESS_TREE_METRICS = (
    "ProcessTreeJVMRSSMemory",
    "ProcessTreePythonRSSMemory",
    "ProcessTreeOtherRSSMemory",
)
# a stage that runs Python: an RDD named so (the RDD API's PythonRDD), or a plan node's scope
# (BatchEvalPython, ArrowEvalPython, MapInPandas, FlatMapGroupsInPandas, PythonMapInArrow...)
_PYTHON_RDD = re.compile(r"Python|Pandas|Arrow")
PARALLEL_BYTES = 64 << 20  # logs smaller than this are parsed in this process


@dataclass
class EventLog:
    """One application's events, as tables."""

    path: Path
    app_id: str | None = None
    attempt_id: str | None = None  # Spark's "App Attempt ID" (YARN's attempts); None: not said
    app_name: str | None = None
    spark_version: str | None = None
    start_time: int | None = None  # ms since the epoch
    end_time: int | None = None
    # the driver's exit status at the application's end (Spark 3.5 and later write it); None:
    # not written (older Spark, or no end)
    exit_code: int | None = None
    executors: dict[str, dict] = field(default_factory=dict)
    spark_properties: dict[str, str] = field(default_factory=dict)  # from the environment update
    # one row per task that ended: every column, or those asked for (parse_event_log's tasks)
    tasks: pd.DataFrame = field(default_factory=pd.DataFrame)
    stages: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the tasks' sums, kept whether or not the task table is: per stage attempt (every metric,
    # tasksEnded, schedulerDelay, firstLaunch, lastFinish) and per stage and executor (tasks,
    # jvmGCTime, executorRunTime)
    stage_sums: pd.DataFrame = field(default_factory=pd.DataFrame)
    executor_sums: pd.DataFrame = field(default_factory=pd.DataFrame)
    jobs: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Structured Streaming: one progress dict per trigger (see metrics/streaming.py)
    stream_progress: list[dict] = field(default_factory=list)
    # SparkListenerStageExecutorMetrics (spark.eventLog.logStageExecutorMetrics): per stage and
    # executor, the peaks of the executor's metrics, GC counts and times among them
    stage_executor_metrics: list[dict] = field(default_factory=list)
    # what the affinity plugin reported from inside the JVMs (its NumaPlacementEvent lines)
    placement: PluginReports = field(default_factory=PluginReports)
    warnings: list[str] = field(default_factory=list)
    # the latest time an event names (a task's end, a stage's or job's, a timestamp): where
    # the figures of a log without its end stop
    last_event_ms: float | None = None
    # where a log cut mid-line was cut and what that leaves out (metrics/damage.py's words,
    # also among the warnings); None: not cut
    truncated: str | None = None

    @property
    def application(self) -> str | None:
        """The application's id, with its attempt where the log names one (``app attempt 2``):
        a re-run application's attempts share the id."""
        return attempt_named(self.app_id, self.attempt_id)

    @property
    def complete(self) -> bool:
        return self.end_time is not None

    @property
    def executors_lost(self) -> dict[str, str]:
        """Executors removed before the application ended, with Spark's reason."""
        return {
            executor: str(entry.get("removedReason") or "no reason given")
            for executor, entry in self.executors.items()
            if entry.get("removed") is not None
            and (self.end_time is None or entry["removed"] < self.end_time)
            and not _normal_removal(entry.get("removedReason"))
        }


def _normal_removal(reason: object) -> bool:
    """Spark removes executors on its own at the end, or when dynamic allocation idles them."""
    text = str(reason or "").lower()
    return any(
        word in text
        for word in (
            "idle",
            "decommission",
            "application finished",
            "stopped by driver",
            "killed by driver",
        )
    )


# --- segments: lines into task columns and events ----------------------------------

_EVENT = b'{"Event":"'
_TASK_END = b'{"Event":"SparkListenerTaskEnd"'
_TASK_START = b'{"Event":"SparkListenerTaskStart"'
_HANDLED = {
    b"SparkListenerLogStart",
    b"SparkListenerApplicationStart",
    b"SparkListenerEnvironmentUpdate",
    b"SparkListenerApplicationEnd",
    b"SparkListenerExecutorAdded",
    b"SparkListenerExecutorRemoved",
    b"SparkListenerJobStart",
    b"SparkListenerJobEnd",
    b"SparkListenerStageSubmitted",
    b"SparkListenerStageCompleted",
    b"SparkListenerStageExecutorMetrics",
    b"SparkListenerTaskEnd",
    PLACEMENT_EVENT.encode(),
}


@dataclass
class ParsedSegment:
    """What one segment holds: its task columns, its other events in order, its warnings, and
    what is needed to say how it is damaged (metrics/damage.py says it)."""

    columns: dict[str, object]  # the task columns asked for (none: only the sums are kept)
    sums: tuple[pd.DataFrame, pd.DataFrame] | None  # per stage attempt, per stage and executor
    events: list[dict]
    warnings: list[str]
    bad: list[BadLine] = field(default_factory=list)  # lines not JSON (numbered in the segment)
    lines: int = 0  # lines read
    first: bytes | None = None  # its first non-empty line
    cut: bool = False  # its last line is cut (the log's last segment only)
    latest_ms: float | None = None  # the latest time an event of it names
    file: str = ""  # the name of the file it is (a part of)


class _FinishTime(msgspec.Struct):
    """The one field read of a task end to date the log's last events."""

    Finish_Time: float | None = msgspec.field(name="Finish Time", default=None)


class _LastTask(msgspec.Struct):
    Task_Info: _FinishTime | None = msgspec.field(name="Task Info", default=None)


_LAST_TASK = msgspec.json.Decoder(_LastTask)


def _finish_ms(line: bytes) -> float | None:
    """When a task-end line says its task finished (None: not said, or not readable)."""
    try:
        info = _LAST_TASK.decode(line).Task_Info
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None
    return info.Finish_Time if info is not None else None


def _event_ms(event: dict) -> float | None:
    """The latest time an event names (its timestamp, a job's or stage's times)."""
    info = _obj(event.get("Stage Info"))
    times = [
        event.get("Timestamp"),
        event.get("Submission Time"),
        event.get("Completion Time"),
        info.get("Submission Time"),
        info.get("Completion Time"),
    ]
    known = [t for t in map(_number, times) if t is not None]
    return max(known) if known else None


def _wanted(line: bytes) -> bool:
    """Whether a line other than a task end is worth decoding (its event type is used)."""
    if not line.startswith(_EVENT):
        return bool(line.strip())  # not Spark's usual first key: decode and see
    end = line.find(b'"', len(_EVENT))
    if end < 0:
        return True  # cut inside the event's name: a damaged line, decoded to be reported
    kind = line[len(_EVENT) : end]
    return kind in _HANDLED or kind.endswith(b"QueryProgressEvent")


def parse_segment(
    segment: Segment, keep: tuple[str, ...] = COLUMNS, with_sums: bool = True
) -> ParsedSegment:
    """Parse one segment of a log (run in a worker process for large logs); ``keep``: the
    task columns to hand back beside the sums (no sums, None, when not ``with_sums``)."""
    warnings: list[str] = []
    tasks, events = TaskColumns(), []
    where = segment.file.name + (f" (from byte {segment.start})" if segment.start else "")
    number, offset, bad, first, latest = 0, segment.start, [], None, None
    last_line: tuple[int, int, bytes] | None = None  # number, byte, line
    for batch in lines(segment, warnings):
        task_lines, task_numbers = [], []
        for line in batch:
            number += 1
            starts, offset = offset, offset + len(line) + 1
            if line.strip():
                last_line = (number, starts, line)
                first = line if first is None else first
            if line.startswith(_TASK_END):
                task_lines.append(line)
                task_numbers.append((number, starts))
            elif line.startswith(_TASK_START):  # as many as task ends, and nothing in them used
                continue
            elif _wanted(line):
                try:
                    event = msgspec.json.decode(line)
                except (msgspec.DecodeError, UnicodeDecodeError):  # not JSON, or bad UTF-8
                    bad.append((number, starts, line))
                    continue
                if not isinstance(event, dict) or not isinstance(event.get("Event"), str):
                    continue
                if event["Event"] == "SparkListenerTaskEnd":  # written other than Spark writes
                    task_lines.append(line)
                    task_numbers.append((number, starts))
                else:
                    events.append(event)
                    latest = _later(latest, _event_ms(event))
        if task_lines:
            latest = _later(latest, _finish_ms(task_lines[-1]))
        bad += [
            (*task_numbers[i], task_lines[i]) for i in tasks.add_lines(task_lines, warnings, where)
        ]
    cut = _cut_last_line(bad, last_line if segment.last else None)
    columns = tasks.finish()
    sums = summarize(columns) if with_sums else None
    return ParsedSegment(
        {k: columns[k] for k in keep},
        sums,
        events,
        warnings,
        [BadLine(segment.file.name, n, at, len(line)) for n, at, line in bad],
        number,
        first,
        cut,
        latest,
        segment.file.name,
    )


def _cut_last_line(bad: list, last_line: tuple[int, int, bytes] | None) -> bool:
    """Whether the log's last line is cut (not JSON), sorting ``bad`` (number, byte, line)
    and adding that line to it when it was not decoded (an event type skipped unread)."""
    bad.sort(key=lambda b: b[0])
    if last_line is None:
        return False
    listed = bool(bad) and bad[-1][2] is last_line[2]
    if not listed and _is_json(last_line[2]):
        return False
    if not listed:
        bad.append(last_line)
    return True


def _is_json(line: bytes) -> bool:
    try:
        msgspec.json.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return True


def _later(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _parse_segments(
    parts: list[Segment], workers: int | None, keep: tuple[str, ...], with_sums: bool = True
) -> Iterator[ParsedSegment]:
    parse = functools.partial(parse_segment, keep=keep, with_sums=with_sums)
    size = sum(s.size for s in parts)
    forced = workers is not None
    if workers is None:
        workers = min(len(os.sched_getaffinity(0)), len(parts))
    # three rolling files are over 256 MB of JSON however well they compressed
    if workers <= 1 or (size < PARALLEL_BYTES and len(parts) < 3 and not forced):
        yield from map(parse, parts)
        return
    # Worker processes, not threads: decoding holds the GIL. Forked, so they start at once and
    # need no importable __main__; and only from a process with one thread, as a fork copies no
    # other thread's held locks then (a run's collectors are threads: their logs are small).
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    if threading.active_count() > 1:
        yield from map(parse, parts)
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        yield from pool.map(parse, parts)


def read_events(path: Path, warnings: list[str] | None = None) -> Iterator[dict]:
    """Every event of the log, in order, as dicts (for small logs and tools; slow on big ones)."""
    warnings = warnings if warnings is not None else []
    for part in segments(event_log_files(path)):
        for batch in lines(part, warnings):
            for line in batch:
                if not line.strip():
                    continue
                try:
                    event = msgspec.json.decode(line)
                except (msgspec.DecodeError, UnicodeDecodeError):  # not JSON, or bad UTF-8
                    warnings.append(f"{part.file.name}: a line is not JSON; skipped")
                    continue
                if isinstance(event, dict) and "Event" in event:
                    yield event


# --- events into tables ----------------------------------------------------------


def parse_event_log(
    path: str | Path,
    workers: int | None = None,
    tasks: bool | tuple[str, ...] = True,
    sums: bool = True,
) -> EventLog:
    """Parse one application's event log into an `EventLog`. ``tasks``: keep the task table
    (True), only some of its columns (a tuple), or only the sums (False: memory that does not
    grow with the tasks). ``sums`` False: no per-stage sums either (`stage_sums` and
    `executor_sums` empty; `metrics.aggregate.task_total` then sums the task columns kept),
    for a summary of many small logs, whose cost the sums' tables would double. ``workers``:
    processes, default one per allowed CPU for a large log."""
    path = Path(path)
    log = EventLog(path=path)
    files = event_log_files(path)
    if gaps := rolling_gaps(files):
        log.warnings.append(
            f"{path.name}: rolling log without events_{', events_'.join(map(str, gaps))}"
            " (deleted or not copied): the tasks and stages in them are missing"
        )
    keep = COLUMNS if tasks is True else tuple(tasks or ())
    with_sums = sums
    parts: list[dict[str, object]] = []
    stage_sums: list[tuple[pd.DataFrame, pd.DataFrame]] = []
    events = _Events(log)
    read = _Read(named=len(files) > 1 or path.is_dir())
    for parsed in _parse_segments(segments(files), workers, keep, with_sums):
        parts.append(parsed.columns)
        if parsed.sums is not None:
            stage_sums.append(parsed.sums)
        log.warnings.extend(parsed.warnings)
        read.add(parsed)
        for event in parsed.events:
            events.add(event)
    log.last_event_ms = read.latest_ms
    if read.bad_in_middle:
        log.warnings.extend(damage.bad_lines(read.bad_in_middle))
    if log.spark_version is None and (legacy := _legacy_version(path)):
        log.spark_version = legacy
    old_spark = _before_1_4(log.spark_version)
    if log.start_time is None and log.app_id is None:
        raise _no_application(log, read, codec(files[0]))
    if log.complete and log.start_time is not None and log.end_time < log.start_time:
        log.warnings.append(
            f"the application ends ({log.end_time}) before it starts ({log.start_time}): "
            "its clock or log was altered; its elapsed time is taken from its tasks"
        )
    log.stage_sums, log.executor_sums = merge_summaries(stage_sums)
    log.tasks = _task_table(parts, keep)
    log.stages = _stage_table(events.stages, log.stage_sums)
    unfinished_jobs = _unfinished_jobs(events.jobs) if not old_spark else 0
    unfinished_stages = _unfinished_stages(log.stages)
    log.jobs = _job_table(events.jobs, log, old_spark)
    _say_what_is_missing(log, read, unfinished_jobs, unfinished_stages)
    return log


def _no_application(log: EventLog, read: _Read, compressed: str | None) -> UsageError:
    """Why a log without the application's start gives nothing: no event log at all (what it
    is instead), damage before the start (which), or Spark events without an application."""
    nothing = read.first is None and not read.stream_damaged  # empty, not damaged at once
    if nothing or (read.first is not None and not damage.is_event_line(read.first)):
        return damage.not_an_event_log(log.path, read.first, compressed)
    if read.cut is not None or log.warnings:  # damage before the start: say so
        said = damage.truncated(read.cut, read.compressed, "") if read.cut else None
        return damage.before_start(log.path, said or log.warnings[-1])
    return UsageError(
        f"{log.path} holds no Spark application events: is it a Spark event log? "
        "(give the file or eventlog_v2_* directory Spark wrote)"
    )


def _say_what_is_missing(log: EventLog, read: _Read, jobs: int, stages: int) -> None:
    """A log cut mid-line, or without the application's end: where, and what is left out
    (``jobs`` and ``stages`` without an end)."""
    missing = damage.left_out(log.complete, log.start_time, log.last_event_ms, jobs, stages)
    if read.cut is not None and still_written(log.path):  # not damage: Spark writes it now
        log.warnings.append(damage.being_written(read.cut, missing))
    elif read.cut is not None:
        log.truncated = damage.truncated(read.cut, read.compressed, missing)
        log.warnings.append(log.truncated)
    elif missing:
        log.warnings.append(damage.unended(missing, read.stream_damaged))


class _Read:
    """The segments' damage, gathered in order: lines numbered in their file, the cut."""

    def __init__(self, named: bool) -> None:
        self.named = named  # bad lines are named by their file (a log of several files)
        self.first: bytes | None = None
        self.bad_in_middle: list[BadLine] = []
        self.cut: BadLine | None = None
        self.compressed = False
        self.stream_damaged = False  # a compressed stream cut or damaged (said by logfiles)
        self.latest_ms: float | None = None
        self._file: str | None = None
        self._lines = 0  # lines of the current file in the segments before

    def add(self, parsed: ParsedSegment) -> None:
        if self.first is None:
            self.first = parsed.first
        if parsed.file != self._file:  # line numbers count from each file's first
            self._file, self._lines = parsed.file, 0
        bad = [
            BadLine(b.file if self.named else "", b.line + self._lines, b.byte, b.length)
            for b in parsed.bad
        ]
        if parsed.cut:
            self.cut = bad.pop()
            self.compressed = codec(Path(parsed.file)) is not None
        self.bad_in_middle += bad
        self._lines += parsed.lines
        self.latest_ms = _later(self.latest_ms, parsed.latest_ms)
        self.stream_damaged |= any(damage.is_stream_damage(w) for w in parsed.warnings)


def _before_1_4(version: str | None) -> bool:
    """Whether Spark of ``version`` wrote no job times (before 1.4; no version: 1.0-1.2)."""
    if version is None:
        return True
    numbers = re.findall(r"\d+", version)[:2]
    return len(numbers) == 2 and (int(numbers[0]), int(numbers[1])) < (1, 4)


def _unfinished_jobs(jobs: dict[int, dict]) -> int:
    return sum(1 for job in jobs.values() if job.get("completionTime") is None)


def _unfinished_stages(stages: pd.DataFrame) -> int:
    if stages.empty or "completionTime" not in stages:
        return 0
    return int(stages["completionTime"].isna().sum())


def _legacy_version(path: Path) -> str | None:
    """Spark 1.0-1.2 wrote no SparkListenerLogStart: its directory names the version."""
    if not path.is_dir():
        return None
    names = [p.name for p in path.iterdir() if p.name.startswith("SPARK_VERSION_")]
    return names[0].removeprefix("SPARK_VERSION_") if names else None


def _job_table(jobs: dict[int, dict], log: EventLog, old_spark: bool) -> pd.DataFrame:
    """One row per job. A job without submission or completion time (Spark before 1.4 wrote
    none; a later Spark's job that did not end) spans its stages (first submission to last
    completion); Spark before 1.4's is said once, a later one's is in the log's damage."""
    frame = pd.DataFrame(
        list(jobs.values()),
        columns=["jobId", "jobGroup", "stageIds", "submissionTime", "completionTime", "result"],
    )
    untimed = frame["submissionTime"].isna() | frame["completionTime"].isna()
    if frame.empty or not untimed.any() or log.stages.empty:
        return frame
    stages = log.stages.set_index("stageId")
    for row in frame.index[untimed]:
        ids = [i for i in frame.at[row, "stageIds"] if i in stages.index]
        if not ids:
            continue
        if pd.isna(frame.at[row, "submissionTime"]):
            frame.at[row, "submissionTime"] = stages.loc[ids, "submissionTime"].min()
        if pd.isna(frame.at[row, "completionTime"]):
            frame.at[row, "completionTime"] = stages.loc[ids, "completionTime"].max()
    if old_spark:
        log.warnings.append(damage.untimed_jobs(int(untimed.sum())))
    return frame


def _obj(value: object) -> dict:
    return value if isinstance(value, dict) else {}


class _Events:
    """The events other than task ends, applied to the log in order."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.stages: dict[tuple[int, int], dict] = {}
        self.jobs: dict[int, dict] = {}
        # each kind of event read, and what is taken from it; any other kind is skipped
        self._handlers: dict[str, Callable[[dict], None]] = {
            "SparkListenerLogStart": self._log_start,
            "SparkListenerApplicationStart": self._application_start,
            "SparkListenerEnvironmentUpdate": self._environment_update,
            "SparkListenerApplicationEnd": self._application_end,
            "SparkListenerExecutorAdded": self._executor_added,
            "SparkListenerExecutorRemoved": self._executor_removed,
            "SparkListenerJobStart": self._job_start,
            "SparkListenerJobEnd": self._job_end,
            "SparkListenerStageExecutorMetrics": self._stage_executor_metrics,
            PLACEMENT_EVENT: self._placement_reports,
            "SparkListenerStageSubmitted": self._stage,
            "SparkListenerStageCompleted": self._stage,
        }

    def add(self, event: dict) -> None:
        kind = event["Event"]
        handler = self._handlers.get(kind)
        # a streaming query's progress is named by its listener's class, package and all
        if handler is None and kind.endswith("StreamingQueryListener$QueryProgressEvent"):
            handler = self._stream_progress
        if handler is not None:
            handler(event)

    def _log_start(self, event: dict) -> None:
        self.log.spark_version = event.get("Spark Version")

    def _application_start(self, event: dict) -> None:
        self.log.app_id = event.get("App ID")
        attempt = event.get("App Attempt ID")
        self.log.attempt_id = None if attempt is None else str(attempt)
        self.log.app_name = event.get("App Name")
        self.log.start_time = _number(event.get("Timestamp"))

    def _environment_update(self, event: dict) -> None:
        properties = event.get("Spark Properties") or {}
        if isinstance(properties, list):  # Spark 1.x wrote [key, value] pairs
            properties = dict(p for p in properties if isinstance(p, list) and len(p) == 2)
        self.log.spark_properties.update({str(k): str(v) for k, v in _obj(properties).items()})

    def _application_end(self, event: dict) -> None:
        self.log.end_time = _number(event.get("Timestamp"))
        code = event.get("ExitCode")
        self.log.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None

    def _executor_added(self, event: dict) -> None:
        info = _obj(event.get("Executor Info"))
        self.log.executors[str(event.get("Executor ID"))] = {
            "host": info.get("Host"),
            "cores": info.get("Total Cores"),
            "added": event.get("Timestamp"),
            "removed": None,
            # what the cluster manager says of it: on YARN its CONTAINER_ID, NM_HOST, ...
            "attributes": {str(k): str(v) for k, v in _obj(info.get("Attributes")).items()},
        }

    def _executor_removed(self, event: dict) -> None:
        entry = self.log.executors.setdefault(str(event.get("Executor ID")), {})
        entry["removed"] = _number(event.get("Timestamp"))
        entry["removedReason"] = event.get("Removed Reason")

    def _job_start(self, event: dict) -> None:
        properties = _obj(event.get("Properties"))
        stage_ids = event.get("Stage IDs")
        self.jobs[event.get("Job ID")] = {
            "jobId": event.get("Job ID"),
            "jobGroup": properties.get("spark.jobGroup.id"),
            "stageIds": list(stage_ids) if isinstance(stage_ids, list) else [],
            "submissionTime": _number(event.get("Submission Time")),
            "completionTime": None,
            "result": None,
        }

    def _job_end(self, event: dict) -> None:
        job = self.jobs.get(event.get("Job ID"))
        if job is None:  # the end of a job whose start is not in the log
            return
        job["completionTime"] = _number(event.get("Completion Time"))
        job["result"] = _obj(event.get("Job Result")).get("Result")

    def _stage_executor_metrics(self, event: dict) -> None:
        peaks = _obj(event.get("Executor Metrics"))
        self.log.stage_executor_metrics.append(
            {
                "stageId": event.get("Stage ID"),
                "executorId": str(event.get("Executor ID")),
                **{k: _number(peaks.get(k)) for k in (*GC_METRICS, *PROCESS_TREE_METRICS)},
            }
        )

    def _placement_reports(self, event: dict) -> None:
        reports = event.get("reports")
        self.log.placement.reports.extend(
            PluginReports.of(reports if isinstance(reports, list) else []).reports
        )

    def _stream_progress(self, event: dict) -> None:
        self.log.stream_progress.append(compact_progress(_obj(event.get("progress"))))

    def _stage(self, event: dict) -> None:
        """A stage's submission or completion: each says what is known of the stage then."""
        info = _obj(event.get("Stage Info"))
        key = (info.get("Stage ID"), info.get("Stage Attempt ID", 0))
        stage = self.stages.setdefault(key, {"stageId": key[0], "stageAttemptId": key[1]})
        parents = info.get("Parent IDs")
        stage.update(
            {
                "name": info.get("Stage Name"),
                "numTasks": info.get("Number of Tasks"),
                "submissionTime": _number(info.get("Submission Time")),
                "completionTime": _number(info.get("Completion Time")),
                "failureReason": info.get("Failure Reason"),
                "parentIds": list(parents) if isinstance(parents, list) else [],
                "python": _runs_python(info.get("RDD Info")),
            }
        )


def _runs_python(rdds: object) -> bool:
    """Whether a stage's RDDs run Python (its tasks then use Python workers)."""
    for rdd in rdds if isinstance(rdds, list) else ():
        rdd = _obj(rdd)
        if _PYTHON_RDD.search(f"{rdd.get('Name', '')} {rdd.get('Scope', '')}"):
            return True
    return False


def _number(value: object) -> int | float | None:
    """A timestamp or count as Spark writes it; anything else (a damaged field) is missing."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _task_table(parts: list[dict[str, object]], keep: tuple[str, ...]) -> pd.DataFrame:
    """The segments' task columns as one table; string columns hold shared str objects."""
    data: dict[str, object] = {}
    for name in keep:
        pieces = [part[name] for part in parts]
        if name in STRING_COLUMNS:
            strings = [
                np.array([*categories, None], dtype=object)[codes] for codes, categories in pieces
            ]
            data[name] = np.concatenate(strings) if strings else np.empty(0, object)
        else:
            data[name] = scaled(name, np.concatenate(pieces) if pieces else np.empty(0))
        for part in parts:  # free each segment's copy as soon as it is joined
            part[name] = None
    return pd.DataFrame(data, columns=list(keep), copy=False)


def _stage_table(stages: dict[tuple[int, int], dict], sums: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame(list(stages.values()))
    if frame.empty:
        return frame
    frame["stageDuration"] = frame["completionTime"] - frame["submissionTime"]
    if not sums.empty:
        names = [m.name for m in TASK_METRICS]
        keys = ["stageId", "stageAttemptId"]
        frame = frame.merge(sums[[*keys, *names, "tasksEnded"]], on=keys, how="left")
    return frame.sort_values(["stageId", "stageAttemptId"]).reset_index(drop=True)
