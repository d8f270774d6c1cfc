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
    return _aggregate(log.stage_sums, log.stages, _app_elapsed(log))


def task_total(log: EventLog, name: str) -> float:
    """One task metric's sum over every task that ended, in the registry's unit: from the
    stage sums, or from the task table's column where the log was parsed without sums."""
    if not log.stage_sums.empty:
        return float(log.stage_sums[name].sum())
    return float(log.tasks[name].sum()) if name in log.tasks else 0.0


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
    sums = log.stage_sums
    sums = sums[sums["stageId"].isin(stage_ids)] if not sums.empty else sums
    stages = (
        log.stages[log.stages["stageId"].isin(stage_ids)] if not log.stages.empty else log.stages
    )
    end = jobs["completionTime"].max()
    if pd.isna(end):  # the group's last job never ended (the app was stopped)
        end = sums["lastFinish"].max() if not sums.empty else jobs["submissionTime"].min()
    return _aggregate(sums, stages, float(end - jobs["submissionTime"].min()))


def _aggregate(sums: pd.DataFrame, stages: pd.DataFrame, elapsed: float) -> dict[str, float | None]:
    result: dict[str, float] = {
        "numStages": float(len(stages)),
        "numTasks": float(sums["tasksEnded"].sum()) if not sums.empty else 0.0,
        "elapsedTime": float(elapsed),
        "stageDuration": float(stages["stageDuration"].fillna(0).sum())
        if not stages.empty
        else 0.0,
    }
    for metric in TASK_METRICS:
        result[metric.name] = float(sums[metric.name].sum()) if not sums.empty else 0.0
    for name, parts in COMPOSITE_METRICS.items():
        result[name] = sum(result[p] for p in parts)
    ordered: dict[str, float | None] = {name: result[name] for name in REPORT_ORDER}
    ordered.update(_derived(sums, result))
    return ordered


def _app_elapsed(log: EventLog) -> float:
    """From the application's start to its end; from its tasks when the log lacks either or
    ends before it starts (an altered clock or log: parse_event_log warns)."""
    if log.start_time is not None and log.end_time is not None:
        if log.end_time >= log.start_time:
            return float(log.end_time - log.start_time)
        sums = log.stage_sums
        return 0.0 if sums.empty else float(sums["lastFinish"].max() - sums["firstLaunch"].min())
    sums = log.stage_sums
    if sums.empty:
        return 0.0
    start = log.start_time if log.start_time is not None else sums["firstLaunch"].min()
    return float(sums["lastFinish"].max() - start)


def _derived(sums: pd.DataFrame, totals: dict[str, float]) -> dict[str, float | None]:
    run = totals["executorRunTime"]
    elapsed = totals["elapsedTime"]
    return {
        "avgActiveTasks": run / elapsed if elapsed else None,
        "cpuShare": totals["executorCpuTime"] / run if run else None,
        "gcShare": totals["jvmGCTime"] / run if run else None,
        "schedulerDelay": float(sums["schedulerDelay"].sum()) if not sums.empty else 0.0,
    }


def job_time_ms(log: EventLog) -> float | None:
    """The union of the application's jobs' spans (submission to completion), in ms: its
    time in Spark jobs, without driver start-up and the gaps between jobs. A job that never
    ended counts to the application's end, when there is one."""
    if log.jobs.empty:
        return None
    spans = []
    for start, end in zip(log.jobs["submissionTime"], log.jobs["completionTime"], strict=True):
        if pd.isna(start):
            continue
        if pd.isna(end):
            if log.end_time is None:
                continue
            end = log.end_time
        spans.append((float(start), float(end)))
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total if spans else None
