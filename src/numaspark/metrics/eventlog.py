"""Read Spark event logs (plain, rolling, compressed) into task and stage tables.

Spark writes one JSON event per line. Spark 4 by default writes a rolling log:
a directory ``eventlog_v2_<app>/`` of ``events_<N>_<app>[.codec]`` files,
compressed with zstd. Users bring logs from their own clusters, so plain
files, rolling directories and the zstd, lz4 and snappy codecs all read the
same way. Unknown event types are skipped; a truncated last line (a driver
that crashed mid-write) is skipped and reported.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from numaspark.errors import UsageError
from numaspark.metrics.registry import TASK_METRICS
from numaspark.metrics.streaming import compact_progress

GC_METRICS = ("MinorGCCount", "MinorGCTime", "MajorGCCount", "MajorGCTime")
_ROLLING_FILE = re.compile(r"^events_(\d+)_")
_CODECS = {".zstd": "zstd", ".zst": "zstd", ".lz4": "lz4", ".snappy": "snappy", ".lzf": "lzf"}


@dataclass
class EventLog:
    """One application's events, as tables."""

    path: Path
    app_id: str | None = None
    app_name: str | None = None
    spark_version: str | None = None
    start_time: int | None = None  # ms since the epoch
    end_time: int | None = None
    executors: dict[str, dict] = field(default_factory=dict)
    spark_properties: dict[str, str] = field(default_factory=dict)  # from the environment update
    tasks: pd.DataFrame = field(default_factory=pd.DataFrame)
    stages: pd.DataFrame = field(default_factory=pd.DataFrame)
    jobs: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Structured Streaming: one progress dict per trigger (see metrics/streaming.py)
    stream_progress: list[dict] = field(default_factory=list)
    # SparkListenerStageExecutorMetrics (spark.eventLog.logStageExecutorMetrics): per stage and
    # executor, the peaks of the executor's metrics, GC counts and times among them
    stage_executor_metrics: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.end_time is not None


# --- reading bytes and lines ---------------------------------------------------


def event_log_files(path: Path) -> list[Path]:
    """The files of a log: itself, or a rolling directory's event files in order."""
    if not path.exists():
        raise UsageError(f"event log {path} does not exist")
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UsageError(f"{path} is neither a file nor a directory: give an event log file "
                         "or an eventlog_v2_* directory")  # fmt: skip
    files = [p for p in path.iterdir() if p.is_file() and _ROLLING_FILE.match(p.name)]
    if not files:
        inner = sorted(p for p in path.iterdir() if p.name.startswith("eventlog_v2_"))
        if len(inner) == 1:
            return event_log_files(inner[0])
        raise UsageError(
            f"{path} is a directory without Spark event files (events_N_*): "
            "give an event log file or an eventlog_v2_* directory"
        )
    return sorted(files, key=lambda p: int(_ROLLING_FILE.match(p.name).group(1)))


def _codec(path: Path) -> str | None:
    name = path.name.removesuffix(".inprogress")
    return _CODECS.get(Path(name).suffix)


def _decompress(path: Path) -> tuple[bytes, str | None]:
    """The file's bytes, decompressed; and a warning when the stream ends early."""
    raw = path.read_bytes()
    codec = _codec(path)
    if codec is None:
        return raw, None
    if codec == "zstd":
        return _zstd_frames(raw, path)
    if codec == "lz4":
        return _lz4_java_blocks(raw, path)
    if codec == "snappy":
        return _snappy_java_stream(raw, path)
    raise UsageError(
        f"{path.name}: the lzf codec is not supported; re-encode with zstd, lz4 or snappy"
    )


def _zstd_frames(raw: bytes, path: Path) -> tuple[bytes, str | None]:
    """Decompress frame by frame, so that a stream cut short keeps its complete frames."""
    import zstandard

    out = bytearray()
    data = raw
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        try:
            out += frame.decompress(data)
        except zstandard.ZstdError as exc:
            return bytes(out), f"{path.name}: compressed stream is damaged ({exc})"
        if not frame.eof:
            return bytes(
                out
            ), f"{path.name}: compressed stream ends early (the driver stopped mid-write)"
        data = frame.unused_data
    return bytes(out), None


# Spark's lz4 and snappy codecs write the framing of lz4-java
# (LZ4BlockOutputStream) and snappy-java (SnappyOutputStream), which no Python
# library reads; the framing is a few fixed headers around raw blocks, which
# cramjam decompresses.
_LZ4_MAGIC = b"LZ4Block"
_SNAPPY_MAGIC = b"\x82SNAPPY\x00"


