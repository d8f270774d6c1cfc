"""Experiment: many runs that answer a question, a spec's sweep, the built-in studies
(co-scheduling among them) and the characterization of this machine; and where they are
planned and sent (`planned_on`, `at`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import numaspark.cli.progress as progress
from numaspark.cli.app import app, study_app, term
from numaspark.cli.app_options import AppOptions, cosched_workload, with_application
from numaspark.cli.option_group import Opt
from numaspark.cli.options import (
    ClusterOptions,
    ConfOpt,
    DataOpt,
    OutOpt,
    ParamOpt,
    RepeatOpt,
    ResumeOpt,
    SizeOpt,
    StudyWorkloadArg,
    WarmupOpt,
    check_repeat,
    conf_of,
    params,
    topology_of,
    venue_of,
    with_cluster,
)
from numaspark.experiment.placing import planned_topology
from numaspark.experiment.planned_study import plan_study
from numaspark.experiment.spec import at_venue, build, cluster_table, read_spec
from numaspark.experiment.store import RESULTS_FILE
from numaspark.experiment.venue import Venue
from numaspark.placement.share import Split
from numaspark.report import console as views
from numaspark.topology import Topology
from numaspark.units import parse_duration


@app.command()
@with_cluster
def sweep(
    on: ClusterOptions,
    spec: Annotated[Path, typer.Argument(help="Experiment spec (TOML; docs/experiments.md).")],
    out: OutOpt = Path("numaspark-out"),
    resume: ResumeOpt = False,
    data: DataOpt = None,
) -> None:
    """Run every configuration of an experiment spec.

    Each run is stored as it ends; --resume skips the runs stored already. The spec's
    format is in docs/experiments.md; its [cluster] table, or --master or --hosts, sends
    its runs to a cluster.

    \b
    Example:
      numaspark sweep experiment.toml --out results
    """
    data_of_spec = read_spec(spec)
    table = cluster_table(data_of_spec, str(spec))
    if table:
        on = on.over(ClusterOptions.from_table(table, str(spec)))
    venue = on.venue()
    topo = planned_on(venue)
    experiment = at(build(data_of_spec, topo, source=str(spec)), venue, topo)
    done = progress.run_experiment(term, experiment, topo, out, resume, data)
    progress.show_study(
        term, experiment, out, done, f"{experiment.name}: wall time per configuration"
    )


def planned_on(venue: Venue) -> Topology:
    """The machine a command's experiment is planned on at ``venue`` (said, where it is not
    this one)."""
    topology, said = planned_topology(venue, term.say)
    if said:
        term.note("cluster:", said)
    return topology


def at(experiment, venue: Venue, topology: Topology):
    """``experiment`` sent to ``venue``, less what cannot run there (each part said)."""
    experiment, cannot = at_venue(experiment, venue, topology)
    for line in cannot:
        term.note("cannot run there:", line)
    return experiment


def _study_command(kind: str, doc: str):
    @with_cluster
    @with_application
    def command(
        on: ClusterOptions,
        application: AppOptions,
        workload: StudyWorkloadArg = None,
        size: SizeOpt = "tiny",
        repeat: RepeatOpt = 3,
        warmup: WarmupOpt = 1,
        out: OutOpt = Path("numaspark-out"),
        resume: ResumeOpt = False,
        data: DataOpt = None,
        conf: ConfOpt = None,
        param: ParamOpt = None,
    ) -> None:

        check_repeat(repeat, warmup)
        workload_of = application.workload(workload)
        chosen = workload_of.name
        venue = venue_of(on, workload_of)
        topo = planned_on(venue)
        study, notes = plan_study(
            kind,
            venue,
            topo,
            chosen,
            size,
            repeat=repeat,
            warmup=warmup,
            params=params(param),
            conf=conf_of(conf),
        )
        for line in study.cannot:
            term.note(f"cannot run {venue.where}:", line)
        for line in notes:
            term.note("note:", line)
        experiment = study.experiment
        done = progress.run_experiment(term, experiment, topo, out, resume, data)
        medians = progress.show_study(
            term, experiment, out, done, f"study {kind}: {chosen} {size}", study.baseline
        )
        term.lines(views.study_lines(kind, experiment.configs, medians))

    command.__doc__ = f"{doc}\n\n\b\nExample:\n  numaspark study {kind} wordcount --size tiny"
    study_app.command(kind)(command)


for _kind, _doc in (
    (
        "layouts",
        "Executors x cores per executor over the allowed CPUs.\n\nAfter Baig et al.; the best is marked.",
    ),
    (
        "binding",
        "Unbound against node-bound, on 1..N nodes.\n\nIt also compares local and remote memory, and the kernel's NUMA balancing where it can switch it.",
    ),
    (
        "scaling",
        "Speedup and efficiency of 1..N concurrent tasks.\n\nAmdahl's law and the USL are fitted to them.",
    ),
    (
        "executors",
        "1, 2, 4 and more executors with the same total cores.\n\nIt shows the GC of each configuration.",
    ),
    (
        "smt",
        "Hardware threads: ST on n cores, SMT on them, ST on 2n.\n\nIt gives the effectiveness of the second hardware thread (HT).",
    ),
    (
        "affinity",
        "Tasks unbound, node-bound, pinned per core and per thread.\n\nPinned per thread is per hardware thread (PU).",
    ),
):
    _study_command(_kind, _doc)


@study_app.command("cosched")
@with_cluster
def study_cosched(
    on: ClusterOptions,
    workloads: Annotated[
        list[str],
        typer.Argument(
            help="Two or more batch workloads: names, or your applications, each one word with its arguments, e.g. './etl.py in out'."
        ),
    ],
    size: Annotated[str, Opt(help="Input size of every workload.")] = "tiny",
    window: Annotated[str, Opt(help="Measured window (the studies: 1h).")] = "2m",
    warmup_time: Annotated[
        str | None, Opt(help="Before the window (default: a quarter of it).")
    ] = None,
    cooldown: Annotated[
        str | None, Opt(help="After the window (default: a quarter of it).")
    ] = None,
    by: Annotated[Split, Opt(help="Split the machine by nodes or by cores.")] = Split.AUTO,
    out: OutOpt = Path("numaspark-out"),
    data: DataOpt = None,
) -> None:
    """Run workloads together, bound to shares and unbound.

    Each workload runs in a loop; the study counts its completions in the window. With
    --hosts, each host is split alike and each workload gets a cluster of its own there.

    \b
    Example:
      numaspark study cosched wordcount sql-aggregation --window 2m
    """
    workloads = [cosched_workload(text) for text in workloads]
    window_s = parse_duration(window, "--window")
    warmup_s = parse_duration(warmup_time, "--warmup-time") if warmup_time else window_s / 4
    cooldown_s = parse_duration(cooldown, "--cooldown") if cooldown else window_s / 4
    hosts = cosched_hosts(on.venue())
    rows = progress.run_cosched(
        term,
        topology_of(),
        workloads,
        size,
        (warmup_s, window_s, cooldown_s),
        out,
        data,
        by.value,
        hosts,
    )
    term.print(views.cosched_table(rows, window_s, warmup_s))
    term.print(f"results: {(out / 'cosched.jsonl').resolve()}")
    failed = [f"{r['split']}: {r['workload']} failed: {r['failure']}" for r in rows if r["failure"]]
    term.warn(failed)
    if failed:
        raise typer.Exit(1)


def cosched_hosts(venue: Venue):
    """The hosts study cosched splits at ``venue`` (None: this machine), said."""
    # lazy: cosched brings pandas, which a command that does not need it never loads
    from numaspark.experiment.cosched import hosts_at

    hosts = hosts_at(venue)
    if hosts:
        term.note("cluster:", f"co-scheduled on {hosts.name}: each workload's own cluster")
    return hosts


@app.command()
@with_cluster
@with_application
def characterize(
    on: ClusterOptions,
    application: AppOptions,
    workload: Annotated[
        str | None,
        typer.Argument(
            help="Your application to characterize instead (./job.py, ./job.jar, or -- spark-submit ...); default: wordcount and sql-aggregation.",
            show_default=False,
        ),
    ] = None,
    out: OutOpt = Path("numaspark-out/characterize"),
    size: Annotated[str, Opt(help="Input size of both workloads.")] = "tiny",
    repeat: RepeatOpt = 3,
    warmup: WarmupOpt = 1,
    data: DataOpt = None,
    resume: ResumeOpt = False,
    report: Annotated[bool, Opt(help="Write OUT/report.html at the end.")] = True,
) -> None:
    """Characterize this machine in one command.

    It says the machine in a line, then runs two workloads (or your application) placed
    three ways (two on a machine of one NUMA node: local mode bound to its one node would
    be local mode unbound), and ends with an HTML report.

    \b
    Example:
      numaspark characterize --repeat 1 --warmup 0
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.experiment import characterize as characterization
    from numaspark.report.html import write_report

    check_repeat(repeat, warmup)
    chosen, venue = characterization.DEFAULT_WORKLOADS, on.venue()
    if workload is not None or application.app_args:
        workload_of = application.workload(workload)
        chosen, venue = (workload_of.name,), venue_of(on, workload_of)
    topo = planned_on(venue)
    # the machine in a line (numaspark topology draws it, the report too): the main job's
    # output is the checks, the comparison, the findings and where the report is
    term.print(f"{topo.source}: {views.machine_line(topo)}", highlight=False)
    if venue.here and characterization.one_node(topo):
        term.note("note:", characterization.ONE_NODE_NOTE)
    planned = characterization.experiment(
        topo, chosen, size, repeat, warmup, cluster=not venue.here
    )
    done = progress.run_experiment(term, at(planned, venue, topo), topo, out, resume, data)
    failed = progress.show_runs(
        term,
        done,
        "Characterization: wall time per iteration (s)",
        name=lambda r: f"{r.spec.label} {r.spec.workload}",
    )
    term.print(f"results: {(out / RESULTS_FILE).resolve()}  (numaspark results {out})")
    if report:
        term.print(f"report: {write_report(out, out / 'report.html').resolve()}", highlight=False)
    if failed:
        raise typer.Exit(1)
