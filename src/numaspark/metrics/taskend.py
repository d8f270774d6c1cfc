"""SparkListenerTaskEnd events, decoded straight into columns.

A task-end event is 2-5 KB of JSON of which numaspark needs about forty
numbers and strings, and a long application logs millions of them. msgspec
decodes only the fields declared below into Structs (everything else is
skipped without building Python objects), a batch of lines per call, and each
batch becomes numpy columns at once. Measured on a 1,000,000-task log
(issue 20): stdlib ``json`` building every event's dicts, then a DataFrame
from a million row dicts, took ~60 s and 3 GB; this path is bench/eventlog.py's
figure. An event whose fields have unexpected types (a metric written as a
string, say) is decoded generically instead, and each such value is reported.
"""

from __future__ import annotations

from collections import defaultdict
from operator import attrgetter

import msgspec
import numpy as np
import pandas as pd

from numaspark.metrics.registry import TASK_METRICS

#: The task table's columns, in order (the stage sums and exports follow it).
ID_COLUMNS = ("stageId", "stageAttemptId", "taskId", "index", "attempt", "partitionId")
STRING_COLUMNS = ("executorId", "host", "locality")
TIME_COLUMNS = ("launchTime", "finishTime", "duration", "gettingResultTime")
COLUMNS: tuple[str, ...] = (
    *ID_COLUMNS,
    *STRING_COLUMNS,
    "speculative",
    *TIME_COLUMNS,
    "successful",
    "failureReason",
    "hasMetrics",
    *(m.name for m in TASK_METRICS),
)


def _metrics_struct() -> tuple[type, dict[str, attrgetter]]:
    """A Struct of "Task Metrics" with a field per registry metric, and a getter per metric."""
    top: list[tuple[str, str, str]] = []  # (attribute, JSON key, metric name)
    groups: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for i, metric in enumerate(TASK_METRICS):
        if len(metric.path) == 1:
            top.append((f"m{i}", metric.path[0], metric.name))
        elif len(metric.path) == 2:
            groups[metric.path[0]].append((f"m{i}", metric.path[1], metric.name))
        else:  # the registry's paths are one or two levels deep; a deeper one needs code here
            raise ValueError(f"metric {metric.name}: path {metric.path} is too deep")
    fields: list[tuple] = []
    rename: dict[str, str] = {}
    getters: dict[str, attrgetter] = {}
    for j, (group, members) in enumerate(groups.items()):
        sub = msgspec.defstruct(
            f"MetricGroup{j}",
            [(attr, float, 0.0) for attr, _, _ in members],
            rename={attr: key for attr, key, _ in members},
            gc=False,
        )
        fields.append((f"g{j}", sub, msgspec.field(default_factory=sub)))
        rename[f"g{j}"] = group
        getters.update({name: attrgetter(f"g{j}.{attr}") for attr, _, name in members})
    fields += [(attr, float, 0.0) for attr, _, _ in top]
    rename.update({attr: key for attr, key, _ in top})
    getters.update({name: attrgetter(attr) for attr, _, name in top})
    return msgspec.defstruct("TaskMetrics", fields, rename=rename, gc=False), getters


_Metrics, _METRIC_GETTERS = _metrics_struct()
_NO_METRICS = _Metrics()


def _struct(name: str, fields: list[tuple[str, str, type, object]]) -> type:
    """A Struct of (attribute, Spark's JSON key, type, default) fields."""
    return msgspec.defstruct(
        name,
        [(attr, kind, default) for attr, _, kind, default in fields],
        rename={attr: key for attr, key, _, _ in fields},
        gc=False,
    )


_Info = _struct(
    "TaskInfo",
    [
        ("task_id", "Task ID", int, -1),
        ("index", "Index", int, -1),
        ("attempt", "Attempt", int, -1),
        ("partition_id", "Partition ID", int, -1),
        ("launch", "Launch Time", int, -1),
        ("finish", "Finish Time", int, -1),
        ("getting", "Getting Result Time", int, 0),
        ("executor", "Executor ID", str | None, None),
        ("host", "Host", str | None, None),
        ("locality", "Locality", str | None, None),
        ("speculative", "Speculative", bool, False),
    ],
)
_Reason = _struct(
    "TaskEndReason",
    [
        ("reason", "Reason", str | None, None),
        ("description", "Description", str | None, None),
    ],
)
TaskEnd = _struct(
    "TaskEnd",
    [
        ("stage", "Stage ID", int, -1),
        ("stage_attempt", "Stage Attempt ID", int, -1),
        ("reason", "Task End Reason", _Reason, msgspec.field(default_factory=_Reason)),
        ("info", "Task Info", _Info, msgspec.field(default_factory=_Info)),
        ("metrics", "Task Metrics", _Metrics | None, None),
    ],
)
_BATCH = msgspec.json.Decoder(list[TaskEnd])
_ONE = msgspec.json.Decoder(TaskEnd)


