"""Show: stored runs or event logs listed, compared and exported (``results``), and the
HTML report of either (``report``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import numaspark.cli.progress as progress
from numaspark.cli.app import app, term
from numaspark.cli.option_group import Opt
from numaspark.cli.options import CompareTimeOpt, EventLogsOpt, InProgressOpt, JsonOpt, MixedOpt
from numaspark.errors import UsageError
from numaspark.experiment.result import refuse_mixed, retimed
from numaspark.experiment.store import ResultStore
from numaspark.report import console as views

SourceArg = Annotated[
    str,
    typer.Argument(
        help="A results directory (--out); or an event log, a directory of event logs (a History Server's) or a History Server's URL (http://host:18080).",
        show_default=False,
    ),
]


def _read_event_logs(source: str, forced: bool, in_progress: bool, results_only: dict):
    """The scan of the event logs ``source`` names, under a progress bar; None where it is a
    results directory. ``results_only``: options given (name -> value) that only a results
    directory has, refused with event logs."""
    from numaspark.decide import history

    if not history.reads_as_logs(source, forced):
        return None
    if given := [name for name, value in results_only.items() if value]:
        raise UsageError(
            f"{', '.join(given)}: only for a results directory (--out); {source} is read as "
            "event logs"
        )
    return progress.counted(
        term,
        "reading event logs",
        lambda on_progress: history.read_logs(source, forced, in_progress, on_progress),
    )


@app.command()
def results(
    source: SourceArg,
    csv: Annotated[Path | None, Opt(help="Export one row per run (or application) to CSV.")] = None,
    parquet: Annotated[
        Path | None, Opt(help="Export one row per run (or application) to Parquet.")
    ] = None,
    config_table: Annotated[
        Path | None,
        Opt(
            "--table",
            help="Export one row per configuration (what varies, median wall_s): the table 'tune --replay' reads.",
        ),
    ] = None,
    time: CompareTimeOpt = None,
    mixed: MixedOpt = False,
    as_json: JsonOpt = False,
    event_logs: EventLogsOpt = False,
    in_progress: InProgressOpt = False,
) -> None:
    """List stored runs, compare configurations, export them.

    Given event logs (a History Server's directory or URL, or one log): one row per
    application, grouped by name, with its status, jobs, stages, tasks and placement.

    \b
    Example:
      numaspark results numaspark-out --csv runs.csv
      numaspark results /shared/spark-events --json
    """
    # lazy: it brings pandas and pyarrow, which a command that does not need it never loads
    from numaspark.report.export import export_applications, export_results, results_rows

    only = {"--table": config_table, "--time": time, "--mixed": mixed}
    scan = _read_event_logs(source, event_logs, in_progress, only)
    if scan is not None:
        term.warn(scan.all_warnings())
        if as_json:
            term.document("results", scan.listing())
        else:
            term.print(views.applications_table(scan))
            term.lines([scan.tally()])
        _written(export_applications(scan.rows(), [csv, parquet]), as_json)
        return
    directory = Path(source)
    stored = retimed(ResultStore(directory).load(), time)
    refuse_mixed(stored, directory, mixed)
    term.warn(
        [
            f"run {r.run_id}: its event log is missing: {r.artifacts.event_log} (moved or "
            "deleted): its Spark figures are those stored with the run"
            for r in stored
            if r.artifacts.event_log and not Path(r.artifacts.event_log).exists()
        ]
    )
    if as_json:
        term.document("results", {"source": source, "runs": results_rows(stored)})
    else:
        progress.show_stored(term, stored)
    _written(export_results(stored, runs=[csv, parquet], configs=config_table), as_json)


def _written(lines: list[str], as_json: bool) -> None:
    """What an export wrote: on stdout, or on stderr beside JSON (which stdout holds alone)."""
    if not as_json:
        term.lines(lines)
        return
    for line in lines:
        term.err.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command()
def report(
    source: SourceArg,
    output: Annotated[Path, Opt("-o", "--output", help="The HTML file to write.")] = Path(
        "numaspark-report.html"
    ),
    time: CompareTimeOpt = None,
    mixed: MixedOpt = False,
    event_logs: EventLogsOpt = False,
    in_progress: InProgressOpt = False,
) -> None:
    """Write one self-contained HTML report of a results directory.

    It has plots, the topology and the advice. Given event logs: every application in a
    table, and the latest each with a section (grouped by name): its stage times, its NUMA
    findings and its executors' placement.

    \b
    Example:
      numaspark report numaspark-out -o report.html
      numaspark report /shared/spark-events -o history.html
    """
    # lazy: it brings pandas, jinja2 and plotly, which a command that does not need it never loads
    from numaspark.decide.history import read_applications
    from numaspark.report.applications import MAX_APPLICATIONS, write_log_report
    from numaspark.report.html import check_target, write_report

    check_target(output)
    scan = _read_event_logs(source, event_logs, in_progress, {"--time": time, "--mixed": mixed})
    if scan is None:
        written = write_report(Path(source), output, time, mixed)
    else:
        applications, warnings = progress.counted(
            term,
            "reading applications",
            lambda on_progress: read_applications(scan, MAX_APPLICATIONS, on_progress),
        )
        term.warn(scan.all_warnings() + warnings)
        written = write_log_report(scan, applications, warnings, output)
    term.print(f"report: {written.resolve()}", highlight=False)
