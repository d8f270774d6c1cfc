"""Terminal views (rich) of Spark's event logs: ``numaspark analyze`` and ``whatif`` of one
application, the placement the affinity plugin reported into a log, and the tables of many
logs (``advise DIR|URL``, ``results DIR|LOG``)."""

from __future__ import annotations

from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from numaspark.metrics.logdir import attempt_named
from numaspark.report.views_advice import SEVERITY_COLOURS


def whatif_table(app_id: str, measured_s: float, predictions: list) -> Table:
    """One row per core count; with executors that came and go (dynamic allocation), also
    the job time spent waiting for them to start, said under the table."""
    startup = any(getattr(p, "startup_s", 0.0) for p in predictions)
    table = Table(title=f"{app_id}: measured {measured_s:.1f} s", title_justify="left")
    columns = ["cores", "predicted s", "utilisation", "critical path s", "driver only s"]
    for column in columns + (["executor start-up s"] if startup else []):
        table.add_column(column, justify="right")
    for p in predictions:
        start = [f"{p.startup_s:.1f}"] if startup else []
        table.add_row(
            str(p.cores),
            f"{p.time_s:.1f}",
            f"{p.utilisation:.0%}",
            f"{p.critical_path_s:.1f}",
            f"{p.driver_s:.1f}",
            *start,
        )
    if startup:
        table.caption = (
            "executor start-up: dynamic allocation removed the executors between jobs; a job "
            "that began with none alive waits as it did in the log (its submission to its "
            "first task), the slots not alive at a job's start come after the median of "
            "those waits"
        )
        table.caption_justify = "left"
    return table


def log_lines(log, summary: dict) -> list[str]:
    """``numaspark analyze`` of one event log: its metrics in sparkMeasure's terms, readings."""
    # lazy: it brings numpy, which a command that does not need it never loads
    from numaspark.report.metrics import sparkmeasure_lines

    return [
        f"[bold]{log.app_id}[/] {log.app_name or ''} (Spark {log.spark_version or '?'}) {log.path}",
        *sparkmeasure_lines(summary["aggregates"]),
        "",
        "Readings:",
        *(f"  {line}" for line in summary["readings"]),
        "  (CPU, context switches and counters are recorded by numaspark run; "
        "an event log alone does not have them)",
        "",
        *placement_lines(summary.get("placement") or []),
    ]


def placement_lines(placement: list[dict]) -> list[str]:
    """Where each JVM ran, as the affinity plugin reported it into the event log."""
    if not placement:
        return [
            "Placement: none in this log (the affinity plugin was not in the application: "
            "numaspark plan --target ... --out DIR writes its settings)"
        ]
    lines = ["Placement (the affinity plugin's reports, the latest of each JVM):"]
    for jvm in placement:
        nodes = f"node {jvm['nodes']}" if jvm["nodes"] else "nodes unknown"
        share = jvm["local_share"]
        local = f", {share:.0%} of pages on node {jvm['bound_nodes']}" if jvm["bound_nodes"] else ""
        if share is not None and not jvm["bound_nodes"]:
            local = f", {share:.0%} of pages local"
        python = (
            f", {jvm['python_processes']} Python process(es)" if jvm["python_processes"] else ""
        )
        lines.append(
            f"  {jvm['jvm']} on {jvm['host']}: CPUs {jvm['cpus']} ({nodes}), "
            f"policy {jvm['policy']}{local}, {jvm['pinned_tasks'] or 0} task(s) pinned, "
            f"{jvm['task_migrations'] or 0} migrated{python}, "
            f"numa_balancing={jvm['numa_balancing'] or '?'}{_devices_text(jvm)}"
        )
    return lines


def _devices_text(jvm: dict) -> str:
    """``, gpu 0 on node 1, traffic via eth0 (node 0)``: the devices Spark gave a JVM and the
    interface its traffic leaves by, each with its node as the plugin read it."""
    parts = [
        f"{d.get('resource')} {d.get('address')} on "
        + (f"node {d['node']}" if d.get("node") is not None else "no known node")
        for d in jvm.get("devices") or []
    ]
    nic = jvm.get("nic") or {}
    if nic.get("name"):
        where = f"node {nic['node']}" if nic.get("node") is not None else "no known node"
        parts.append(f"traffic via {nic['name']} ({where})")
    return "".join(f", {p}" for p in parts)


# --- many event logs (advise DIR or URL) -----------------------------------------------------

#: the NUMA rules' columns, as the table heads them
_RULE_HEADS = {
    "numa-straddle": "straddle",
    "remote-pages": "pages",
    "numa-balancing": "balancing",
    "python-cpu": "py cpu",
    "python-memory": "py mem",
}


_BY_WORD = {severity.word: colour for severity, colour in SEVERITY_COLOURS.items()}


def _severity_cell(word: str | None) -> Text:
    if word is None or word not in _BY_WORD:
        return Text("-", style="dim")  # not assessed: the log has no placement events
    return Text(word, style=_BY_WORD[word])


def _scan_placement(summary) -> str:
    """bound (its nodes), unbound or not recorded (the share of executor-seconds bound is
    ``bound_share`` in --json, --csv and the report)."""
    if summary.placement == "bound":
        return f"bound {summary.bound_nodes}" if summary.bound_nodes else "bound"
    return summary.placement