class TaskColumns:
    """The task table of one segment of a log, accumulated a batch at a time."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[np.ndarray]] = {name: [] for name in COLUMNS}

    def add_lines(self, lines: list[bytes], warnings: list[str], where: str) -> list[int]:
        """Decode task-end lines into the table; returns the indexes of those not JSON."""
        if not lines:
            return []
        first, last = lines[0], lines[-1]
        lines[0] = b"[" + first  # one decode for the whole batch, as one JSON array, copied once
        lines[-1] = lines[-1] + b"]"
        try:
            self._add(_BATCH.decode(b",".join(lines)))
            return []
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
            pass  # find the lines at fault, one by one (rare: damage, odd types, bad UTF-8)
        finally:
            lines[0], lines[-1] = first, last
        bad: list[int] = []
        for index, line in enumerate(lines):
            try:
                try:
                    self._add([_ONE.decode(line)])
                except msgspec.ValidationError as exc:  # odd types: decoded generically
                    self._add_generic(msgspec.json.decode(line), exc, warnings, where)
            except (msgspec.DecodeError, UnicodeDecodeError):  # msgspec checks UTF-8 in strings
                bad.append(index)
        return bad

    def _add(self, batch: list) -> None:
        n = len(batch)
        if not n:
            return
        col = self.chunks

        def numbers(objects: list, attr: str, kind: type = np.int64) -> np.ndarray:
            return np.fromiter(map(attrgetter(attr), objects), kind, n)

        info = [t.info for t in batch]
        col["stageId"].append(numbers(batch, "stage"))
        col["stageAttemptId"].append(numbers(batch, "stage_attempt"))
        for name, attr in (
            ("taskId", "task_id"),
            ("index", "index"),
            ("attempt", "attempt"),
            ("partitionId", "partition_id"),
        ):
            col[name].append(numbers(info, attr))
        for name, attr in (("executorId", "executor"), ("host", "host"), ("locality", "locality")):
            col[name].append(np.array(list(map(attrgetter(attr), info)), dtype=object))
        col["speculative"].append(numbers(info, "speculative", bool))
        launch, finish = numbers(info, "launch", float), numbers(info, "finish", float)
        getting = numbers(info, "getting", float)
        # Spark writes 0 for "not set"; -1 is a field missing from the event
        launch[launch < 0], finish[finish < 0] = np.nan, np.nan
        col["launchTime"].append(launch)
        col["finishTime"].append(finish)
        col["duration"].append(np.where((launch != 0) & (finish != 0), finish - launch, np.nan))
        col["gettingResultTime"].append(
            np.where((getting != 0) & (finish > 0), np.nan_to_num(finish) - getting, 0.0)
        )
        reasons = [t.reason for t in batch]
        ok = np.array(list(map(attrgetter("reason"), reasons)), dtype=object) == "Success"
        col["successful"].append(ok)
        failure = np.full(n, None, dtype=object)
        for i in np.flatnonzero(~ok):
            r = reasons[i]
            failure[i] = " ".join(str(x) for x in (r.reason, r.description) if x).strip()
        col["failureReason"].append(failure)
        metrics = [t.metrics for t in batch]
        present = np.fromiter((m is not None for m in metrics), bool, n)
        col["hasMetrics"].append(present)
        if not present.all():
            metrics = [_NO_METRICS if m is None else m for m in metrics]
        for metric in TASK_METRICS:  # as Spark wrote them (ns stay ns): sums stay exact
            col[metric.name].append(
                np.fromiter(map(_METRIC_GETTERS[metric.name], metrics), float, n)
            )

    def _add_generic(self, event: object, exc: Exception, warnings: list[str], where: str) -> None:
        """An event msgspec refused for a field's type: keep what is usable, name what is not."""
        if not isinstance(event, dict):
            warnings.append(f"{where}: a SparkListenerTaskEnd line is not a JSON object; skipped")
            return
        info = event.get("Task Info") if isinstance(event.get("Task Info"), dict) else {}
        task = info.get("Task ID", "?")
        cleaned, dropped = _clean(event, TaskEnd)
        warnings.append(
            f"{where}: task {task}: {', '.join(dropped) or exc} not of the expected "
            "type; counted as missing (0)"
        )
        self._add([msgspec.convert(cleaned, TaskEnd)])

    def finish(self) -> dict[str, object]:
        """The columns as numpy arrays; strings as (codes, categories), compact to send.
        Metrics are as Spark wrote them: `scaled` turns a column into the registry's unit."""
        out: dict[str, object] = {}
        for name, chunks in self.chunks.items():
            array = np.concatenate(chunks) if chunks else np.empty(0, _EMPTY.get(name, float))
            if name in STRING_COLUMNS:
                codes, categories = pd.factorize(array, use_na_sentinel=True)
                out[name] = (codes.astype(np.int32), list(categories))
            else:
                out[name] = array
            chunks.clear()
        return out


_EMPTY = {
    **dict.fromkeys(ID_COLUMNS, np.int64),
    **dict.fromkeys(STRING_COLUMNS, object),
    "speculative": bool,
    "successful": bool,
    "hasMetrics": bool,
    "failureReason": object,
}


