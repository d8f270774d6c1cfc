"""Results, event logs' applications and their tables to CSV and Parquet (pandas/pyarrow)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult, by_configuration

RUN_COLUMNS = (
    "workload",
    "size",
    "mode",
    "binding",
    "mem_policy",
    "executors",
    "cores_per_executor",
    "label",
    "warmup",
    "repetition",
)


def results_frame(results: list[RunResult]) -> pd.DataFrame:
    """One row per run: the spec's main fields, status, wall time, every Spark aggregate
    (``spark.*``) and, for streaming runs, the stream figures (``stream.*``)."""
    rows = []
    for r in results:
        spec = r.spec
        row = {
            "run_id": r.run_id,
            "started_at": r.started_at,
            **{name: getattr(spec, name) for name in RUN_COLUMNS},
            "status": r.status,
            "failure_reason": r.failure_reason,
            "wall_time_s": r.wall_time_s,
            "app_id": r.app_id,
            "topology_fingerprint": r.environment.topology_fingerprint,
            "hosts": ",".join(spec.placement.hosts) if spec.placement else "",
        }
        row.update({f"spark.{k}": v for k, v in r.metrics.items()})
        row.update({f"stream.{k}": v for k, v in (r.streaming or {}).items()})
        rows.append(row)
    return pd.DataFrame(rows)


def results_rows(results: list[RunResult]) -> list[dict]:
    """``results --json``: the rows --csv writes, missing values null."""
    return json.loads(results_frame(results).to_json(orient="records"))


def export_applications(rows: list[dict], targets: list[Path | None]) -> list[str]:
    """Event logs' applications (decide/history.py's ``Scan.rows``: its APPLICATION_COLUMNS),
    one row each, to each of ``targets`` (.csv or .parquet); what was written."""
    frame = pd.DataFrame(rows)
    written = []
    for target in (t for t in targets if t is not None):
        write_table(frame, target)
        written.append(f"wrote {len(frame)} application(s) to {target}")
    return written


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


def export_results(
    results: list[RunResult], runs: list[Path | None], configs: Path | None = None
) -> list[str]:
    """One row per run to each of ``runs`` (.csv or .parquet), one row per configuration to
    ``configs``; what was written."""
    written = []
    for target in (t for t in runs if t is not None):
        write_table(results_frame(results), target)
        written.append(f"wrote {len(results)} run(s) to {target}")
    if configs is not None:
        frame = config_frame(results)
        write_table(frame, configs)
        written.append(f"wrote {len(frame)} configuration(s) to {configs}")
    return written


def write_log_tables(logs: list, tasks: Path | None, stages: Path | None) -> list[str]:
    """The task and stage tables of parsed event logs (one appId column); what was written."""
    written = []
    for target, attribute in ((tasks, "tasks"), (stages, "stages")):
        if target is not None:
            frame = pd.concat([getattr(log, attribute).assign(appId=log.app_id) for log in logs])
            write_table(frame, target)
            written.append(f"wrote {len(frame)} {attribute} to {target}")
    return written


# Spark settings that are parameters of a configuration table, by the column they become
CONF_COLUMNS = {
    "spark.default.parallelism": "partitions",
    "spark.sql.shuffle.partitions": "partitions",
}


CONFIG_COLUMNS = (
    "workload",
    "size",
    "mode",
    "executors",
    "cores_per_executor",
    "binding",
    "mem_policy",
)


def config_frame(results: list[RunResult], value: str = "wall_s") -> pd.DataFrame:
    """One row per configuration: the parameters that vary between configurations, and the
    median wall time of its measured ok runs as ``value``: what ``tune --replay`` reads."""
    groups = by_configuration(results)
    rows = []
    for runs in groups.values():
        spec = runs[0].spec
        row = {name: getattr(spec, name) for name in CONFIG_COLUMNS}
        row["mem_policy"] = spec.mem_policy or "default"
        conf = runs[0].settings
        for key, column in CONF_COLUMNS.items():
            if key in conf:
                row[column] = int(conf[key]) if str(conf[key]).isdigit() else conf[key]
        for key, setting in sorted(conf.items()):
            if key not in CONF_COLUMNS and key != "spark.master":
                row[key] = setting
        for key, param in sorted(spec.params.items()):
            row[f"param.{key}"] = param
        row[value] = round(float(pd.Series([r.wall_time_s for r in runs]).median()), 4)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise UsageError("no measured ok run to tabulate")
    text = frame.astype(str)
    kept: list[str] = []
    for column in frame.columns:
        if column == value:
            continue
        if text[column].nunique() < 2:
            continue  # the same everywhere: not a parameter
        if any(text.groupby(k)[column].nunique().max() == 1 for k in kept):
            continue  # decided by a kept column (mem_policy by binding): one parameter, not two
        kept.append(column)
    return frame[[*kept, value]]