def history_table(scan) -> Table:
    """``numaspark advise DIR|URL``: one row per application, grouped by name (a section
    each), with its placement and the severity of each NUMA rule (-: not assessed)."""
    groups = scan.groups()
    table = Table(
        title=f"{sum(map(len, groups.values()))} application(s) in {escape(scan.source)}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    # narrow terminals: the names and ids fold rather than lose their ends to an ellipsis;
    # the short columns keep their heads' width (a severity word is at most 8 characters)
    table.add_column("application", min_width=12, max_width=28, overflow="fold")
    table.add_column("app id", min_width=12, overflow="fold")
    table.add_column("Spark", min_width=5, max_width=14, overflow="fold")
    table.add_column("duration", justify="right", min_width=8, overflow="fold")
    table.add_column("executors", justify="right", min_width=9, overflow="fold")
    table.add_column("placement", min_width=9, overflow="fold")
    for head in _RULE_HEADS.values():
        table.add_column(head, min_width=max(len(head), 8), overflow="fold")
    for name, runs in groups.items():
        for i, summary in enumerate(runs):
            duration = summary.duration_s
            table.add_row(
                Text(name) if i == 0 else "",
                Text(_application_id(summary) or "-"),
                Text(summary.spark_version or "-"),
                "-" if duration is None else f"{duration:,.1f} s",
                str(summary.executors),
                _scan_placement(summary),
                *(_severity_cell(summary.severities.get(rule)) for rule in _RULE_HEADS),
                end_section=i == len(runs) - 1,
            )
    return table


def history_lines(scan) -> list[str]:
    """Under the table: each worst finding in words, bound against unbound from history, and
    how many logs were read."""
    lines = []
    findings = [
        (s, s.worst) for runs in scan.groups().values() for s in runs if s.worst is not None
    ]
    if findings:
        lines.append("Worst NUMA finding of each application that has one:")
        lines += [
            f"  {escape(_application_id(s) or s.log)}: {w['severity']} {w['rule']}: {escape(w['finding'])}"
            for s, w in findings
        ]
    comparisons = scan.comparisons()
    if comparisons:
        lines.append(f"Bound against unbound runs, {scan.observational}:")
        lines += [f"  {escape(c.line())}" for c in comparisons]
    lines.append(scan.tally())
    return lines


def _application_id(summary) -> str | None:
    """A summary's application id, with its attempt where the log names one."""
    return attempt_named(summary.app_id, getattr(summary, "attempt_id", None))


def _at_once(row: dict) -> str:
    """The most executors alive at once and their task slots (``-``: no executor events)."""
    if not row.get("peak_executors"):
        return "-"
    return f"{row['peak_executors']} ({row['peak_slots']} slots)"


def applications_table(scan) -> Table:
    """``numaspark results DIR|LOG`` of event logs: one row per application, grouped by name
    (a section each): what ran, how long, and where as the affinity plugin reported it."""
    groups = scan.groups()
    table = Table(
        title=f"{sum(map(len, groups.values()))} application(s) in {escape(scan.source)}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    # narrow terminals: cells wrap (an id folds) rather than lose their ends to an ellipsis
    table.add_column("application", max_width=28, overflow="fold")
    table.add_column("app id", overflow="fold")
    table.add_column("Spark", max_width=14, overflow="fold")
    table.add_column("start (UTC)", overflow="fold")
    table.add_column("duration", justify="right", overflow="fold")
    table.add_column("status", overflow="fold")
    for head in ("jobs", "stages", "tasks", "executors", "at once"):
        table.add_column(head, justify="right", overflow="fold")
    table.add_column("placement", overflow="fold")
    table.add_column("local pages", justify="right", overflow="fold")
    for name, runs in groups.items():
        for i, summary in enumerate(runs):
            row = summary.row()
            failed = f" ({row['failed_jobs']} failed)" if row["failed_jobs"] else ""
            table.add_row(
                Text(name) if i == 0 else "",
                Text(attempt_named(row["app_id"], row["attempt_id"]) or "-"),
                Text(row["spark_version"] or "-"),
                (row["start"] or "-").replace("T", " ").removesuffix("Z"),
                "-" if row["duration_s"] is None else f"{row['duration_s']:,.1f} s",
                Text(row["status"], style="red" if row["status"] == "failed" else ""),
                f"{row['jobs']:,}{failed}",
                f"{row['stages']:,}",
                f"{row['tasks']:,}",
                str(row["executors"]),
                _at_once(row),
                _scan_placement(summary),
                "-" if row["local_share"] is None else f"{row['local_share']:.0%}",
                end_section=i == len(runs) - 1,
            )
    return table


def whatif_applications_table(found) -> Table:
    """``whatif DIR`` (decide/whatif.py's `ManyWhatif`): one row per application, its
    measured time and the predicted time at each core count."""
    table = Table(
        title=f"{len(found.applications)} application(s) in {escape(found.source)}: "
        "predicted s at each core count",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("application", max_width=28, overflow="fold")
    table.add_column("app id", overflow="fold")
    table.add_column("measured s", justify="right")
    for cores in found.counts:
        table.add_column(f"{cores} core{'' if cores == 1 else 's'}", justify="right")
    apps = found.applications
    for i, app in enumerate(apps):
        name = app.name or "-"
        first = i == 0 or (apps[i - 1].name or "-") != name
        last = i == len(apps) - 1 or (apps[i + 1].name or "-") != name
        table.add_row(
            Text(name) if first else "",
            Text(app.application),
            f"{app.measured_s:.1f}",
            *(f"{p.time_s:.1f}" for p in app.predictions),
            end_section=last,
        )
    return table