def _lz4_java_blocks(raw: bytes, path: Path) -> tuple[bytes, str | None]:
    import cramjam

    out, pos = bytearray(), 0
    while pos < len(raw):
        header = raw[pos : pos + 21]
        if len(header) < 21 or header[:8] != _LZ4_MAGIC:
            return bytes(out), f"{path.name}: lz4 stream ends early at byte {pos}"
        token = header[8]
        compressed_len, plain_len, _checksum = struct.unpack("<iii", header[9:21])
        body = raw[pos + 21 : pos + 21 + compressed_len]
        if len(body) < compressed_len:
            return bytes(out), f"{path.name}: lz4 stream ends early at byte {pos}"
        if plain_len == 0:  # end-of-stream marker
            break
        if token & 0xF0 == 0x10:  # stored uncompressed
            out += body
        else:
            out += bytes(cramjam.lz4.decompress_block(body, output_len=plain_len))
        pos += 21 + compressed_len
    return bytes(out), None


def _snappy_java_stream(raw: bytes, path: Path) -> tuple[bytes, str | None]:
    import cramjam

    if raw[:8] != _SNAPPY_MAGIC:
        raise UsageError(f"{path.name}: not a snappy-java stream (bad magic header)")
    out, pos = bytearray(), 16  # magic, version, compatible version
    while pos < len(raw):
        if pos + 4 > len(raw):
            return bytes(out), f"{path.name}: snappy stream ends early at byte {pos}"
        (length,) = struct.unpack(">i", raw[pos : pos + 4])
        chunk = raw[pos + 4 : pos + 4 + length]
        if len(chunk) < length:
            return bytes(out), f"{path.name}: snappy stream ends early at byte {pos}"
        out += bytes(cramjam.snappy.decompress_raw(chunk))
        pos += 4 + length
    return bytes(out), None


def read_events(path: Path, warnings: list[str] | None = None) -> Iterator[dict]:
    """Every event of the log, in order. Lines that do not parse are skipped and noted."""
    warnings = warnings if warnings is not None else []
    files = event_log_files(path)
    for index, file in enumerate(files):
        data, warning = _decompress(file)
        if warning:
            warnings.append(warning)
        lines = data.decode("utf-8", errors="replace").split("\n")
        last_nonempty = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                if number == last_nonempty and index == len(files) - 1:
                    warnings.append(
                        f"{file.name}: last line is truncated (the driver stopped mid-write); skipped"
                    )
                else:
                    warnings.append(f"{file.name}: line {number + 1} is not JSON; skipped")
                continue
            if isinstance(event, dict) and "Event" in event:
                yield event


# --- events into tables ----------------------------------------------------------


