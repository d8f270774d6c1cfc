"""Results and event-log tables to CSV and Parquet (pandas/pyarrow)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult


def results_frame(results: list[RunResult]) -> pd.DataFrame:
    """One row per run: the spec's main fields, status, wall time, every Spark aggregate
    (``spark.*``) and, for streaming runs, the stream figures (``stream.*``)."""
    rows = []
    for r in results:
        spec = r.spec
        row = {
            "run_id": r.run_id,
            "started_at": r.started_at,
            "workload": spec.get("workload"),
            "size": spec.get("size"),
            "mode": spec.get("mode"),
            "binding": spec.get("binding"),
            "mem_policy": spec.get("mem_policy"),
            "executors": spec.get("executors"),
            "cores_per_executor": spec.get("cores_per_executor"),
            "label": spec.get("label"),
            "warmup": spec.get("warmup"),
            "repetition": spec.get("repetition"),
            "status": r.status,
            "failure_reason": r.failure_reason,
            "wall_time_s": r.wall_time_s,
            "app_id": r.app_id,
            "topology_fingerprint": r.environment.get("topology_fingerprint"),
        }
        row.update({f"spark.{k}": v for k, v in r.metrics.items()})
        row.update({f"stream.{k}": v for k, v in (r.streaming or {}).items()})
        rows.append(row)
    return pd.DataFrame(rows)


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """CSV or Parquet by the file's extension."""
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    else:
        raise UsageError(f"{path}: write .csv or .parquet")
