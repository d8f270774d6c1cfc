"""Measure: what any Spark event log says in sparkMeasure's terms (``analyze``), and the
memory bandwidth and latency between NUMA nodes (``probe``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import numaspark.cli.progress as progress
from numaspark.cli.app import app, term
from numaspark.cli.option_group import Opt
from numaspark.cli.options import JsonOpt, SyntheticOpt, XmlOpt, topology_of
from numaspark.decide.readings import log_summary
from numaspark.placement import Binder
from numaspark.probe import build_membench, probe_commands, save_probe
from numaspark.report import console as views
from numaspark.units import parse_size


@app.command()
def analyze(
    event_logs: Annotated[
        list[Path], typer.Argument(help="Event log files or eventlog_v2_* directories.")
    ],
    as_json: JsonOpt = False,
    tasks: Annotated[Path | None, Opt(help="Write the task table (.parquet or .csv).")] = None,
    stages: Annotated[Path | None, Opt(help="Write the stage table (.parquet or .csv).")] = None,
) -> None:
    """Summarise any Spark event log in sparkMeasure's terms.

    The log may be plain or rolling, and compressed with zstd, lz4 or snappy.

    \b
    Example:
      numaspark analyze numaspark-out/runs/*/eventlog/*
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.metrics.eventlog import parse_event_log
    from numaspark.report.export import write_log_tables

    logs = [parse_event_log(path, tasks=tasks is not None) for path in event_logs]
    summaries = [log_summary(log) for log in logs]
    if as_json:
        term.document("analyze", {"logs": summaries})
    else:
        for log, summary in zip(logs, summaries, strict=True):
            term.lines(views.log_lines(log, summary))
            term.warn(log.warnings)
    for line in write_log_tables(logs, tasks, stages):
        term.err.print(line)


@app.command()
def probe(
    size: Annotated[
        str | None,
        Opt(help="Bytes per STREAM array (default: 4x the last-level cache, >= 128MB)."),
    ] = None,
    latency_size: Annotated[str, Opt(help="Pointer-chase buffer.")] = "256MB",
    loads: Annotated[int, Opt(help="Dependent loads timed per latency probe.")] = 10_000_000,
    repeat: Annotated[int, Opt(help="STREAM repetitions (the best counts).")] = 5,
    dry_run: Annotated[
        bool, Opt(help="Print the commands, run nothing (always so with --xml/--synthetic).")
    ] = False,
    xml: XmlOpt = None,
    synthetic: SyntheticOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure memory bandwidth and latency between NUMA nodes.

    It measures every pair of a CPU node and a memory node.

    \b
    Example:
      numaspark probe --dry-run
    """
    import shlex

    topo = topology_of(xml, synthetic)
    elsewhere = dry_run or xml is not None or synthetic is not None
    # commands for another machine read as numactl lines; here, this machine's binder
    commands = probe_commands(
        topo,
        parse_size(size, "--size") if size else None,
        parse_size(latency_size, "--latency-size"),
        loads,
        repeat,
        exe="membench" if elsewhere else str(build_membench()),
        binder=None if elsewhere else Binder.here(),
    )
    if elsewhere:
        term.lines(
            [
                " ".join(f"{k}={v}" for k, v in c.env.items()) + f" {shlex.join(c.argv)}"
                for c in commands
            ]
        )
        return
    found = progress.run_probes(term, commands)
    path = save_probe(found, topo)
    if as_json:
        term.json({**found, "saved": str(path)})
        return
    term.print(views.probe_table(found))
    term.print(f"saved: {path} (topology {topo.fingerprint})")