def _dig(data: dict, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _task_row(event: dict) -> dict:
    info = event.get("Task Info", {})
    reason = event.get("Task End Reason", {}) or {}
    metrics = event.get("Task Metrics") or {}
    launch, finish = info.get("Launch Time"), info.get("Finish Time")
    getting = info.get("Getting Result Time") or 0
    row = {
        "stageId": event.get("Stage ID"),
        "stageAttemptId": event.get("Stage Attempt ID"),
        "taskId": info.get("Task ID"),
        "index": info.get("Index"),
        "attempt": info.get("Attempt"),
        "partitionId": info.get("Partition ID"),
        "executorId": info.get("Executor ID"),
        "host": info.get("Host"),
        "locality": info.get("Locality"),
        "speculative": bool(info.get("Speculative")),
        "launchTime": launch,
        "finishTime": finish,
        "duration": (finish - launch) if launch and finish else None,
        "gettingResultTime": (finish - getting) if getting and finish else 0,
        "successful": reason.get("Reason") == "Success",
        "failureReason": None
        if reason.get("Reason") == "Success"
        else " ".join(
            str(x) for x in (reason.get("Reason"), reason.get("Description")) if x
        ).strip(),
        "hasMetrics": bool(metrics),
    }
    for metric in TASK_METRICS:
        value = _dig(metrics, metric.path)
        row[metric.name] = float(value) * metric.scale if isinstance(value, (int, float)) else 0.0
    return row


def parse_event_log(path: str | Path) -> EventLog:
    """Parse one application's event log into an `EventLog`."""
    path = Path(path)
    log = EventLog(path=path)
    tasks: list[dict] = []
    stages: dict[tuple[int, int], dict] = {}
    jobs: dict[int, dict] = {}
    for event in read_events(path, log.warnings):
        kind = event["Event"]
        if kind == "SparkListenerLogStart":
            log.spark_version = event.get("Spark Version")
        elif kind == "SparkListenerApplicationStart":
            log.app_id = event.get("App ID")
            log.app_name = event.get("App Name")
            log.start_time = event.get("Timestamp")
        elif kind == "SparkListenerEnvironmentUpdate":
            properties = event.get("Spark Properties") or {}
            if isinstance(properties, list):  # Spark 1.x wrote [key, value] pairs
                properties = dict(properties)
            log.spark_properties.update({str(k): str(v) for k, v in properties.items()})
        elif kind == "SparkListenerApplicationEnd":
            log.end_time = event.get("Timestamp")
        elif kind == "SparkListenerExecutorAdded":
            info = event.get("Executor Info", {})
            log.executors[str(event.get("Executor ID"))] = {
                "host": info.get("Host"),
                "cores": info.get("Total Cores"),
                "added": event.get("Timestamp"),
                "removed": None,
            }
        elif kind == "SparkListenerExecutorRemoved":
            entry = log.executors.setdefault(str(event.get("Executor ID")), {})
            entry["removed"] = event.get("Timestamp")
            entry["removedReason"] = event.get("Removed Reason")
        elif kind == "SparkListenerTaskEnd":
            tasks.append(_task_row(event))
        elif kind == "SparkListenerJobStart":
            properties = event.get("Properties") or {}
            jobs[event.get("Job ID")] = {
                "jobId": event.get("Job ID"),
                "jobGroup": properties.get("spark.jobGroup.id"),
                "stageIds": list(event.get("Stage IDs") or []),
                "submissionTime": event.get("Submission Time"),
                "completionTime": None,
                "result": None,
            }
        elif kind == "SparkListenerJobEnd" and event.get("Job ID") in jobs:
            job = jobs[event.get("Job ID")]
            job["completionTime"] = event.get("Completion Time")
            job["result"] = (event.get("Job Result") or {}).get("Result")
        elif kind == "SparkListenerStageExecutorMetrics":
            peaks = event.get("Executor Metrics") or {}
            log.stage_executor_metrics.append({
                "stageId": event.get("Stage ID"),
                "executorId": str(event.get("Executor ID")),
                **{k: peaks.get(k) for k in GC_METRICS},
            })  # fmt: skip
        elif kind.endswith("StreamingQueryListener$QueryProgressEvent"):
            log.stream_progress.append(compact_progress(event.get("progress") or {}))
        elif kind in ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"):
            info = event.get("Stage Info", {})
            key = (info.get("Stage ID"), info.get("Stage Attempt ID", 0))
            stage = stages.setdefault(key, {"stageId": key[0], "stageAttemptId": key[1]})
            stage.update(
                {
                    "name": info.get("Stage Name"),
                    "numTasks": info.get("Number of Tasks"),
                    "submissionTime": info.get("Submission Time"),
                    "completionTime": info.get("Completion Time"),
                    "failureReason": info.get("Failure Reason"),
                    "parentIds": list(info.get("Parent IDs") or []),
                }
            )
    if log.start_time is None and log.app_id is None:
        raise UsageError(f"{path} holds no Spark application events: is it a Spark event log?")
    if not log.complete:
        log.warnings.append("no SparkListenerApplicationEnd: the application did not finish")
    log.tasks = pd.DataFrame(tasks, columns=_task_columns())
    log.stages = _stage_table(stages, log.tasks)
    log.jobs = pd.DataFrame(
        list(jobs.values()),
        columns=["jobId", "jobGroup", "stageIds", "submissionTime", "completionTime", "result"],
    )
    return log


def _task_columns() -> list[str]:
    base = list(_task_row({}).keys())
    return base


def _stage_table(stages: dict[tuple[int, int], dict], tasks: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame(list(stages.values()))
    if frame.empty:
        return frame
    frame["stageDuration"] = frame["completionTime"] - frame["submissionTime"]
    if not tasks.empty:
        names = [m.name for m in TASK_METRICS]
        sums = tasks.groupby(["stageId", "stageAttemptId"])[names].sum().reset_index()
        counts = tasks.groupby(["stageId", "stageAttemptId"]).size().rename("tasksEnded")
        frame = frame.merge(sums, on=["stageId", "stageAttemptId"], how="left")
        frame = frame.merge(counts.reset_index(), on=["stageId", "stageAttemptId"], how="left")
    return frame.sort_values(["stageId", "stageAttemptId"]).reset_index(drop=True)
