"""Spark metrics and run results for the terminal, in sparkMeasure's report style."""

from __future__ import annotations

from collections import defaultdict

from rich.table import Table

from numaspark.experiment.result import RunResult, measured
from numaspark.experiment.stats import summarize
from numaspark.metrics.registry import DERIVED_METRICS, REPORT_ORDER, UNITS
from numaspark.metrics.streaming import STREAM_METRICS
from numaspark.units import human_size


def _human(name: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    unit = UNITS.get(name, "")
    if unit == "ms":
        return f"{value:.0f} ({_duration(value)})"
    if unit == "bytes":
        return f"{value:.0f} ({human_size(int(value))})"
    if unit == "ratio":
        return f"{value:.3f}"
    return f"{value:.0f}"


def _duration(ms: float) -> str:
    seconds = ms / 1000
    if seconds < 1:
        return f"{ms:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def sparkmeasure_lines(aggregates: dict[str, float | None]) -> list[str]:
    """``name => value (human)`` lines, in sparkMeasure's order, derived figures after."""
    lines = ["Aggregated Spark stage metrics:"]
    for name in REPORT_ORDER:
        if name in aggregates:
            lines.append(f"{name} => {_human(name, aggregates[name])}")
    lines.append("")
    lines.append("Derived:")
    for name in DERIVED_METRICS:
        if name in aggregates:
            lines.append(f"{name} => {_human(name, aggregates[name])}")
    return lines


def runs_table(results: list[RunResult]) -> Table:
    """Every run; with a hosts column when some ran on several hosts."""
    table = Table(title=f"{len(results)} run(s)", title_justify="left")
    hosts = any(r.spec.placement and r.spec.placement.hosts for r in results)
    for column in (
        "run",
        "workload",
        "size",
        "mode",
        "bind",
        "executors",
        *(("hosts",) if any(r.spec.placement and r.spec.placement.hosts for r in results) else ()),
        "status",
        "wall s",
        "elapsed s",
        "note",
    ):
        table.add_column(column, no_wrap=column not in ("note",))
    for r in results:
        s = r.spec
        elapsed = r.metrics.elapsedTime
        note = r.failure_reason or ("warm-up" if s.warmup else "")
        table.add_row(
            r.run_id,
            s.workload or "?",
            "-" if s.size is None else str(s.size),  # -: no size (a user's application)
            str(s.mode),
            str(s.binding),
            f"{s.executors}x{s.cores_per_executor}",
            *((",".join(s.placement.hosts) if s.placement else "-",) if hosts else ()),
            {"ok": "[green]ok[/]", "disturbed": "[yellow]disturbed[/]"}.get(
                r.status, "[red]failed[/]"
            ),
            f"{r.wall_time_s:.1f}" if r.wall_time_s is not None else "-",
            f"{elapsed / 1000:.1f}" if elapsed else "-",
            note or "",
        )
    return table


def comparison_table(
    results: list[RunResult], title: str = "Comparison"
) -> tuple[Table, list[str]]:
    """Median and range of wall time per configuration (warm-ups and failures left out).

    ``speed`` is the workload's first configuration's median over this one's:
    above 1x is faster than the first.
    """
    groups: dict[str, list[RunResult]] = defaultdict(list)
    for r in measured(results):
        groups[r.key].append(r)
    table = Table(title=title, title_justify="left")
    for column in ("workload", "configuration", "runs", "median s", "range s", "speed", "GC"):
        table.add_column(
            column, justify="left" if column in ("workload", "configuration") else "right"
        )
    warnings: list[str] = []
    baseline: dict[str, float] = {}
    for runs in groups.values():
        spec = runs[0].spec
        walls = summarize([r.wall_time_s for r in runs if r.wall_time_s is not None])
        if walls is None:
            continue
        config = spec.label or (
            f"{spec.mode} bind={spec.binding} {spec.executors}x{spec.cores_per_executor}"
        )
        base = baseline.setdefault(spec.workload, walls.median)
        gc = summarize([r.metrics.gcShare or 0.0 for r in runs])
        table.add_row(
            spec.workload,
            config,
            str(walls.n),
            f"{walls.median:.1f}",
            f"{walls.minimum:.1f}-{walls.maximum:.1f}",
            f"{base / walls.median:.2f}x",
            f"{gc.median:.1%}" if gc else "-",
        )
        warning = walls.warning(f"{spec.workload} {config}")
        if warning:
            warnings.append(warning)
    return table, warnings


# the source's asked rate first, then every figure of metrics/streaming.py
STREAM_ROWS = (
    ("rate asked", "events/s", "rateAsked"),
    *((label, unit, key) for key, (label, unit, _) in STREAM_METRICS.items()),
)


def stream_table(results: list[RunResult], title: str = "Streaming") -> Table:
    """The measured streaming runs side by side: rates, batch durations, latency.

    One row per figure, one column per run (runs are few; figures are many).
    """
    runs = [r for r in measured(results) if r.streaming]
    table = Table(title=title, title_justify="left")
    table.add_column("")
    table.add_column("unit")
    for r in runs:
        spec = r.spec
        table.add_column(
            spec.label
            or f"{spec.binding} {spec.executors}x{spec.cores_per_executor} "
            f"#{(spec.repetition or 0) + 1}",
            justify="right",
        )
    for name, unit, key in STREAM_ROWS:
        values = [r.streaming.get(key) for r in runs]
        table.add_row(name, unit, *("-" if v is None else f"{v:,.0f}" for v in values))
    return table