def _clean(value: object, kind: object, path: str = "") -> tuple[object, list[str]]:
    """``value`` with every field msgspec cannot convert to ``kind`` removed, and their paths."""
    try:
        return msgspec.convert(value, kind), []
    except msgspec.ValidationError:
        pass
    if not isinstance(value, dict) or not hasattr(kind, "__struct_fields__"):
        return None, [path or "event"]
    keys = dict(zip(kind.__struct_fields__, kind.__struct_encode_fields__, strict=True))
    types = {f.name: f.type for f in msgspec.structs.fields(kind)}
    cleaned, dropped = {}, []
    for attr, key in keys.items():
        if key not in value:
            continue
        field_type = types[attr]
        inner = next(
            (
                t
                for t in getattr(field_type, "__args__", (field_type,))
                if hasattr(t, "__struct_fields__")
            ),
            field_type,
        )
        sub, lost = _clean(value[key], inner, f"{path}/{key}" if path else key)
        if lost and sub is None:
            dropped += lost
            continue
        dropped += lost
        cleaned[key] = msgspec.to_builtins(sub) if hasattr(sub, "__struct_fields__") else sub
    return cleaned, dropped


#: What every task contributes to the sums kept without the task table
_SUMMED = tuple(m.name for m in TASK_METRICS)
_SCALE = {m.name: m.scale for m in TASK_METRICS if m.scale != 1.0}


def scaled(name: str, values: np.ndarray) -> np.ndarray:
    """A metric column in the registry's unit (Spark's ns CPU and shuffle-write times in ms)."""
    return values * _SCALE[name] if name in _SCALE else values


def summarize(columns: dict[str, object]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per stage attempt: every metric's sum (in Spark's units), tasks ended, scheduler delay, first launch and
    last finish; per stage and executor: tasks, GC and run time, first launch and last finish. What the aggregates and GC
    per executor need, in a size that does not grow with the number of tasks."""
    executors = columns["executorId"]
    codes, categories = executors
    frame = pd.DataFrame(
        {
            name: columns[name]
            for name in ("stageId", "stageAttemptId", "launchTime", "finishTime", *_SUMMED)
        }
    )
    frame["executorId"] = np.array([*categories, None], dtype=object)[codes]
    duration = np.nan_to_num(np.asarray(columns["duration"], dtype=float))
    # the registry's times are ms but for the ns ones; those below are all ms already
    frame["schedulerDelay"] = np.clip(
        duration
        - frame["executorRunTime"]
        - frame["executorDeserializeTime"]
        - frame["resultSerializationTime"]
        - np.asarray(columns["gettingResultTime"]),
        0,
        None,
    )
    stage = frame.groupby(["stageId", "stageAttemptId"], sort=False)
    stage_sums = stage[[*_SUMMED, "schedulerDelay"]].sum()
    stage_sums["tasksEnded"] = stage.size()
    stage_sums["firstLaunch"] = stage["launchTime"].min()
    stage_sums["lastFinish"] = stage["finishTime"].max()
    by_executor = frame.groupby(["stageId", "executorId"], sort=False, dropna=False)
    executor_sums = by_executor[["jvmGCTime", "executorRunTime"]].sum()
    executor_sums["tasks"] = by_executor.size()
    # when each executor worked: its first launch and last finish (metrics/executors.py)
    executor_sums["firstLaunch"] = by_executor["launchTime"].min()
    executor_sums["lastFinish"] = by_executor["finishTime"].max()
    return stage_sums.reset_index(), executor_sums.reset_index()


def merge_summaries(
    parts: list[tuple[pd.DataFrame, pd.DataFrame]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The segments' sums as the log's (a stage may span segments)."""
    stages = pd.concat([p[0] for p in parts], ignore_index=True) if parts else pd.DataFrame()
    executors = pd.concat([p[1] for p in parts], ignore_index=True) if parts else pd.DataFrame()
    if stages.empty:
        return (
            pd.DataFrame(
                columns=[
                    "stageId",
                    "stageAttemptId",
                    *_SUMMED,
                    "schedulerDelay",
                    "tasksEnded",
                    "firstLaunch",
                    "lastFinish",
                ]
            ),
            pd.DataFrame(
                columns=[
                    *("stageId", "executorId", "jvmGCTime", "executorRunTime", "tasks"),
                    *("firstLaunch", "lastFinish"),
                ]
            ),
        )
    how = {
        **dict.fromkeys([*_SUMMED, "schedulerDelay", "tasksEnded"], "sum"),
        "firstLaunch": "min",
        "lastFinish": "max",
    }
    stages = stages.groupby(["stageId", "stageAttemptId"], sort=True).agg(how).reset_index()
    for name in _SCALE:  # summed as the integers Spark wrote (exact in any order), then scaled
        stages[name] = scaled(name, stages[name].to_numpy())
    executors = (
        executors.groupby(["stageId", "executorId"], sort=True, dropna=False)
        .agg(
            {
                **dict.fromkeys(("jvmGCTime", "executorRunTime", "tasks"), "sum"),
                "firstLaunch": "min",
                "lastFinish": "max",
            }
        )
        .reset_index()
    )
    return stages, executors
