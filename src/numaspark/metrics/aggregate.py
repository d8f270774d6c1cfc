"""Aggregates of an `EventLog`, named and ordered as sparkMeasure's report.

For the whole application, or for one job group (numaspark runs each
iteration of a workload as its own job group).
"""

from __future__ import annotations

import pandas as pd

from numaspark.metrics.eventlog import EventLog
from numaspark.metrics.registry import COMPOSITE_METRICS, REPORT_ORDER, TASK_METRICS


def aggregate(log: EventLog) -> dict[str, float | None]:
    """Sums over every task that ended, plus stage counts and derived figures."""
    return _aggregate(log.tasks, log.stages, _app_elapsed(log))


def job_group_stages(log: EventLog, group: str) -> set[int]:
    """The stage ids of the jobs of one job group."""
    if log.jobs.empty:
        return set()
    jobs = log.jobs[log.jobs["jobGroup"] == group]
    return {stage for ids in jobs["stageIds"] for stage in ids}


def aggregate_job_group(log: EventLog, group: str) -> dict[str, float | None] | None:
    """The same for the jobs of one job group; None when the group ran no job."""
    jobs = log.jobs[log.jobs["jobGroup"] == group] if not log.jobs.empty else log.jobs
    if jobs.empty:
        return None
    stage_ids = {stage for ids in jobs["stageIds"] for stage in ids}
    tasks = log.tasks[log.tasks["stageId"].isin(stage_ids)] if not log.tasks.empty else log.tasks
    stages = (
        log.stages[log.stages["stageId"].isin(stage_ids)] if not log.stages.empty else log.stages
    )
    end = jobs["completionTime"].max()
    if pd.isna(end):  # the group's last job never ended (the app was stopped)
        end = tasks["finishTime"].max() if not tasks.empty else jobs["submissionTime"].min()
    return _aggregate(tasks, stages, float(end - jobs["submissionTime"].min()))


def _aggregate(
    tasks: pd.DataFrame, stages: pd.DataFrame, elapsed: float
) -> dict[str, float | None]:
    result: dict[str, float] = {
        "numStages": float(len(stages)),
        "numTasks": float(len(tasks)),
        "elapsedTime": float(elapsed),
        "stageDuration": float(stages["stageDuration"].fillna(0).sum())
        if not stages.empty
        else 0.0,
    }
    for metric in TASK_METRICS:
        result[metric.name] = float(tasks[metric.name].sum()) if not tasks.empty else 0.0
    for name, parts in COMPOSITE_METRICS.items():
        result[name] = sum(result[p] for p in parts)
    ordered: dict[str, float | None] = {name: result[name] for name in REPORT_ORDER}
    ordered.update(_derived(tasks, result))
    return ordered


def _app_elapsed(log: EventLog) -> float:
    if log.start_time is not None and log.end_time is not None:
        return float(log.end_time - log.start_time)
    tasks = log.tasks
    if tasks.empty:
        return 0.0
    start = log.start_time if log.start_time is not None else tasks["launchTime"].min()
    return float(tasks["finishTime"].max() - start)


def _derived(tasks: pd.DataFrame, sums: dict[str, float]) -> dict[str, float | None]:
    run = sums["executorRunTime"]
    elapsed = sums["elapsedTime"]
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
