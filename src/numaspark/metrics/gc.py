"""Garbage collection per executor, from an event log.

GC time and its share of run time come from the task metrics (``jvmGCTime``
over ``executorRunTime``, per executor). Minor and major collection counts
and times come from the executor metrics Spark logs per stage when
``spark.eventLog.logStageExecutorMetrics`` is on (numaspark turns it on): they
are the JVM's cumulative GarbageCollectorMXBean figures as of the executor's
last heartbeat in the stage, so a window's collections are its stages'
highest reading less the highest before them.
"""

from __future__ import annotations

from numaspark.metrics.eventlog import GC_METRICS, EventLog


def gc_by_executor(log: EventLog, stage_ids: set[int] | None = None) -> list[dict]:
    """Per executor: GC ms, run ms, GC share, and minor/major counts and times where logged."""
    sums = log.executor_sums
    if stage_ids is not None and not sums.empty:
        sums = sums[sums["stageId"].isin(stage_ids)]
    rows = []
    if sums.empty:
        return rows
    for executor, group in sums.groupby("executorId", sort=True):
        gc_ms, run_ms = float(group["jvmGCTime"].sum()), float(group["executorRunTime"].sum())
        row = {
            "executor": str(executor),
            "tasks": int(group["tasks"].sum()),
            "gc_ms": gc_ms,
            "run_ms": run_ms,
            "gc_share": round(gc_ms / run_ms, 4) if run_ms else None,
        }
        row.update(_collections(log, str(executor), stage_ids))
        rows.append(row)
    return rows


def _collections(log: EventLog, executor: str, stage_ids: set[int] | None) -> dict:
    entries = [m for m in log.stage_executor_metrics if m["executorId"] == executor]
    if not entries:
        return {}
    inside = [m for m in entries if stage_ids is None or m["stageId"] in stage_ids]
    if not inside:
        return {}
    first = min(m["stageId"] for m in inside)
    before = [m for m in entries if m["stageId"] < first]
    result = {}
    for key in GC_METRICS:
        high = max((m[key] or 0) for m in inside)
        low = max(((m[key] or 0) for m in before), default=0)
        result[key] = max(0, high - low)
    return result
