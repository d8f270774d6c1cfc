"""Application aggregates of an `EventLog`, named and ordered as sparkMeasure's report."""

from __future__ import annotations

from numaspark.metrics.eventlog import EventLog
from numaspark.metrics.registry import COMPOSITE_METRICS, REPORT_ORDER, TASK_METRICS


def aggregate(log: EventLog) -> dict[str, float]:
    """Sums over every task that reported metrics, plus stage counts and derived figures."""
    tasks = log.tasks
    stages = log.stages
    result: dict[str, float] = {
        "numStages": float(len(stages)),
        "numTasks": float(len(tasks)),
        "elapsedTime": float(_elapsed(log)),
        "stageDuration": float(stages["stageDuration"].fillna(0).sum())
        if not stages.empty
        else 0.0,
    }
    for metric in TASK_METRICS:
        result[metric.name] = float(tasks[metric.name].sum()) if not tasks.empty else 0.0
    for name, parts in COMPOSITE_METRICS.items():
        result[name] = sum(result[p] for p in parts)
    ordered = {name: result[name] for name in REPORT_ORDER}
    ordered.update(derived(log, ordered))
    return ordered


def _elapsed(log: EventLog) -> float:
    if log.start_time is not None and log.end_time is not None:
        return log.end_time - log.start_time
    tasks = log.tasks
    if tasks.empty:
        return 0.0
    start = log.start_time if log.start_time is not None else tasks["launchTime"].min()
    return float(tasks["finishTime"].max() - start)


def derived(log: EventLog, sums: dict[str, float]) -> dict[str, float | None]:
    run = sums["executorRunTime"]
    elapsed = sums["elapsedTime"]
    tasks = log.tasks
    delay = 0.0
    if not tasks.empty:
        parts = (
            tasks["duration"].fillna(0)
            - tasks["executorRunTime"]
            - tasks["executorDeserializeTime"]
            - tasks["resultSerializationTime"]
            - tasks["gettingResultTime"]
        )
        delay = float(parts.clip(lower=0).sum())
    return {
        "avgActiveTasks": run / elapsed if elapsed else None,
        "cpuShare": sums["executorCpuTime"] / run if run else None,
        "gcShare": sums["jvmGCTime"] / run if run else None,
        "schedulerDelay": delay,
    }
