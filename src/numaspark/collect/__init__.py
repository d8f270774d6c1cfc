"""measure: collectors that sample the OS, NUMA placement and hardware counters during a run.

Each collector samples at an interval (default 1 s) from a thread started with
the application and stopped with it; every sample keeps cumulative readings
with its time, so any window (one iteration of a workload) is summarized from
the samples that bound it. A collector that fails records why and stops; the
run it measures goes on. The samples are saved with the run (``collectors.jsonl``),
so any window can be summarized again later from the recording alone.
"""

from __future__ import annotations

from numaspark.collect.base import (
    SAMPLES_FILE,
    Collector,
    CollectorSet,
    JvmMap,
    summarize_window,
)
from numaspark.collect.numa import NumaCollector
from numaspark.collect.os_stats import OsCollector
from numaspark.collect.perf_stat import PerfCollector

KINDS: dict[str, type[Collector]] = {c.name: c for c in (OsCollector, NumaCollector, PerfCollector)}


def default_collectors(perf: bool = True) -> list[Collector]:
    collectors: list[Collector] = [OsCollector(), NumaCollector()]
    if perf:
        collectors.append(PerfCollector())
    return collectors


class Recording:
    """Collectors rebuilt from a run's ``collectors.jsonl``: summarize any window of it."""

    def __init__(self, lines: list[dict]) -> None:
        self.collectors: list[Collector] = []
        self.interval_s, self.sampling_s = 1.0, 0.0
        self.jvms_problem: str | None = None
        for line in lines:
            kind = KINDS.get(line.get("collector", ""))
            if kind is None:
                continue  # a collector this version does not know: its figures are left out
            collector = kind()
            collector.load(line.get("samples") or [])
            collector.problem = line.get("problem")
            self.collectors.append(collector)
            self.interval_s = line.get("interval_s", self.interval_s)
            self.sampling_s = line.get("sampling_s", self.sampling_s)
            self.jvms_problem = line.get("jvms_problem") or self.jvms_problem

    def __bool__(self) -> bool:
        return bool(self.collectors)

    def summarize(self, start: float, end: float) -> dict:
        return summarize_window(
            self.collectors, start, end, self.interval_s, self.sampling_s, self.jvms_problem
        )


__all__ = [
    "KINDS",
    "SAMPLES_FILE",
    "Collector",
    "CollectorSet",
    "JvmMap",
    "Recording",
    "default_collectors",
    "summarize_window",
]
