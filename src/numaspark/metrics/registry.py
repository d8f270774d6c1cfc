"""Every Spark task metric numaspark reports, defined once.

The event-log parser, the stage/app aggregates, the exporters and the summary
all read this table; a metric name is written nowhere else. Names follow
sparkMeasure's (``executorRunTime``, ``shuffleTotalBytesRead``, ...) so users
can compare with it. Spark writes times in ms except the CPU times and the
shuffle write time, which are in ns: ``scale`` turns those into ms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

NS_TO_MS = 1e-6


@dataclass(frozen=True)
class TaskMetric:
    name: str  # sparkMeasure's name, and the task table's column
    path: tuple[str, ...]  # where it lives under "Task Metrics" in SparkListenerTaskEnd
    unit: str  # after scaling: "ms", "bytes" or "count"
    scale: float = 1.0
    description: str = ""


def _m(name: str, path: str, unit: str, scale: float = 1.0, description: str = "") -> TaskMetric:
    return TaskMetric(name, tuple(path.split("/")), unit, scale, description)


TASK_METRICS: tuple[TaskMetric, ...] = (
    _m("executorRunTime", "Executor Run Time", "ms", description="time running the task"),
    _m("executorCpuTime", "Executor CPU Time", "ms", NS_TO_MS, "CPU time of the task thread"),
    _m("executorDeserializeTime", "Executor Deserialize Time", "ms"),
    _m("executorDeserializeCpuTime", "Executor Deserialize CPU Time", "ms", NS_TO_MS),
    _m("resultSerializationTime", "Result Serialization Time", "ms"),
    _m("jvmGCTime", "JVM GC Time", "ms", description="GC time while the task ran"),
    _m("shuffleFetchWaitTime", "Shuffle Read Metrics/Fetch Wait Time", "ms"),
    _m("shuffleWriteTime", "Shuffle Write Metrics/Shuffle Write Time", "ms", NS_TO_MS),
    _m("resultSize", "Result Size", "bytes"),
    _m("diskBytesSpilled", "Disk Bytes Spilled", "bytes"),
    _m("memoryBytesSpilled", "Memory Bytes Spilled", "bytes"),
    _m("peakExecutionMemory", "Peak Execution Memory", "bytes"),
    _m("recordsRead", "Input Metrics/Records Read", "count"),
    _m("bytesRead", "Input Metrics/Bytes Read", "bytes"),
    _m("recordsWritten", "Output Metrics/Records Written", "count"),
    _m("bytesWritten", "Output Metrics/Bytes Written", "bytes"),
    _m("shuffleRecordsRead", "Shuffle Read Metrics/Total Records Read", "count"),
    _m("shuffleLocalBlocksFetched", "Shuffle Read Metrics/Local Blocks Fetched", "count"),
    _m("shuffleRemoteBlocksFetched", "Shuffle Read Metrics/Remote Blocks Fetched", "count"),
    _m("shuffleLocalBytesRead", "Shuffle Read Metrics/Local Bytes Read", "bytes"),
    _m("shuffleRemoteBytesRead", "Shuffle Read Metrics/Remote Bytes Read", "bytes"),
    _m("shuffleRemoteBytesReadToDisk", "Shuffle Read Metrics/Remote Bytes Read To Disk", "bytes"),
    _m("shuffleBytesWritten", "Shuffle Write Metrics/Shuffle Bytes Written", "bytes"),
    _m("shuffleRecordsWritten", "Shuffle Write Metrics/Shuffle Records Written", "count"),
)

# Sums of other metrics, as sparkMeasure defines them.
COMPOSITE_METRICS: dict[str, tuple[str, ...]] = {
    "shuffleTotalBlocksFetched": ("shuffleLocalBlocksFetched", "shuffleRemoteBlocksFetched"),
    "shuffleTotalBytesRead": ("shuffleLocalBytesRead", "shuffleRemoteBytesRead"),
}

#: The order of the aggregate report, sparkMeasure's order.
REPORT_ORDER: tuple[str, ...] = (
    "numStages",
    "numTasks",
    "elapsedTime",
    "stageDuration",
    "executorRunTime",
    "executorCpuTime",
    "executorDeserializeTime",
    "executorDeserializeCpuTime",
    "resultSerializationTime",
    "jvmGCTime",
    "shuffleFetchWaitTime",
    "shuffleWriteTime",
    "resultSize",
    "diskBytesSpilled",
    "memoryBytesSpilled",
    "peakExecutionMemory",
    "recordsRead",
    "bytesRead",
    "recordsWritten",
    "bytesWritten",
    "shuffleRecordsRead",
    "shuffleTotalBlocksFetched",
    "shuffleLocalBlocksFetched",
    "shuffleRemoteBlocksFetched",
    "shuffleTotalBytesRead",
    "shuffleLocalBytesRead",
    "shuffleRemoteBytesRead",
    "shuffleRemoteBytesReadToDisk",
    "shuffleBytesWritten",
    "shuffleRecordsWritten",
)

#: Figures derived from the aggregates (all dimensionless or ms).
DERIVED_METRICS: dict[str, str] = {
    "avgActiveTasks": "executorRunTime / elapsedTime: how many task slots were busy on average",
    "cpuShare": "executorCpuTime / executorRunTime: share of task time spent on CPU",
    "gcShare": "jvmGCTime / executorRunTime: share of task time spent in GC",
    "schedulerDelay": "sum over tasks of duration - run - deserialize - serialize - get result (ms)",
}

UNITS: dict[str, str] = {
    **{m.name: m.unit for m in TASK_METRICS},
    **{name: "count" if "Blocks" in name else "bytes" for name in COMPOSITE_METRICS},
    "numStages": "count",
    "numTasks": "count",
    "elapsedTime": "ms",
    "stageDuration": "ms",
    "avgActiveTasks": "ratio",
    "cpuShare": "ratio",
    "gcShare": "ratio",
    "schedulerDelay": "ms",
}

#: Every aggregate a run records: the report's, then the derived figures.
METRIC_NAMES: tuple[str, ...] = (*REPORT_ORDER, *DERIVED_METRICS)


class _Aggregates(Mapping):
    """What `Metrics` adds to the fields generated from the registry: it reads as a mapping
    of registry names (tables iterate them), with the names measured in it."""

    def __getitem__(self, name: str) -> float | None:
        if name not in METRIC_NAMES:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(METRIC_NAMES if self.measured else ())

    def __len__(self) -> int:
        return len(METRIC_NAMES) if self.measured else 0

    @property
    def measured(self) -> bool:
        """Spark's event log gave these figures (a run without one has none)."""
        return any(getattr(self, name) is not None for name in METRIC_NAMES)

    @classmethod
    def of(cls, data: Mapping | None) -> Metrics:
        """From a record's JSON or an aggregate's dict (names not in the registry left out)."""
        if isinstance(data, cls):
            return data
        return cls(**{k: v for k, v in (data or {}).items() if k in METRIC_NAMES})


# One typed field per name, generated so that the registry stays the only place a name is
# written: ``result.metrics.gcShare``, None where it was not measured.
Metrics = dataclasses.make_dataclass(
    "Metrics",
    [(name, float | None, dataclasses.field(default=None)) for name in METRIC_NAMES],
    bases=(_Aggregates,),
    frozen=True,
    eq=True,
)
Metrics.__module__ = __name__  # make_dataclass takes no module before Python 3.12
