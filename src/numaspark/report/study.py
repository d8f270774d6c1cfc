"""Tables of an experiment's results: per configuration, the statistics and the comparison."""

from __future__ import annotations

from rich.table import Table

from numaspark.experiment.result import RunResult, measured
from numaspark.experiment.spec import Experiment
from numaspark.experiment.stats import compare, summarize


def by_config(experiment: Experiment, stored: list[RunResult]) -> dict[str, list[RunResult]]:
    """Measured, ok runs of each configuration of ``experiment`` (stored ones included)."""
    keys = {c.key for c in experiment.configs}
    runs: dict[str, list[RunResult]] = {k: [] for k in keys}
    for r in measured(stored):
        if r.spec.config in runs:
            runs[r.spec.config].append(r)
    return runs


def study_table(
    experiment: Experiment, stored: list[RunResult], title: str, baseline: str | None = None
) -> tuple[Table, list[str], dict[str, float]]:
    """Median, range, MAD, GC, and speed against the baseline (first configuration by default),
    with whether the difference is beyond the noise; the fastest marked. Also the medians."""
    runs = by_config(experiment, stored)
    table = Table(title=title, title_justify="left")
    for column in ("configuration", "runs", "median s", "range s", "MAD s", "GC", "speed", ""):
        table.add_column(column, justify="left" if column == "configuration" else "right")
    warnings: list[str] = []
    medians: dict[str, float] = {}
    summaries = {}
    for config in experiment.configs:
        walls = [r.wall_time_s for r in runs[config.key]]
        summary = summarize(walls)
        if summary is not None:
            summaries[config.key] = (config, summary, walls)
            medians[config.label] = summary.median
            warning = summary.warning(config.label)
            if warning:
                warnings.append(warning)
    if not summaries:
        return table, ["no configuration has a measured run yet"], medians
    base_key = next(
        (k for k, (c, _, _) in summaries.items() if c.label == baseline), next(iter(summaries))
    )
    base_walls = summaries[base_key][2]
    base_env = runs[base_key][0].environment
    best = min(summaries, key=lambda k: summaries[k][1].median)
    for config in experiment.configs:
        if config.key not in summaries:
            table.add_row(config.label, "0", "-", "-", "-", "-", "-", "not run")
            continue
        _, s, walls = summaries[config.key]
        gc = summarize([r.metrics.gcShare or 0.0 for r in runs[config.key]])
        if config.key == base_key:
            speed = "baseline"
        else:
            speed = compare(base_walls, walls).words()
            differs = base_env.differences(runs[config.key][0].environment)
            if differs:
                speed = "not comparable"
                warnings.append(
                    f"{config.label}: environment differs from the baseline's "
                    f"({'; '.join(differs)})"
                )
        table.add_row(
            config.label,
            str(s.n),
            f"{s.median:.2f}",
            f"{s.minimum:.2f}-{s.maximum:.2f}",
            f"{s.mad:.2f}",
            f"{gc.median:.1%}" if gc else "-",
            speed,
            "best" if config.key == best else "",
        )
    return table, warnings, medians
