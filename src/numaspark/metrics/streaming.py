"""Structured Streaming figures from the query progress events of an event log.

Spark logs one ``QueryProgressEvent`` per trigger: rows read, the input and
processing rates, how long the batch took, and the values of ``observe()``d
metrics. numaspark's streaming jobs observe each batch's event count, mean
and oldest event time (the millisecond the source sent it), so end-to-end
latency is the batch's end minus those: the mean latency of its events and
that of its oldest one.

Only the batches that started inside the measured window count (after the
warm-up, until the source stopped sending); the input rate is the rows those
batches read over the window's length.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

OBSERVED = "numaspark_events"

# name -> (label, unit, what it is), in report order
STREAM_METRICS = {
    "inputRate": (
        "input rate",
        "events/s",
        "rows read by the measured batches / measured seconds (without a window: the batches"
        " after the first, over the time from the first batch's start to the last's)",
    ),
    "processingRate": (
        "processing rate",
        "events/s",
        "rows / batch duration, mean over batches that read rows",
    ),
    "batches": ("batches measured", "", "batches started in the measured window"),
    "batchDurationMean": ("batch duration mean", "ms", "mean trigger-to-commit time of a batch"),
    "batchDurationP95": ("batch duration p95", "ms", "95th percentile batch duration"),
    "batchDurationMax": ("batch duration max", "ms", "longest batch"),
    "behindBatches": (
        "batches over the trigger",
        "",
        "batches that took longer than the trigger interval",
    ),
    "latencyMean": ("latency mean", "ms", "batch end minus event time, mean over events"),
    "latencyP95": (
        "latency p95",
        "ms",
        "95th percentile over batches of their events' mean latency",
    ),
    "latencyMax": ("latency max", "ms", "batch end minus its oldest event's time, worst batch"),
    "drainMs": (
        "drain after the source stopped",
        "ms",
        "from the source's last event to the end of the batch that took it in",
    ),
}


def _epoch_ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def compact_progress(progress: dict) -> dict:
    """The parts of a ``StreamingQueryProgress`` that numaspark uses."""
    sources = progress.get("sources") or [{}]
    observed = (progress.get("observedMetrics") or {}).get(OBSERVED) or {}
    names = [f["name"] for f in (observed.get("schema") or {}).get("fields", [])]
    values = dict(zip(names, observed.get("values") or [], strict=False))
    duration = progress.get("durationMs") or {}
    return {
        "runId": progress.get("runId"),
        "name": progress.get("name"),
        "batchId": progress.get("batchId"),
        "start_ms": _epoch_ms(progress["timestamp"]) if progress.get("timestamp") else None,
        "duration_ms": duration.get("triggerExecution", progress.get("batchDuration")),
        "rows": sum(int(s.get("numInputRows") or 0) for s in sources),
        "inputRowsPerSecond": sources[0].get("inputRowsPerSecond"),
        "processedRowsPerSecond": sources[0].get("processedRowsPerSecond"),
        "observed": values,
    }


def _input_rate(
    working: list[dict], rows: np.ndarray, from_ms: int | None, until_ms: int | None
) -> float | None:
    """Rows per second: over the window where one was given; without one (a user's stream),
    between the first batch's start and the last's. A batch reads what its source offered
    since the batch before it started, so the first batch's rows (all that waited since the
    source started: a query that started late read a backlog) are left out, and one batch
    alone gives no rate."""
    if from_ms is not None and until_ms is not None and until_ms > from_ms:
        return float(rows.sum() / ((until_ms - from_ms) / 1000))
    seconds = (working[-1]["start_ms"] - working[0]["start_ms"]) / 1000
    return float(rows[1:].sum() / seconds) if seconds > 0 else None


def summarize_stream(
    progress: list[dict],
    run_id: str,
    from_ms: int | None = None,
    until_ms: int | None = None,
    trigger_ms: float | None = None,
) -> dict[str, float | None]:
    """`STREAM_METRICS` for one query run, measured over ``[from_ms, until_ms]``.

    Rates and batch durations count the batches that started in the window;
    latency also counts the batches after it that drained the events sent in
    it (a query that falls behind shows it there, and in ``drainMs``).
    """
    runs = [p for p in progress if p.get("runId") == run_id and p.get("start_ms") is not None]
    after = [p for p in runs if from_ms is None or p["start_ms"] >= from_ms]
    after = [p for p in after if p["rows"] > 0]
    working = [p for p in after if until_ms is None or p["start_ms"] <= until_ms]
    result: dict[str, float | None] = dict.fromkeys(STREAM_METRICS)
    result["batches"] = float(len(working))
    if after and until_ms is not None:
        last = after[-1]
        result["drainMs"] = float(max(0, last["start_ms"] + (last["duration_ms"] or 0) - until_ms))
    if working:
        durations = np.array([p["duration_ms"] or 0 for p in working], dtype=float)
        rows = np.array([p["rows"] for p in working], dtype=float)
        result["inputRate"] = _input_rate(working, rows, from_ms, until_ms)
        result["processingRate"] = float(np.mean(rows / np.maximum(durations, 1) * 1000))
        result["batchDurationMean"] = float(durations.mean())
        result["batchDurationP95"] = float(np.percentile(durations, 95))
        result["batchDurationMax"] = float(durations.max())
        if trigger_ms:
            result["behindBatches"] = float((durations > trigger_ms).sum())
    means, worst, weights = [], [], []
    for p in after:
        seen = p["observed"]
        if seen.get("avg_ts") is None:
            continue
        end = p["start_ms"] + (p["duration_ms"] or 0)
        means.append(end - float(seen["avg_ts"]))
        worst.append(end - float(seen["min_ts"]))
        weights.append(float(seen.get("events") or 0))
    if means and sum(weights) > 0:
        result["latencyMean"] = float(np.average(means, weights=weights))
        result["latencyP95"] = float(np.percentile(means, 95))
        result["latencyMax"] = float(max(worst))
    return result
