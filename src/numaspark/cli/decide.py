"""Decide: what explains a sweep's times (``classify``), what to change (``advise``), a
good layout found in few runs (``tune``; the session itself is decide/tune_session.py),
and what the time would be on other core counts (``whatif``, ``fit``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

import numaspark.cli.progress as progress
from numaspark import records
from numaspark.cli.app import app, term
from numaspark.cli.app_options import AppOptions, with_application
from numaspark.cli.experiment import planned_on
from numaspark.cli.option_group import Opt, option_group, options_of
from numaspark.cli.options import (
    ClusterOptions,
    ConfOpt,
    DataOpt,
    EventLogsOpt,
    InProgressOpt,
    JsonOpt,
    MixedOpt,
    OutOpt,
    ParamOpt,
    SizeOpt,
    TimeOpt,
    check_repeat,
    conf_of,
    params,
    topology_of,
    venue_of,
    with_cluster,
)
from numaspark.decide.classify import LABELS
from numaspark.decide.classify import classify as classify_runs
from numaspark.decide.tune_session import tune_search
from numaspark.errors import UsageError
from numaspark.experiment.result import DEFAULT_TIME, refuse_mixed
from numaspark.experiment.store import RESULTS_FILE, ResultStore
from numaspark.experiment.venue import HERE, Venue
from numaspark.report import console as views
from numaspark.units import parse_counts


@app.command()
def whatif(
    event_log: Annotated[
        Path,
        typer.Argument(
            help="An event log file or eventlog_v2_* directory, or a directory of event logs (a History Server's): one row per application."
        ),
    ],
    cores: Annotated[
        str | None,
        Opt(
            help="Core counts to simulate, e.g. 1,2,4,8 (default: up to the cores of the machine the run was recorded on)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict the application's time on other core counts.

    The prediction replays its real task durations. Given a directory of event logs: each
    application that finished, one row each, at the same core counts.

    \b
    Example:
      numaspark whatif numaspark-out/runs/*/eventlog/eventlog_v2_* --cores 1,2,4
      numaspark whatif /shared/spark-events --cores 4,8,16
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.decide import whatif as replay
    from numaspark.metrics.eventlog import parse_event_log

    given = parse_counts(cores, "--cores") if cores is not None else None
    if replay.holds_many_logs(event_log):
        _whatif_many(replay.whatif_directory(event_log, given), as_json)
        return
    log = parse_event_log(event_log, tasks=replay.TASK_COLUMNS)
    term.warn(log.warnings)
    if not log.complete:
        raise UsageError(f"{event_log}: {replay.not_finished(log)}")
    counts, origin = (given, "--cores") if given else replay.default_counts(log, event_log)
    predictions = [replay.simulate(log, c) for c in counts]
    measured_s = replay.measured_s(log)
    if as_json:
        term.document(
            "whatif",
            {
                "event_log": str(event_log),
                "measured_s": measured_s,
                "counts_from": origin,
                "executors": replay.executor_counts(log),
                "predictions": [p.__dict__ for p in predictions],
            },
        )
        return
    term.print(views.whatif_table(log.application, measured_s, predictions))
    term.print(
        f"core counts: {origin}; task durations are kept as measured: what changes with "
        "the core count (memory bandwidth, GC) is not simulated",
        highlight=False,
    )


def _whatif_many(found, as_json: bool) -> None:
    """``whatif DIR`` (decide/whatif.py's `ManyWhatif`): the table of applications, or JSON."""
    term.warn(
        found.warnings
        + [f"{n['event_log']}: not simulated: {n['why']}" for n in found.not_simulated]
    )
    if not found.applications:
        raise UsageError(f"{found.source}: no application that finished to simulate")
    if as_json:
        term.document("whatif", records.dump(found))
        return
    term.print(views.whatif_applications_table(found))
    term.print(
        f"core counts: {found.counts_from}; task durations are kept as measured: what "
        "changes with the core count (memory bandwidth, GC) is not simulated",
        highlight=False,
    )


@app.command()
def classify(
    directory: Annotated[Path, typer.Argument(help="Results of a sweep or study (--out).")],
    as_json: JsonOpt = False,
    mixed: MixedOpt = False,
) -> None:
    """Group a sweep's configurations by what explains their time.

    The groups follow Baig et al.

    \b
    Example:
      numaspark classify numaspark-out
    """

    stored = ResultStore(directory).load()
    refuse_mixed(stored, directory, mixed)
    found = classify_runs(stored)
    if as_json:
        term.document("classify", records.dump(found))
        return
    if not found.configs:
        raise UsageError(f"{directory}: no measured ok run to classify")
    term.print(views.classification_table(found, directory))
    for name, why in found.not_assessed.items():
        term.note("not assessed:", f"{LABELS[name]}: {why}")


@app.command()
def advise(
    source: Annotated[
        str,
        typer.Argument(
            help="A results directory (--out), an event log, a directory of event logs (a History Server's), or a History Server's URL (http://host:18080).",
            show_default=False,
        ),
    ],
    show_all: Annotated[bool, Opt("--all", help="Also list the rules that found nothing.")] = False,
    as_json: JsonOpt = False,
    mixed: MixedOpt = False,
    event_logs: EventLogsOpt = False,
    in_progress: InProgressOpt = False,
) -> None:
    """Say what to change, with the numbers behind it.

    Each rule has a severity, and each advice names the command that tries it. Given many
    event logs (a History Server's directory or URL): one table of applications with their
    NUMA findings, grouped by name, and each application's bound runs against its unbound
    ones (observational).

    \b
    Example:
      numaspark advise numaspark-out
      numaspark advise /shared/spark-events
      numaspark advise http://history:18080
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.decide import advise as rules
    from numaspark.decide import history

    if history.many_logs(source, event_logs):
        scan = progress.counted(
            term,
            "reading event logs",
            lambda on_progress: history.scan_source(source, in_progress, on_progress),
        )
        show_many_logs(scan, as_json)
        return
    advices = rules.advise_source(Path(source), mixed)
    term.warn([w for advice in advices for w in advice.warnings])
    causes = rules.not_assessed_by_cause(advices)
    if as_json:
        term.document(
            "advise",
            {
                "source": str(source),
                "advice": records.dump(advices),
                "not_assessed": records.dump(causes),
            },
        )
    else:
        term.lines(views.advice_lines(advices, show_all, causes))


def show_many_logs(scan, as_json: bool) -> None:
    """``advise`` of many event logs (a `decide.history.Scan`): the table, or JSON."""
    term.warn(scan.all_warnings())
    if as_json:
        term.document("advise", records.dump(scan))
    else:
        term.print(views.history_table(scan))
        term.lines(views.history_lines(scan))


@dataclasses.dataclass(frozen=True)
class TuneOptions:
    """``tune``'s own options (``@with_tune_options``), in the order its --help shows them:
    a replayed table's, the search's, and its trials' (real runs)."""

    replay: Annotated[
        Path | None,
        Opt(
            help="Replay a recorded CSV (one row per configuration) instead of Spark; its machine: --xml/--synthetic, else TABLE.json's or DIR/topology.json's beside it."
        ),
    ] = None
    minimize: Annotated[str, Opt(help="With --replay: the column to minimize.")] = "wall_s"
    column: Annotated[
        list[str] | None,
        Opt(
            "--column",
            help="With --replay: what a column means, NAME=ROLE (repeatable), e.g. scaleout=workers, cpu_cores_per_node=cores_per_worker; roles: the prior's names (executors, cores_per_executor, slots, threads_per_core, binding, partitions, memory, ...) and their synonyms; knob (searched without a prior: also undoes a role or the context read from the column's name); context, or none (not a knob: held fixed, the search runs within each of its values; a column named as the workload, algorithm, query, dataset, input or size is context unless declared a knob).",
        ),
    ] = None
    budget: Annotated[int, Opt(help="Most runs (trials).", min=1)] = 10
    budget_time: Annotated[str | None, Opt(help="Start no trial after this long, e.g. 30m.")] = None
    seed: Annotated[int, Opt(help="Seed of the search.")] = 0
    noise: Annotated[
        float,
        Opt(
            help="Relative difference treated as noise (the model's error; runs within it of the best are moved from too; early stop; a tie re-measured)."
        ),
    ] = 0.05
    early_stop: Annotated[bool, Opt(help="Stop when no configuration left can beat the best.")] = (
        True
    )
    size: SizeOpt = "tiny"
    repeat: Annotated[int, Opt(help="Measured iterations per trial.")] = 2
    warmup: Annotated[int, Opt(help="Warm-up iterations per trial.")] = 1
    out: OutOpt = Path("numaspark-out")
    resume: Annotated[
        bool,
        Opt(
            "--resume",
            help="Continue an earlier tune stored in --out: its measured configurations are read back into the search, first, and count against --budget.",
        ),
    ] = False
    data: DataOpt = None
    conf: ConfOpt = None
    param: ParamOpt = None
    as_json: JsonOpt = False
    time: TimeOpt = DEFAULT_TIME

    # what decide/tune_session.py asks of them (its `TuneAsks`), read and checked here
    def check_repeat(self) -> None:
        check_repeat(self.repeat, self.warmup)

    def workload_params(self) -> dict[str, str]:
        return params(self.param)

    def spark_conf(self) -> dict[str, str]:
        return conf_of(self.conf)


# tune's own options, handed to it as one ``options: TuneOptions`` (after its workload)
with_tune_options = option_group("options", options_of(TuneOptions), TuneOptions)


@app.command()
@with_cluster
@with_application
@with_tune_options
def tune(
    on: ClusterOptions,
    application: AppOptions,
    options: TuneOptions,
    workload: Annotated[
        str | None,
        typer.Argument(
            help="Workload or your application (./job.py, ./job.jar, or -- spark-submit ...) to tune by real runs (or give --replay)."
        ),
    ] = None,
) -> None:
    """Find a good layout and binding in few runs.

    It starts from the studies' rules on this machine (or on --xml's or --synthetic's),
    then tries local moves.

    \b
    Example:
      numaspark tune wordcount --budget 10
    """
    if options.column and options.replay is None:
        raise UsageError("--column declares a --replay table's columns: give --replay TABLE")
    venue: Venue = HERE
    if options.replay is None and (workload is not None or application.app_args):
        workload_of = application.workload(workload)
        workload, venue = workload_of.name, venue_of(on, workload_of)
    elif options.replay is not None and on.names_cluster:
        raise UsageError("--master and --hosts are for real runs: a --replay table runs nothing")
    # --xml or --synthetic: the cluster's hosts (the venue holds them), else the machine told
    given = on.machine() if venue.here else None
    planned = None if options.replay is not None else planned_on(venue)
    session = tune_search(
        options, workload, venue, given, planned, topology_of, term.note, term.warn
    )
    # a replayed table's context columns (the job, its input) are held: a search in each
    with session as (contexts, search):
        label, out = workload or options.replay.name, options.out if workload else None
        searched = contexts.searched(
            lambda c: progress.run_tuner(
                term, c.space, c.objective, options.budget, c.named(label), out, **search
            )
        )
    if options.as_json:
        term.document("tune", contexts.document(searched))
        return
    measured = options.minimize if options.replay else "median s"
    if contexts.held:
        term.print(contexts.describe(), highlight=False, markup=False)
    for context, found in searched:
        if context.values:
            term.print(f"\ncontext {context.label()}", highlight=False, markup=False)
        term.print(views.trials_table(found, context.space, measured))
        term.lines(views.trial_failures(found))
        term.print(f"stopped: {found.stopped}\n{found.prior}", highlight=False)
    if workload is not None:
        term.print(f"results: {(options.out / RESULTS_FILE).resolve()}")


@app.command()
def fit(
    table: Annotated[Path, typer.Argument(help="CSV of concurrency,elapsed seconds (header ok).")],
    predict: Annotated[
        list[float] | None, Opt(help="Predict the time at this concurrency (repeatable).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit Amdahl's law and the USL to a (concurrency, time) table.

    USL is the Universal Scalability Law.

    \b
    Example:
      numaspark fit scaling.csv --predict 64
    """
    # lazy: it brings numpy and scipy, which a command that does not need it never loads
    from numaspark.decide.scaling import fit_report, read_points

    found = fit_report(read_points(table), predict)
    term.warn(found["warnings"])
    if as_json:
        term.document("fit", found)
        return
    for view in views.fit_views(table.name, found):
        term.print(view, highlight=False)
