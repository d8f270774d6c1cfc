"""The resident memory of each executor's process tree, from an event log: the JVM's, its
Python workers' and the rest, as Spark's process-tree metrics give them
(``spark.executor.processTreeMetrics.enabled``, which numaspark turns on for a PySpark
application; ``logStageExecutorMetrics`` logs their peaks per stage and executor).

Spark reads the tree from /proc at each poll and names a process by its command (java,
python, other); a poll that meets a process ending reports zeros, so a zero is "not read",
never "none". In local mode the driver's tree holds the user's script too.
"""

from __future__ import annotations

from numaspark.metrics.eventlog import PROCESS_TREE_METRICS, EventLog

_NAMES = dict(
    zip(PROCESS_TREE_METRICS, ("jvm_rss_bytes", "python_rss_bytes", "other_rss_bytes"), strict=True)
)


def process_tree_memory(log: EventLog, stage_ids: set[int] | None = None) -> dict:
    """Per executor, the peaks over its stages (in ``stage_ids``, or all) of its JVM's, its
    Python workers' and other processes' RSS; per stage and executor the same; or a ``note``
    saying why there are none."""
    entries = [
        m for m in log.stage_executor_metrics if stage_ids is None or m["stageId"] in stage_ids
    ]
    read = [m for m in entries if any(m.get(k) for k in PROCESS_TREE_METRICS)]
    if not read:
        enabled = log.spark_properties.get("spark.executor.processTreeMetrics.enabled", "false")
        why = (
            "no stage logged a non-zero reading (stages shorter than the executors' polls)"
            if enabled.strip().lower() == "true"
            else "spark.executor.processTreeMetrics.enabled was off"
        )
        return {"note": f"process-tree memory not logged: {why}"}
    stages = [
        {
            "stage": m["stageId"],
            "executor": m["executorId"],
            **{name: m.get(key) or 0 for key, name in _NAMES.items()},
        }
        for m in read
    ]
    executors = []
    for executor in sorted({m["executor"] for m in stages}, key=_order):
        mine = [m for m in stages if m["executor"] == executor]
        executors.append(
            {"executor": executor, **{name: max(m[name] for m in mine) for name in _NAMES.values()}}
        )
    found = {"executors": executors, "stages": stages}
    unread = sorted(
        {m["executorId"] for m in entries} - {e["executor"] for e in executors}, key=_order
    )
    if unread:  # polled only at heartbeats, or every poll met a process ending: zeros
        found["unread"] = unread
    return found


def python_tasks(log: EventLog, stage_ids: set[int] | None = None) -> int | None:
    """How many tasks ran in stages that run Python (None: the log says nothing of stages)."""
    stages = log.stages
    if stages.empty or "python" not in stages or "tasksEnded" not in stages:
        return None
    if stage_ids is not None:
        stages = stages[stages["stageId"].isin(stage_ids)]
    return int(stages.loc[stages["python"].astype(bool), "tasksEnded"].fillna(0).sum())


def _order(executor: str) -> tuple[int, str]:
    return (int(executor), executor) if executor.isdigit() else (-1, executor)
