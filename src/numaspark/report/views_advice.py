"""Terminal views (rich) of what numaspark concludes from results: the advice's findings
with their severity colours, the classification of configurations, and the tuner's trials."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from numaspark.decide.thresholds import Severity


def classification_table(found, directory: object) -> Table:
    table = Table(
        title=f"{directory}: configurations by what explains their time", title_justify="left"
    )
    for column in ("configuration", "runs", "median s", "vs best", "group", "evidence"):
        table.add_column(
            column, justify="right" if column in ("runs", "median s", "vs best") else "left"
        )
    best = found.configs[0].wall_s
    for c in found.configs:
        for number, label in enumerate(c.labels):
            first = number == 0
            table.add_row(
                c.label if first else "",
                str(c.runs) if first else "",
                f"{c.wall_s:.2f}" if first else "",
                f"{c.wall_s / best - 1:+.0%}" if first else "",
                label.text,
                _evidence_text(label.evidence),
            )
    return table


def _evidence_text(evidence: dict) -> str:
    parts = []
    for name, value in evidence.items():
        if isinstance(value, dict) and "value" in value:
            parts.append(f"{name} {_fmt(value['value'])} (best {_fmt(value['best'])})")
        elif isinstance(value, list):
            parts.append(f"{name}: {', '.join(map(str, value))}")
        else:
            parts.append(f"{name} {_fmt(value)}")
    return "; ".join(parts)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "-" if value is None else str(value)


SEVERITY_COLOURS = {
    Severity.NONE: "green",
    Severity.LOW: "cyan",
    Severity.MODERATE: "yellow",
    Severity.SEVERE: "red",
    Severity.CRITICAL: "bold red",
}


def advice_lines(advices: list, show_all: bool, causes: list) -> list[str]:
    """The findings of each advice first, with their severity colour, recommendation and what
    to run or set; then, once for all of them, the rules not assessed, one line per cause
    (``causes``: decide/advise's `not_assessed_by_cause` of ``advices``)."""

    colours = SEVERITY_COLOURS
    lines = []
    for advice in advices:
        lines.append(f"[bold]{escape(advice.subject)}[/]: worst {advice.worst.word}")
        for f in advice.findings:
            if f.severity is Severity.NONE and not show_all:
                continue
            lines.append(
                f"  [{colours[f.severity]}]{f.severity.word:>8}[/] {f.rule}: {escape(f.finding)}"
            )
            if f.recommendation:
                lines.append(f"           -> {escape(f.recommendation)}")
            if f.command:
                lines.append(f"           {_command_mark(f.command)} {escape(f.command)}")
            if f.check:
                lines.append(f"           ! {escape(f.check)}")
        quiet = [f.rule for f in advice.findings if f.severity is Severity.NONE]
        if quiet and not show_all:
            lines.append(f"  nothing found by: {', '.join(quiet)}")
    return lines + not_assessed_lines(causes)


def _command_mark(command: str) -> str:
    """What precedes a suggestion: ``$`` before a command to run; before spark-submit's options
    (advice on an event log alone: the settings that differ from the application's own), what
    they are added to."""
    return "add to spark-submit:" if command.startswith("--") else "$"


def not_assessed_lines(causes: list) -> list[str]:
    """The rules not assessed (`NotAssessedCause` each), a line per cause: its rules, the
    subjects it applies to where not all of them, and why."""
    if not causes:
        return []
    lines = ["[dim]not assessed:[/]"]
    for cause in causes:
        whom = "" if cause.every_subject else f" (for {'; '.join(cause.subjects)})"
        lines.append(f"  [dim]{escape(cause.rule_list() + whom)}: {escape(cause.why)}[/]")
    return lines


def trials_table(found, space, value_name: str) -> Table:
    table = Table(
        title=f"{len(found.trials)} trial(s) of {len(space.candidates)} candidates",
        title_justify="left",
    )
    table.add_column("#", justify="right")
    for name in space.names:
        table.add_column(name)
    table.add_column(value_name, justify="right")
    table.add_column("chosen by")
    best = found.best
    for trial in found.trials:
        value = "failed" if trial.value is None else f"{trial.value:.4g}"
        mark = " best" if best is not None and trial.number == best.number else ""
        table.add_row(
            str(trial.number),
            *(str(trial.params[n]) for n in space.names),
            value + mark,
            trial.source,
        )
    return table


def trial_failures(found) -> list[str]:
    """A line per failed trial that says why, then what the failures taught the search."""
    return [
        *(escape(f"trial {t.number} failed: {t.failure}") for t in found.trials if t.failure),
        *(escape(f"learned: {line}") for line in found.learned),
    ]
