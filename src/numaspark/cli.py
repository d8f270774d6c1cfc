"""The command line. Thin: parse options, call one package function, print."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from numaspark import __version__
from numaspark.errors import NumasparkError, ToolMissingError, UsageError
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    PuOrder,
    k8s_settings,
    placement_to_dict,
    plan,
    yarn_settings,
)
from numaspark.report.console import launch_view, placement_view, settings_view, topology_view
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_size

app = typer.Typer(
    name="numaspark",
    help="NUMA-aware placement, running and measurement of Spark on scale-up servers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)

XmlOption = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--xml", help="hwloc XML of another server (lstopo-no-graphics --of xml > f.xml)."
    ),
]
SyntheticOption = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--synthetic", help='hwloc synthetic description, e.g. "pack:2 numa:2 core:12 pu:2".'
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (schema in docs/schemas.md).")]


class Target(str, Enum):
    SPARK = "spark"
    YARN = "yarn"
    K8S = "k8s"


def _load_topology(xml: Path | None, synthetic: str | None):
    from numaspark.topology import load

    return load(xml=xml, synthetic=synthetic)


def _progress_bar():
    """A rich progress bar on stderr: what runs now, how many of how many, time so far."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    return Progress(*columns, console=err_console, transient=False)


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


@app.command()
def topology(
    xml: XmlOption = None, synthetic: SyntheticOption = None, as_json: JsonOption = False
) -> None:
    """Show the machine as hwloc sees it: packages, NUMA nodes, cores, PUs, allowed sets."""
    topo = _load_topology(xml, synthetic)
    if as_json:
        _print_json(topo.to_dict())
    else:
        console.print(topology_view(topo))


@app.command("plan")
def plan_command(
    executors: Annotated[Optional[int], typer.Option(help="Executors in total.")] = None,  # noqa: UP045
    executors_per_node: Annotated[
        Optional[int], typer.Option(help="Executors on each NUMA node with CPUs.")  # noqa: UP045
    ] = None,
    cores_per_executor: Annotated[
        Optional[int], typer.Option(help="Task slots per executor (default: share the CPUs).")  # noqa: UP045
    ] = None,
    memory_per_executor: Annotated[
        str, typer.Option(help="Executor heap, e.g. 8g, or 'auto' to split node memory.")
    ] = "auto",
    driver_cores: Annotated[int, typer.Option(help="Driver cores.")] = 1,
    driver_memory: Annotated[str, typer.Option(help="Driver heap.")] = "1g",
    bind: Annotated[
        Binding, typer.Option(help="Binding level of each executor JVM.")
    ] = Binding.NONE,
    mem_policy: Annotated[
        Optional[MemPolicy],  # noqa: UP045
        typer.Option(help="Memory policy (default: bind when bound, the kernel's otherwise)."),
    ] = None,
    pu_order: Annotated[
        PuOrder,
        typer.Option(help="For --bind pu: one thread per core first, or siblings together."),
    ] = PuOrder.CORES_FIRST,
    nodes: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Use only these NUMA nodes for executors, e.g. 0 or 0-1."),
    ] = None,
    mode: Annotated[
        Mode, typer.Option(help="local: one JVM runs tasks; standalone: executors.")
    ] = (Mode.STANDALONE),
    target: Annotated[Target, typer.Option(help="Also print settings for YARN or Kubernetes.")] = (
        Target.SPARK
    ),
    xml: XmlOption = None,
    synthetic: SyntheticOption = None,
    as_json: JsonOption = False,
) -> None:
    """Place executors on the machine: CPUs, nodes, heap and the numactl prefix of each JVM."""
    topo = _load_topology(xml, synthetic)
    layout = Layout(
        executors=executors,
        executors_per_node=executors_per_node,
        cores_per_executor=cores_per_executor,
        memory_per_executor=None
        if memory_per_executor == "auto"
        else parse_size(memory_per_executor, "--memory-per-executor"),
        driver_cores=driver_cores,
        driver_memory=parse_size(driver_memory, "--driver-memory"),
        mode=mode,
    )
    only = CpuSet.parse(nodes) if nodes is not None else None
    placement = plan(topo, layout, bind, mem_policy, pu_order, only_nodes=only)
    extra = {}
    if target is Target.YARN:
        extra = yarn_settings(placement, topo)
    elif target is Target.K8S:
        extra = k8s_settings(placement, topo)
    if as_json:
        data = placement_to_dict(placement)
        if extra:
            data[target.value] = extra
        _print_json(data)
        return
    console.print(placement_view(placement))
    if extra:
        console.print(settings_view(target.value.upper(), extra))


def _run_experiment(experiment, topo, out: Path, resume: bool, data: Path | None, title: str,
                    baseline: str | None = None):  # fmt: skip
    """Run an experiment with a progress bar; print skipped configurations first, then the table."""
    from rich.progress import TimeRemainingColumn

    from numaspark.experiment.store import ResultStore
    from numaspark.experiment.sweep import run_sweep
    from numaspark.report.study import study_table

    for config, reason in experiment.skipped:
        err_console.print(f"[yellow]skipped[/] {config.label}: {reason}", highlight=False)
    if not experiment.configs:
        raise UsageError("no configuration of this experiment fits this machine (see above)")
    with _interruptible(out), _progress_bar() as bar:
        bar.columns = (*bar.columns, TimeRemainingColumn())
        task = bar.add_task("starting", total=len(experiment.configs))

        def start(index, total, config):
            bar.update(task, description=f"{config.workload} {config.label}")

        def end(config, results):
            bar.advance(task)

        report = run_sweep(experiment, topo, out, resume=resume, data_root=data, on_start=start,
                           on_end=end)  # fmt: skip
        bar.update(task, completed=len(experiment.configs), description="done")
    if report.resumed:
        console.print(
            f"{len(report.resumed)} configuration(s) already stored in {out}: not run again"
        )
    for config in report.over_budget:
        err_console.print(f"[yellow]over budget, not run:[/] {config.label}", highlight=False)
    stored = ResultStore(out).load()
    table, warnings, medians = study_table(experiment, stored, title, baseline)
    console.print(table)
    _print_warnings(warnings)
    failed = [r for r in report.results if not r.ok]
    for r in failed:
        err_console.print(
            f"[red]{r.spec.get('label')} failed:[/] {r.failure_reason}", highlight=False
        )
    console.print(f"results: {(out / 'results.jsonl').resolve()}")
    return stored, medians


@app.command()
def sweep(
    spec: Annotated[Path, typer.Argument(help="Experiment spec (TOML; docs/experiments.md).")],
    out: OutOpt = Path("numaspark-out"),
    resume: Annotated[
        bool, typer.Option(help="Skip configurations already stored in --out.")
    ] = False,
    data: Annotated[Optional[Path], typer.Option(help="Where generated inputs live.")] = None,  # noqa: UP045
) -> None:
    """Run every configuration of an experiment spec, storing each run as it ends."""
    from numaspark.experiment.spec import load_spec

    topo = _load_topology(None, None)
    experiment = load_spec(spec, topo)
    _run_experiment(
        experiment, topo, out, resume, data, f"{experiment.name}: wall time per configuration"
    )


study_app = typer.Typer(
    help="Built-in studies: layouts, binding, scaling, executors, smt, affinity, cosched."
)
app.add_typer(study_app, name="study")


def _study(kind: str, workload: str, size: str, repeat: int, warmup: int, out: Path, resume: bool,
           data: Path | None, conf: list[str] | None, param: list[str] | None):  # fmt: skip
    from numaspark.experiment.studies import STUDIES

    if repeat < 1 or warmup < 0:
        raise UsageError("--repeat must be at least 1 and --warmup at least 0")
    topo = _load_topology(None, None)
    study = STUDIES[kind](topo, workload, size, repeat, warmup,
                          params=_pairs(param or [], "--param", "iterations=5"),
                          conf=_conf_pairs(conf or []))  # fmt: skip
    for line in study.cannot:
        err_console.print(f"[yellow]cannot run here:[/] {line}", highlight=False)
    stored, medians = _run_experiment(study.experiment, topo, out, resume, data,
                                      f"study {kind}: {workload} {size}", study.baseline)  # fmt: skip
    return study, stored, medians


def _study_command(kind: str, doc: str):
    def command(
        workload: Annotated[str, typer.Argument(help="Workload name (numaspark workloads).")],
        size: Annotated[str, typer.Option(help="Input size.")] = "tiny",
        repeat: Annotated[int, typer.Option(help="Measured iterations per configuration.")] = 3,
        warmup: Annotated[int, typer.Option(help="Warm-up iterations per configuration.")] = 1,
        out: OutOpt = Path("numaspark-out"),
        resume: Annotated[bool, typer.Option(help="Skip configurations already stored.")] = False,
        data: Annotated[Optional[Path], typer.Option(help="Where inputs live.")] = None,  # noqa: UP045
        conf: Annotated[list[str] | None, typer.Option("--conf", help="Spark KEY=VALUE.")] = None,  # noqa: UP045
        param: Annotated[
            list[str] | None, typer.Option("--param", help="Workload KEY=VALUE.")
        ] = None,  # noqa: UP045
    ) -> None:
        study, stored, medians = _study(kind, workload, size, repeat, warmup, out, resume, data,
                                        conf, param)  # fmt: skip
        if kind == "scaling":
            _print_scaling(study, medians)
        if kind == "smt":
            _print_smt(study, medians)

    command.__doc__ = doc
    study_app.command(kind)(command)


def _print_scaling(study, medians: dict[str, float]) -> None:
    from numaspark.experiment.scaling import efficiency_table, knee
    from numaspark.experiment.scaling import fit as fit_model

    points = [(c.layout.cores_per_executor, medians[c.label]) for c in study.experiment.configs
              if c.label in medians]  # fmt: skip
    if len(points) < 2:
        console.print("scaling: fewer than two concurrency levels measured, nothing to fit")
        return
    for row in efficiency_table(points):
        console.print(f"p={row['p']:g}: speedup {row['speedup']:.2f}, efficiency {row['efficiency']:.0%}",
                      highlight=False)  # fmt: skip
    amdahl = fit_model(points, "amdahl")
    console.print(
        f"Amdahl serial fraction {amdahl.sigma:.3f}; knee {knee(points)}", highlight=False
    )
    if len(points) >= 3:
        usl = fit_model(points, "usl")
        console.print(f"USL sigma {usl.sigma:.4f}, kappa {usl.kappa:.5f}, peak "
                      f"{usl.peak if usl.peak else 'none'}", highlight=False)  # fmt: skip


def _print_smt(study, medians: dict[str, float]) -> None:
    from numaspark.experiment.studies import ht_effectiveness

    named = {c.note: medians.get(c.label) for c in study.experiment.configs}
    st_n = next((v for k, v in named.items() if k.startswith("ST") and v), None)
    smt_n = next((v for k, v in named.items() if k.startswith("SMT") and v), None)
    st_2n = [v for k, v in named.items() if k.startswith("ST") and v][1:]
    if st_n and smt_n and st_2n:
        effectiveness = ht_effectiveness(st_n / smt_n, st_n / st_2n[0])
        console.print(f"HT effectiveness {effectiveness:.2f} (1 = as good as twice the cores)")
    else:
        console.print("HT effectiveness: not computed (needs ST n, SMT n and ST 2n measured)")


for _kind, _doc in (
    ("layouts", "Executors x cores-per-executor over the allowed CPUs (Baig et al.), best marked."),
    ("binding", "Unbound vs node-bound with 1..N nodes, and local vs remote memory."),
    ("scaling", "1..N concurrent tasks: speedup, efficiency, Amdahl and USL fits."),
    ("executors", "1, 2, 4, ... executors with the same total cores: GC per configuration."),
    ("smt", "ST on n cores, SMT on the same cores, ST on 2n cores; HT effectiveness."),
    ("affinity", "Tasks unbound, node-bound, pinned per core and per hardware thread."),
):
    _study_command(_kind, _doc)


@study_app.command("cosched")
def study_cosched(
    workloads: Annotated[list[str], typer.Argument(help="Two or more batch workloads.")],
    size: Annotated[str, typer.Option(help="Input size of every workload.")] = "tiny",
    window: Annotated[str, typer.Option(help="Measured window (the studies: 1h).")] = "2m",
    warmup_time: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Before the window (default: a quarter of it)."),
    ] = None,
    cooldown: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="After the window (default: a quarter of it)."),
    ] = None,
    by: Annotated[str, typer.Option(help="Split by nodes, cores, or auto.")] = "auto",
    out: OutOpt = Path("numaspark-out"),
    data: Annotated[Optional[Path], typer.Option(help="Where inputs live.")] = None,  # noqa: UP045
) -> None:
    """Run workloads concurrently, each in a loop, bound to its share and unbound: completions."""
    from numaspark.experiment.cosched import cosched
    from numaspark.units import parse_duration

    if by not in ("auto", "nodes", "cores"):
        raise UsageError(f"--by {by!r}: use auto, nodes or cores")
    window_s = parse_duration(window, "--window")
    warmup_s = parse_duration(warmup_time, "--warmup-time") if warmup_time else window_s / 4
    cooldown_s = parse_duration(cooldown, "--cooldown") if cooldown else window_s / 4
    topo = _load_topology(None, None)
    with _interruptible(out), _progress_bar() as bar:
        task = bar.add_task("starting", total=None)

        def on_round(number, total, label):
            bar.update(task, total=total, completed=number,
                       description=f"{label}: {warmup_s + window_s + cooldown_s:.0f} s")  # fmt: skip

        rows = cosched(topo, workloads, size, window_s, warmup_s, cooldown_s, out, data, by,
                       on_round=on_round)  # fmt: skip
        bar.update(task, completed=bar.tasks[0].total, description="done")
    table = Table(title=f"co-scheduled for {window_s:.0f} s (after {warmup_s:.0f} s warm-up)",
                  title_justify="left")  # fmt: skip
    for column in ("split", "workload", "CPUs", "completions", "median s", "switches/s",
                   "remote pages"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("split", "workload") else "right")
    for r in rows:
        remote = "-" if r["remote_page_share"] is None else f"{r['remote_page_share']:.1%}"
        median = "-" if r["median_completion_s"] is None else f"{r['median_completion_s']:.2f}"
        switches = (
            "-" if r["context_switches_per_s"] is None else f"{r['context_switches_per_s']:,.0f}"
        )
        table.add_row(r["split"], r["workload"], r["cpus"], str(r["completions"]), median,
                      switches, remote)  # fmt: skip
    console.print(table)
    console.print(f"results: {(out / 'cosched.jsonl').resolve()}")


@app.command()
def whatif(
    event_log: Annotated[
        Path, typer.Argument(help="An event log file or eventlog_v2_* directory.")
    ],
    cores: Annotated[str, typer.Option(help="Core counts to simulate, e.g. 1,2,4,8.")] = "1,2,4,8",
    as_json: JsonOption = False,
) -> None:
    """Predict the application's time on other core counts from its real task durations."""
    from numaspark.metrics.eventlog import parse_event_log
    from numaspark.metrics.whatif import measured_s, simulate

    try:
        counts = [int(c) for c in cores.split(",") if c.strip()]
    except ValueError:
        raise UsageError(f"bad --cores {cores!r}: write core counts like 1,2,4,8") from None
    if not counts or min(counts) < 1:
        raise UsageError(f"bad --cores {cores!r}: write core counts like 1,2,4,8")
    log = parse_event_log(event_log)
    if not log.complete:
        raise UsageError(f"{event_log}: the application did not finish; what-if needs its end")
    predictions = [simulate(log, c) for c in counts]
    if as_json:
        _print_json({"event_log": str(event_log), "measured_s": measured_s(log),
                     "predictions": [p.__dict__ for p in predictions]})  # fmt: skip
        return
    table = Table(title=f"{log.app_id}: measured {measured_s(log):.1f} s", title_justify="left")
    for column in ("cores", "predicted s", "utilisation", "critical path s", "driver only s"):
        table.add_column(column, justify="right")
    for p in predictions:
        table.add_row(str(p.cores), f"{p.time_s:.1f}", f"{p.utilisation:.0%}",
                      f"{p.critical_path_s:.1f}", f"{p.driver_s:.1f}")  # fmt: skip
    console.print(table)
    console.print("task durations are kept as measured: what changes with the core count "
                  "(memory bandwidth, GC) is not simulated", highlight=False)  # fmt: skip


@app.command()
def classify(
    directory: Annotated[Path, typer.Argument(help="Results of a sweep or study (--out).")],
    as_json: JsonOption = False,
) -> None:
    """Group a sweep's configurations by what explains their time (Baig et al.)."""
    from numaspark.decide.classify import classify as classify_runs
    from numaspark.experiment.store import ResultStore

    found = classify_runs(ResultStore(directory).load())
    if as_json:
        _print_json(found.to_dict())
        return
    if not found.configs:
        raise UsageError(f"{directory}: no measured ok run to classify")
    table = Table(title=f"{directory}: configurations by what explains their time",
                  title_justify="left")  # fmt: skip
    for column in ("configuration", "runs", "median s", "vs best", "group", "evidence"):
        table.add_column(column, justify="right" if column in ("runs", "median s", "vs best")
                         else "left")  # fmt: skip
    best = found.configs[0].wall_s
    for c in found.configs:
        for number, label in enumerate(c.labels):
            table.add_row(c.label if number == 0 else "", str(c.runs) if number == 0 else "",
                          f"{c.wall_s:.2f}" if number == 0 else "",
                          f"{c.wall_s / best - 1:+.0%}" if number == 0 else "", label.text,
                          _evidence_text(label.evidence))  # fmt: skip
    console.print(table)
    for name, why in found.not_assessed.items():
        from numaspark.decide.classify import LABELS

        err_console.print(f"[yellow]not assessed:[/] {LABELS[name]}: {why}", highlight=False)


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


@app.command()
def advise(
    source: Annotated[Path, typer.Argument(help="A results directory (--out) or an event log.")],
    show_all: Annotated[
        bool, typer.Option("--all", help="Also list the rules that found nothing.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Rules with severities: what to change, the numbers behind it, the command that tries it."""
    from numaspark.decide.advise import Severity, advise_event_log, advise_results
    from numaspark.experiment.store import RESULTS_FILE, ResultStore

    if not source.exists():
        raise UsageError(f"{source} does not exist: give a results directory or an event log")
    if source.is_dir() and (source / RESULTS_FILE).exists():
        advices = advise_results(ResultStore(source).load())
        if not advices:
            raise UsageError(f"{source}: no measured ok run to advise on")
    else:
        advices = [advise_event_log(source)]
    if as_json:
        _print_json({"source": str(source), "advice": [a.to_dict() for a in advices]})
        return
    colours = {Severity.NONE: "green", Severity.LOW: "cyan", Severity.MODERATE: "yellow",
               Severity.SEVERE: "red", Severity.CRITICAL: "bold red"}  # fmt: skip
    for advice in advices:
        console.print(f"[bold]{advice.subject}[/]: worst {advice.worst.word}", highlight=False)
        for f in advice.findings:
            if f.severity is Severity.NONE and not show_all:
                continue
            console.print(f"  [{colours[f.severity]}]{f.severity.word:>8}[/] {f.rule}: {f.finding}",
                          highlight=False)  # fmt: skip
            if f.recommendation:
                console.print(f"           -> {f.recommendation}", highlight=False)
            if f.command:
                console.print(f"           $ {f.command}", highlight=False, soft_wrap=True)
        quiet = [f.rule for f in advice.findings if f.severity is Severity.NONE]
        if quiet and not show_all:
            console.print(f"  nothing found by: {', '.join(quiet)}", highlight=False)
        for n in advice.not_assessed:
            console.print(f"  [dim]not assessed {n.rule}: {n.why}[/]", highlight=False)


@app.command()
def tune(
    workload: Annotated[
        Optional[str],  # noqa: UP045
        typer.Argument(help="Workload to tune by real runs (or give --replay)."),
    ] = None,
    replay: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(help="Replay a recorded CSV (one row per configuration) instead of Spark."),
    ] = None,
    minimize: Annotated[
        str, typer.Option(help="With --replay: the column to minimize.")
    ] = "wall_s",
    budget: Annotated[int, typer.Option(help="Most runs (trials).")] = 10,
    budget_time: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Start no trial after this long, e.g. 30m."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the search.")] = 0,
    noise: Annotated[
        float, typer.Option(help="Relative difference treated as noise (early stop).")
    ] = 0.05,
    early_stop: Annotated[
        bool, typer.Option(help="Stop when no configuration left can beat the best.")
    ] = True,
    size: Annotated[str, typer.Option(help="Input size.")] = "tiny",
    repeat: Annotated[int, typer.Option(help="Measured iterations per trial.")] = 2,
    warmup: Annotated[int, typer.Option(help="Warm-up iterations per trial.")] = 1,
    out: OutOpt = Path("numaspark-out"),
    data: Annotated[Optional[Path], typer.Option(help="Where inputs live.")] = None,  # noqa: UP045
    conf: Annotated[list[str] | None, typer.Option("--conf", help="Spark KEY=VALUE.")] = None,  # noqa: UP045
    param: Annotated[list[str] | None, typer.Option("--param", help="Workload KEY=VALUE.")] = None,  # noqa: UP045
    as_json: JsonOption = False,
) -> None:
    """Find a good layout and binding in few runs (TPE with the studies' priors, early stop)."""
    from numaspark.decide.tune import read_table, replay_objective
    from numaspark.decide.tune import tune as search
    from numaspark.units import parse_duration

    if (workload is None) == (replay is None):
        raise UsageError("give a WORKLOAD to tune by real runs, or --replay FILE.csv (not both)")
    if not 0 <= noise < 1:
        raise UsageError(f"--noise {noise}: give a fraction like 0.05")
    time_budget = parse_duration(budget_time, "--budget-time") if budget_time else None
    if replay is not None:
        space, lookup = read_table(replay, minimize)
        objective = replay_objective(lookup, space)
        found = search(space, objective, budget, seed, noise, early_stop=early_stop,
                       time_budget_s=time_budget)  # fmt: skip
    else:
        from numaspark.decide.live import live_objective, live_space

        if repeat < 1 or warmup < 0:
            raise UsageError("--repeat must be at least 1 and --warmup at least 0")
        topo = _load_topology(None, None)
        space, configs = live_space(topo, workload, size,
                                    _pairs(param or [], "--param", "iterations=5"),
                                    _conf_pairs(conf or []))  # fmt: skip
        objective = live_objective(configs, topo, out, repeat, warmup, data)
        with _interruptible(out), _progress_bar() as bar:
            task = bar.add_task(f"tuning {workload} ({len(space.candidates)} candidates)",
                                total=budget)  # fmt: skip

            def on_trial(trial):
                bar.advance(task)
                bar.update(task, description=f"trial {trial.number}: {trial.value or 'failed'}")

            found = search(space, objective, budget, seed, noise, early_stop=early_stop,
                           time_budget_s=time_budget, on_trial=on_trial)  # fmt: skip
    if as_json:
        _print_json(found.to_dict())
        return
    table = Table(title=f"{len(found.trials)} trial(s) of {len(space.candidates)} candidates",
                  title_justify="left")  # fmt: skip
    table.add_column("#", justify="right")
    for name in space.names:
        table.add_column(name)
    table.add_column(minimize if replay else "median s", justify="right")
    table.add_column("chosen by")
    best = found.best
    for trial in found.trials:
        value = "failed" if trial.value is None else f"{trial.value:.4g}"
        mark = " best" if best is not None and trial.number == best.number else ""
        table.add_row(str(trial.number), *(str(trial.params[n]) for n in space.names),
                      value + mark, trial.source)  # fmt: skip
    console.print(table)
    console.print(f"stopped: {found.stopped}", highlight=False)
    if workload is not None:
        console.print(f"results: {(out / 'results.jsonl').resolve()}")


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="A results directory (--out of any command).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write.")] = Path(
        "numaspark-report.html"
    ),
) -> None:
    """Write one self-contained HTML report (plots, topology, advice) of a results directory."""
    from numaspark.report.html import write_report

    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory: give the --out of a run or study")
    target = write_report(directory, output)
    console.print(f"report: {target.resolve()}", highlight=False)


@app.command()
def fit(
    table: Annotated[Path, typer.Argument(help="CSV of concurrency,elapsed seconds (header ok).")],
    predict: Annotated[
        Optional[list[float]],  # noqa: UP045
        typer.Option(help="Predict the time at this concurrency (repeatable)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Fit Amdahl's law and the Universal Scalability Law to a (concurrency, time) table."""
    from numaspark.experiment.scaling import efficiency_table, read_points
    from numaspark.experiment.scaling import fit as fit_model
    from numaspark.experiment.scaling import knee as find_knee

    if not table.exists():
        raise UsageError(f"{table} does not exist: give a CSV of concurrency,seconds rows")
    points = read_points(table)
    models = {name: fit_model(points, name) for name in ("usl", "amdahl")}
    predictions = [
        {"p": p, **{f"{name}_time_s": m.time(p) for name, m in models.items()}}
        for p in (predict or [])
    ]
    if any(p["p"] < 1 for p in predictions):
        raise UsageError("--predict needs a concurrency of at least 1")
    found = {
        "points": efficiency_table(points),
        "models": {name: m.to_dict() for name, m in models.items()},
        "knee": find_knee(points),
        "predictions": predictions,
    }
    if as_json:
        _print_json(found)
        return
    rows = Table(title=f"{table.name}: measured", title_justify="left")
    for column in ("concurrency", "time s", "speedup", "efficiency"):
        rows.add_column(column, justify="right")
    for r in found["points"]:
        rows.add_row(f"{r['p']:g}", f"{r['time_s']:.2f}", f"{r['speedup']:.2f}",
                     f"{r['efficiency']:.0%}")  # fmt: skip
    console.print(rows)
    usl, amdahl = models["usl"], models["amdahl"]
    peak = f"peak at {usl.peak:.1f} concurrent tasks" if usl.peak else "no peak (kappa = 0)"
    console.print(
        f"USL: sigma (contention) {usl.sigma:.4f}, kappa (coherency) {usl.kappa:.5f}, "
        f"T(1) {usl.t1:.2f} s, {peak}, fit RMSE {usl.rmse:.2f} s",
        highlight=False,
    )
    console.print(
        f"Amdahl: serial fraction {amdahl.sigma:.4f}, T(1) {amdahl.t1:.2f} s, "
        f"fit RMSE {amdahl.rmse:.2f} s",
        highlight=False,
    )
    knee_text = f"{found['knee']:g}" if found["knee"] is not None else "none"
    console.print(f"knee (last concurrency at >= 80% efficiency): {knee_text}", highlight=False)
    for p in predictions:
        console.print(f"predicted at {p['p']:g}: USL {p['usl_time_s']:.2f} s, "
                      f"Amdahl {p['amdahl_time_s']:.2f} s", highlight=False)  # fmt: skip


@app.command()
def probe(
    size: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Bytes per STREAM array (default: 4x the last-level cache, >= 128MB)."),
    ] = None,
    latency_size: Annotated[str, typer.Option(help="Pointer-chase buffer.")] = "256MB",
    loads: Annotated[
        int, typer.Option(help="Dependent loads timed per latency probe.")
    ] = 10_000_000,
    repeat: Annotated[int, typer.Option(help="STREAM repetitions (the best counts).")] = 5,
    dry_run: Annotated[
        bool,
        typer.Option(help="Print the commands, run nothing (always so with --xml/--synthetic)."),
    ] = False,
    xml: XmlOption = None,
    synthetic: SyntheticOption = None,
    as_json: JsonOption = False,
) -> None:
    """Measure memory bandwidth and latency for every (CPU node, memory node) pair."""
    import shlex

    from numaspark.probe import (
        KERNELS,
        build_membench,
        default_elements,
        plan_probe,
        run_probe,
        save_probe,
    )
    from numaspark.units import parse_size

    topo = _load_topology(xml, synthetic)
    elements = parse_size(size, "--size") // 8 if size else default_elements(topo)
    latency_bytes = parse_size(latency_size, "--latency-size")
    if elements < 1024 or latency_bytes < 4096 or loads < 1 or repeat < 1:
        raise UsageError("--size, --latency-size, --loads and --repeat are too small to measure")
    elsewhere = xml is not None or synthetic is not None
    exe = "membench" if (dry_run or elsewhere) else str(build_membench())
    commands = plan_probe(topo, elements, loads, latency_bytes, repeat, exe=exe)
    if not commands:
        raise UsageError("no NUMA node has CPUs this process may use: nothing to probe")
    if dry_run or elsewhere:
        for c in commands:
            env = " ".join(f"{k}={v}" for k, v in c.env.items())
            console.print(f"{env} {shlex.join(c.argv)}", highlight=False, soft_wrap=True)
        return
    if shutil.which("numactl") is None:
        raise ToolMissingError("numaspark probe binds with numactl: apt-get install numactl")
    with _progress_bar() as bar:
        task = bar.add_task("probing", total=len(commands))

        def step(i, total, command):
            bar.update(task, completed=i - 1,
                       description=f"{command.kind} CPUs node {command.cpu_node} -> memory "
                                   f"node {command.mem_node}")  # fmt: skip

        found = run_probe(commands, on_progress=step)
        bar.update(task, completed=len(commands))
    path = save_probe(found, topo)
    if as_json:
        _print_json({**found, "saved": str(path)})
        return
    table = Table(title="Memory bandwidth (MB/s) and latency (ns per load)", title_justify="left")
    for column in ("measure", "CPUs on"):
        table.add_column(column)
    for node in found["mem_nodes"]:
        table.add_column(f"memory node {node}", justify="right")
    blocks = [*((f"{k} MB/s", found["bandwidth_mbps"][k]) for k in KERNELS),
              ("latency ns", found["latency_ns"])]  # fmt: skip
    for name, rows in blocks:
        for node, row in zip(found["cpu_nodes"], rows, strict=True):
            table.add_row(name, f"node {node}",
                          *("-" if v is None else f"{v:,.1f}" if v < 100 else f"{v:,.0f}"
                            for v in row))  # fmt: skip
    console.print(table)
    console.print(f"saved: {path} (topology {topo.fingerprint})")


@app.command()
def doctor(as_json: JsonOption = False) -> None:
    """Check this machine for NUMA experiments: tools, perf events, kernel settings, limits."""
    from numaspark.doctor import run_checks

    results = run_checks()
    if as_json:
        _print_json(
            {
                name: [{"level": m.level, "text": m.text} for m in messages]
                for name, messages in results
            }
        )
        return
    table = Table(title=f"numaspark {__version__} doctor", title_justify="left", show_lines=True)
    table.add_column("check", style="bold", no_wrap=True)
    table.add_column("finding")
    style = {"state": "", "advice": "cyan", "warning": "yellow", "error": "bold red"}
    for name, messages in results:
        lines = "\n".join(
            f"[{style[m.level]}]{m.level + ': ' if m.level != 'state' else ''}{m.text}[/]"
            if style[m.level]
            else m.text
            for m in messages
        )
        table.add_row(name, lines)
    console.print(table)


@app.command()
def version() -> None:
    """Print numaspark's version."""
    console.print(__version__)


# --- run, cluster, analyze, results -------------------------------------------------

ExecutorsOpt = Annotated[Optional[int], typer.Option("--executors", help="Executors in total.")]  # noqa: UP045
PerNodeOpt = Annotated[
    int | None,
    typer.Option("--executors-per-node", help="Executors on each NUMA node with CPUs."),
]  # noqa: UP045
CoresOpt = Annotated[
    int | None, typer.Option("--cores-per-executor", help="Task slots per executor.")
]  # noqa: UP045
MemoryOpt = Annotated[
    str, typer.Option("--memory-per-executor", help="Executor heap, e.g. 2g, or 'auto'.")
]
BindOpt = Annotated[
    Binding, typer.Option("--bind", help="Binding level of each JVM that runs tasks.")
]
PolicyOpt = Annotated[
    MemPolicy | None,
    typer.Option("--mem-policy", help="Memory policy (default: bind when bound)."),
]  # noqa: UP045
NodesOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--nodes", help="Use only these NUMA nodes for executors, e.g. 0 or 0-1."),
]
PuOrderOpt = Annotated[
    PuOrder,
    typer.Option("--pu-order", help="For --bind pu: one thread per core first, or siblings."),
]
OutOpt = Annotated[
    Path, typer.Option("--out", help="Directory for results.jsonl and run artefacts.")
]


def _layout(executors, per_node, cores, memory, mode) -> Layout:
    return Layout(
        executors=executors,
        executors_per_node=per_node,
        cores_per_executor=cores,
        memory_per_executor=None
        if memory == "auto"
        else parse_size(memory, "--memory-per-executor"),
        mode=mode,
    )


@contextlib.contextmanager
def _interruptible(out: Path | None):
    """Ctrl-C or SIGTERM: every started JVM is already stopped; say what was kept, exit 130.
    ``out`` is where runs are stored; None for commands that store none (launch)."""
    try:
        yield
    except KeyboardInterrupt:
        if out is None:
            err_console.print("Interrupted: every launched process stopped")
            raise typer.Exit(130) from None
        path = out / "results.jsonl"
        kept = len(path.read_text().splitlines()) if path.exists() else 0
        err_console.print(
            f"Interrupted: every Spark JVM stopped; {kept} finished run(s) kept in {path}"
        )
        raise typer.Exit(130) from None


def _print_warnings(warnings: list[str]) -> None:
    """Each warning once; many spread warnings become one line that says what to do."""
    spread = [w for w in warnings if "spread" in w]
    others = [w for w in dict.fromkeys(warnings) if w not in spread]
    if len(spread) > 2:
        others.insert(
            0,
            f"{len(spread)} configurations vary by more than 10% between iterations: run more "
            "repetitions (--repeat), larger inputs (--size), or quiet the machine (numaspark doctor)",
        )
    else:
        others[:0] = spread
    for warning in others:
        err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)


def _pairs(pairs: list[str], option: str, example: str) -> dict[str, str]:
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad {option} {pair!r}: write KEY=VALUE, e.g. {option} {example}")
        values[key.strip()] = value
    return values


def _conf_pairs(pairs: list[str]) -> dict[str, str]:
    return _pairs(pairs, "--conf", "spark.executor.extraJavaOptions=-XX:+UseNUMA")


def _progress_printer():
    def say(message: str) -> None:
        err_console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {message}", highlight=False)

    return say


@app.command()
def run(
    workload: Annotated[str, typer.Argument(help="Workload name (numaspark workloads).")],
    size: Annotated[
        str, typer.Option(help="tiny, small, large, huge, bytes (64MB) or rows (1000rows).")
    ] = "tiny",
    mode: Annotated[
        Mode, typer.Option(help="local: one bound JVM; standalone: bound workers.")
    ] = Mode.LOCAL,
    executors: ExecutorsOpt = None,
    executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None,
    memory_per_executor: MemoryOpt = "auto",
    bind: BindOpt = Binding.NONE,
    mem_policy: PolicyOpt = None,
    nodes: NodesOpt = None,
    pu_order: PuOrderOpt = PuOrder.CORES_FIRST,
    repeat: Annotated[int, typer.Option(help="Measured iterations, all in one application.")] = 1,
    warmup: Annotated[
        int, typer.Option(help="Iterations before the measured ones (stored, not counted).")
    ] = 0,
    out: OutOpt = Path("numaspark-out"),
    cluster: Annotated[
        Optional[Path], typer.Option(help="Reuse a cluster started by 'numaspark cluster up DIR'.")  # noqa: UP045
    ] = None,
    data: Annotated[
        Path | None, typer.Option(help="Where generated inputs live (default ./numaspark-data).")
    ] = None,  # noqa: UP045
    timeout: Annotated[
        float, typer.Option(help="Seconds before a run is stopped as failed.")
    ] = 1800.0,
    conf: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--conf", help="Extra Spark setting KEY=VALUE (repeatable)."),
    ] = None,
    param: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--param", help="Workload parameter KEY=VALUE (repeatable; see workloads)."),
    ] = None,
    rate: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(help="Streaming: events a second the source sends (default 1000)."),
    ] = None,
    duration: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Streaming: measured time per iteration, e.g. 60s (default 60s)."),
    ] = None,
    stream_warmup: Annotated[
        str, typer.Option(help="Streaming: time sent before the measured window.")
    ] = "10s",
    collect: Annotated[
        bool, typer.Option(help="Sample OS, NUMA and perf counters during the run.")
    ] = True,
    interval: Annotated[str, typer.Option(help="Collectors' sampling interval.")] = "1s",
    gc_log: Annotated[
        bool, typer.Option(help="Write JVM GC logs (-Xlog:gc*) per JVM into the run directory.")
    ] = False,
    profile: Annotated[
        bool, typer.Option(help="On-CPU flame graph (async-profiler) per task-running JVM.")
    ] = False,
    xml: XmlOption = None,
    synthetic: SyntheticOption = None,
) -> None:
    """Run a workload, placed as planned, with repetitions; every run is stored as it ends."""
    from numaspark.experiment.runner import RunRequest, run_workload
    from numaspark.report.metrics import comparison_table, sparkmeasure_lines, stream_table
    from numaspark.units import parse_duration
    from numaspark.workloads import get_workload

    if xml is not None or synthetic is not None:
        raise UsageError(
            "run starts real JVMs on this machine: --xml and --synthetic are for 'plan' only"
        )
    if cluster is not None:
        mode = Mode.STANDALONE
    streaming = get_workload(workload).streaming
    if not streaming and (rate is not None or duration is not None):
        raise UsageError(f"--rate and --duration are for streaming workloads; {workload} is batch")
    request = RunRequest(
        workload=workload,
        size=size,
        layout=_layout(
            executors, executors_per_node, cores_per_executor, memory_per_executor, mode
        ),
        binding=bind,
        mem_policy=mem_policy,
        pu_order=pu_order,
        only_nodes=CpuSet.parse(nodes) if nodes is not None else None,
        repeat=repeat,
        warmup=warmup,
        out=out,
        cluster_dir=cluster,
        data_root=data,
        timeout_s=timeout,
        spark_conf=_conf_pairs(conf or []),
        params=_pairs(param or [], "--param", "iterations=5"),
        rate=1000.0 if rate is None else rate,
        duration_s=parse_duration(duration or "60s", "--duration"),
        stream_warmup_s=parse_duration(stream_warmup, "--stream-warmup"),
        collect=collect,
        interval_s=parse_duration(interval, "--interval"),
        gc_log=gc_log,
        profile=profile,
    )
    with _interruptible(out):
        results = run_workload(request, _load_topology(None, None), progress=_progress_printer())
    measured = [r for r in results if not r.spec.get("warmup")]
    last_ok = next((r for r in reversed(measured) if r.ok), None)
    if last_ok is not None:
        console.print("\n".join(sparkmeasure_lines(last_ok.metrics)), highlight=False)
        if last_ok.readings:
            console.print("\nReadings (last measured run):", highlight=False)
            for line in last_ok.readings:
                console.print(f"  {line}", highlight=False)
        for entry in last_ok.effective_placement:
            console.print(
                f"effective placement of {entry['jvm']} (pid {entry['pid']}): CPUs {entry['cpus']}, "
                f"memory nodes {entry['mems']}, policy {entry['policy']}",
                highlight=False,
            )
    table, warnings = comparison_table(results, title=f"{workload}: wall time of the measured runs")
    if streaming:
        table = stream_table(results, title=f"{workload}: the measured window of each run")
    console.print(table)
    _print_warnings(warnings + sorted({w for r in results for w in r.warnings}))
    failed = [r for r in results if not r.ok]
    for r in failed:
        err_console.print(f"[red]run {r.run_id} failed:[/] {r.failure_reason}", highlight=False)
    graphs = sorted({g for r in results for g in r.artifacts.get("flame_graphs", [])})
    for graph in graphs:
        console.print(f"flame graph: {graph}", highlight=False)
    console.print(f"results: {(out / 'results.jsonl').resolve()}")
    if failed:
        raise typer.Exit(1)


@app.command(context_settings={"ignore_unknown_options": True})
def launch(
    command: Annotated[
        list[str], typer.Argument(help="The program and its arguments, after '--'.")
    ],
    mode: Annotated[
        Mode, typer.Option(help="local: one process; standalone: one per executor.")
    ] = Mode.STANDALONE,
    executors: ExecutorsOpt = None,
    executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None,
    memory_per_executor: MemoryOpt = "auto",
    bind: BindOpt = Binding.NONE,
    mem_policy: PolicyOpt = None,
    mem_nodes: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Bind memory to these nodes instead of the CPUs' own (remote memory)."),
    ] = None,
    nodes: NodesOpt = None,
    pu_order: PuOrderOpt = PuOrder.CORES_FIRST,
    duration: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Stop the processes after this long, e.g. 10s (default: until they exit)."
        ),
    ] = None,
    timeout: Annotated[str, typer.Option(help="Stop them as failed after this long.")] = "10m",
    interval: Annotated[str, typer.Option(help="How often placement and pages are read.")] = "0.5s",
    out: Annotated[Path, typer.Option(help="Directory for launch.json and the logs.")] = Path(
        "numaspark-out/launch"
    ),
    as_json: JsonOption = False,
) -> None:
    """Start any program once per planned JVM, bound as planned; record where each really ran.

    Placeholders {index} {heap} {cores} {cpus} {nodes} {mem_nodes} in the command are filled in
    per process, e.g.: numaspark launch --executors-per-node 1 --bind node -- java -Xmx{heap} -jar app.jar
    """
    from numaspark.launch import launch as launch_processes
    from numaspark.placement import memory_on
    from numaspark.units import parse_duration

    topo = _load_topology(None, None)
    placement = plan(
        topo,
        _layout(executors, executors_per_node, cores_per_executor, memory_per_executor, mode),
        bind,
        mem_policy,
        pu_order,
        only_nodes=CpuSet.parse(nodes) if nodes is not None else None,
    )
    if mem_nodes is not None:
        chosen = CpuSet.parse(mem_nodes)
        if not chosen or not chosen.issubset(topo.allowed_nodes):
            raise UsageError(
                f"--mem-nodes {mem_nodes}: this machine's allowed NUMA nodes are "
                f"{topo.allowed_nodes} (numaspark topology)"
            )
        placement = memory_on(placement, chosen)
    say = (lambda message: None) if as_json else _progress_printer()
    with _interruptible(None):
        record = launch_processes(
            placement,
            topo,
            command,
            out,
            duration_s=parse_duration(duration, "--duration") if duration else None,
            timeout_s=parse_duration(timeout, "--timeout"),
            interval_s=parse_duration(interval, "--interval"),
            on_progress=say,
        )
    if as_json:
        _print_json(record)
    else:
        console.print(launch_view(record))
        console.print(f"record: {(out / 'launch.json').resolve()}", highlight=False)
    failed = [p for p in record["processes"] if not p["ok"]]
    for entry in failed:
        err_console.print(
            f"[red]{entry['name']} {entry['status']}:[/] {entry.get('error', '')} (log {entry['log']})",
            highlight=False,
        )
    if failed:
        raise typer.Exit(1)


cluster_app = typer.Typer(
    help="A standalone cluster kept up across runs (executors take ~15 s to start)."
)
app.add_typer(cluster_app, name="cluster")


@cluster_app.command("up")
def cluster_up(
    directory: Annotated[
        Path, typer.Argument(help="The cluster's directory (state, logs, work dirs).")
    ],
    executors: ExecutorsOpt = None,
    executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None,
    memory_per_executor: MemoryOpt = "auto",
    bind: BindOpt = Binding.NONE,
    mem_policy: PolicyOpt = None,
    nodes: NodesOpt = None,
    pu_order: PuOrderOpt = PuOrder.CORES_FIRST,
    host: Annotated[
        str, typer.Option(help="Address the master and workers listen on.")
    ] = "127.0.0.1",
) -> None:
    """Start a master and one bound worker per planned executor, and leave them running."""
    from numaspark.spark.cluster import StandaloneCluster
    from numaspark.spark.processes import ProcessTracker

    layout = _layout(
        executors, executors_per_node, cores_per_executor, memory_per_executor, Mode.STANDALONE
    )
    only = CpuSet.parse(nodes) if nodes is not None else None
    placement = plan(
        _load_topology(None, None), layout, bind, mem_policy, pu_order, only_nodes=only
    )
    tracker = ProcessTracker()
    try:
        cluster = StandaloneCluster.start(
            placement, directory, tracker, host=host, on_progress=_progress_printer()
        )
    except BaseException:
        tracker.stop_all()  # a half-started cluster is not left behind
        raise
    console.print(
        f"cluster up: {cluster.master_url}, {len(cluster.workers)} worker(s); state in {directory / 'cluster.json'}"
    )
    console.print(
        f"use it: numaspark run WORKLOAD --cluster {directory} ...; stop it: numaspark cluster down {directory}"
    )


@cluster_app.command("status")
def cluster_status(
    directory: Annotated[Path, typer.Argument()], as_json: JsonOption = False
) -> None:
    """Show the master's view of a running cluster and where each worker really runs."""
    from numaspark.collect.numa import pages_per_node
    from numaspark.spark.cluster import StandaloneCluster
    from numaspark.spark.effective import read_effective

    cluster = StandaloneCluster.attach(directory)
    state = cluster.master_state() or {}
    alive = {w.get("port"): w for w in state.get("workers", [])}
    workers = []
    for worker in cluster.workers:
        argv = worker["argv"]
        effective = read_effective(worker["pid"])
        try:
            pages = pages_per_node(Path(f"/proc/{worker['pid']}/numa_maps").read_text())
        except OSError:
            pages = {}
        workers.append({
            "index": worker["index"], "pid": worker["pid"], "cores": worker["cores"],
            "memory_mb": worker["memory_mb"],
            "state": alive.get(worker["port"], {}).get("state", "missing"),
            "prefix": argv[: next(i for i, a in enumerate(argv) if a.endswith("spark-class"))],
            "effective": effective.to_dict() if effective else None,
            "bytes_per_node": {str(n): b for n, b in sorted(pages.items())},
        })  # fmt: skip
    if as_json:
        _print_json({"master_url": cluster.master_url, "status": state.get("status"),
                     "workers": workers})  # fmt: skip
        return
    table = Table(title=f"{cluster.master_url}: {state.get('status', '?')}", title_justify="left")
    for column in ("worker", "state", "cores", "memory MB", "pid", "launch prefix",
                   "effective CPUs / policy", "pages per node"):  # fmt: skip
        table.add_column(column)
    for w in workers:
        seen = w["effective"]
        table.add_row(
            str(w["index"]), w["state"], str(w["cores"]), str(w["memory_mb"]), str(w["pid"]),
            " ".join(w["prefix"]) or "(unbound)",
            f"{seen['cpus']} / {seen['policy']}" if seen else "(gone)",
            ", ".join(f"N{n} {b >> 20} MiB" for n, b in w["bytes_per_node"].items()) or "-",
        )  # fmt: skip
    console.print(table)


@cluster_app.command("down")
def cluster_down(directory: Annotated[Path, typer.Argument()]) -> None:
    """Stop every process of the cluster (its executors too)."""
    from numaspark.spark.cluster import stop_cluster_dir

    stopped = stop_cluster_dir(directory)
    console.print(f"stopped {len(stopped)} process(es) of the cluster in {directory}")


@app.command()
def analyze(
    event_logs: Annotated[
        list[Path], typer.Argument(help="Event log files or eventlog_v2_* directories.")
    ],
    as_json: JsonOption = False,
    tasks: Annotated[
        Path | None, typer.Option(help="Write the task table (.parquet or .csv).")
    ] = None,  # noqa: UP045
    stages: Annotated[
        Path | None, typer.Option(help="Write the stage table (.parquet or .csv).")
    ] = None,  # noqa: UP045
) -> None:
    """Summarise any Spark event log (plain, rolling, zstd/lz4/snappy) in sparkMeasure's terms."""
    from types import SimpleNamespace

    import pandas as pd

    from numaspark.metrics.aggregate import aggregate
    from numaspark.metrics.eventlog import parse_event_log
    from numaspark.metrics.gc import gc_by_executor
    from numaspark.report.export import write_table
    from numaspark.report.metrics import sparkmeasure_lines
    from numaspark.report.readings import readings

    logs = [parse_event_log(path) for path in event_logs]

    def reading_lines(log) -> list[str]:
        # an event log alone has no OS, NUMA or counter figures: those come with numaspark run
        view = SimpleNamespace(metrics=aggregate(log), measurements={"gc": gc_by_executor(log)})
        return readings(view)

    if as_json:
        _print_json(
            [
                {"event_log": str(log.path), "app_id": log.app_id, "app_name": log.app_name,
                 "spark_version": log.spark_version, "complete": log.complete,
                 "warnings": log.warnings, "aggregates": aggregate(log),
                 "gc_by_executor": gc_by_executor(log), "readings": reading_lines(log)}
                for log in logs
            ]
        )  # fmt: skip
    else:
        for log in logs:
            console.print(
                f"[bold]{log.app_id}[/] {log.app_name or ''} (Spark {log.spark_version or '?'}) {log.path}"
            )
            console.print("\n".join(sparkmeasure_lines(aggregate(log))), highlight=False)
            console.print("\nReadings:", highlight=False)
            for line in reading_lines(log):
                console.print(f"  {line}", highlight=False)
            console.print(
                "  (CPU, context switches, NUMA pages and counters are recorded by numaspark run; "
                "an event log alone does not have them)",
                highlight=False,
            )
            for warning in log.warnings:
                err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for target, attribute in ((tasks, "tasks"), (stages, "stages")):
        if target is not None:
            frame = pd.concat([getattr(log, attribute).assign(appId=log.app_id) for log in logs])
            write_table(frame, target)
            err_console.print(f"wrote {len(frame)} {attribute} to {target}")


@app.command()
def results(
    directory: Annotated[Path, typer.Argument(help="A --out directory of run or characterize.")],
    csv: Annotated[Optional[Path], typer.Option(help="Export one row per run to CSV.")] = None,  # noqa: UP045
    parquet: Annotated[Path | None, typer.Option(help="Export one row per run to Parquet.")] = None,  # noqa: UP045
    config_table: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--table",
            help="Export one row per configuration (what varies, median wall_s): "
            "the table 'tune --replay' reads.",
        ),
    ] = None,
) -> None:
    """List stored runs, compare configurations, export them."""
    from numaspark.experiment.store import ResultStore
    from numaspark.report.export import config_frame, results_frame, write_table
    from numaspark.report.metrics import comparison_table, runs_table, stream_table

    stored = ResultStore(directory).load()
    console.print(runs_table(stored))
    table, warnings = comparison_table([r for r in stored if not r.streaming])
    console.print(table)
    if any(r.streaming for r in stored):
        console.print(stream_table(stored, title="Streaming runs: their measured windows"))
    _print_warnings(warnings)
    for target in (csv, parquet):
        if target is not None:
            write_table(results_frame(stored), target)
            console.print(f"wrote {len(stored)} run(s) to {target}")
    if config_table is not None:
        frame = config_frame(stored)
        write_table(frame, config_table)
        console.print(f"wrote {len(frame)} configuration(s) to {config_table}")


@app.command()
def characterize(
    out: OutOpt = Path("numaspark-out/characterize"),
    size: Annotated[str, typer.Option(help="Input size of both workloads.")] = "tiny",
    repeat: Annotated[int, typer.Option(help="Measured iterations per configuration.")] = 3,
    warmup: Annotated[int, typer.Option(help="Warm-up iterations per configuration.")] = 1,
    data: Annotated[Optional[Path], typer.Option(help="Where generated inputs live.")] = None,  # noqa: UP045
    report: Annotated[bool, typer.Option(help="Write OUT/report.html at the end.")] = True,
) -> None:
    """Quick characterization of this machine: topology, then two workloads placed three ways,
    ending with an HTML report."""
    from numaspark.experiment.characterize import (
        DEFAULT_WORKLOADS,
        total_runs,
    )
    from numaspark.experiment.characterize import (
        characterize as run_all,
    )
    from numaspark.report.metrics import comparison_table

    topo = _load_topology(None, None)
    console.print(topology_view(topo))
    total = total_runs(topo, DEFAULT_WORKLOADS, repeat, warmup)
    with _interruptible(out), _progress_bar() as bar:
        task = bar.add_task("starting", total=total)
        results = run_all(
            topo,
            out,
            size=size,
            repeat=repeat,
            warmup=warmup,
            data_root=data,
            progress=lambda message: bar.update(task, description=message),
            on_result=lambda result: bar.advance(task),
        )
        bar.update(task, description="done")
    table, warnings = comparison_table(
        results, title="Characterization: wall time per iteration (s)"
    )
    console.print(table)
    _print_warnings(warnings)
    failed = [r for r in results if not r.ok]
    for r in failed:
        err_console.print(
            f"[red]{r.spec.get('label')} {r.spec['workload']} failed:[/] {r.failure_reason}"
        )
    console.print(f"results: {(out / 'results.jsonl').resolve()}  (numaspark results {out})")
    if report:
        from numaspark.report.html import write_report

        target = write_report(out, out / "report.html")
        console.print(f"report: {target.resolve()}", highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command()
def workloads() -> None:
    """List the workloads numaspark can run, their parameters and size profiles."""
    from numaspark.workloads import all_workloads

    table = Table(title="Workloads", title_justify="left", show_lines=True)
    for column in ("name", "category", "API", "parameters", "sizes (rows)", "description"):
        table.add_column(column)
    for w in all_workloads():
        sizes = "\n".join(f"{k} {v:,}" for k, v in w.profiles.items())
        if w.streaming:
            sizes = f"live {w.stream}\n--rate events/s"
        params = "\n".join(f"{k}={v}" for k, v in w.params.items()) or "-"
        table.add_row(w.name, w.category, w.api, params, sizes, w.description)
    console.print(table)


@app.command()
def datagen(
    workload: Annotated[str, typer.Argument(help="Workload name (numaspark workloads).")],
    size: Annotated[
        str, typer.Option(help="tiny, small, large, huge, bytes (64MB) or rows.")
    ] = "tiny",
    data: Annotated[Optional[Path], typer.Option(help="Where generated inputs live.")] = None,  # noqa: UP045
    seed: Annotated[int, typer.Option(help="Random seed of the generator.")] = 42,
) -> None:
    """Generate a workload's input ahead of time (reused by later runs that ask for it)."""
    from numaspark.workloads import get_workload
    from numaspark.workloads.datagen import prepare_input

    chosen = get_workload(workload)
    if chosen.streaming:
        raise UsageError(
            f"{workload} reads numaspark's live event source, nothing to generate: "
            f"run it with numaspark run {workload} --rate 1000 --duration 60s"
        )
    path, manifest = prepare_input(chosen, chosen.size(size), seed, data)
    console.print(
        f"{chosen.name} {manifest['size']}: {manifest['rows']:,} rows, {manifest['bytes']:,} bytes in "
        f"{path} (generated in {manifest['generation_s']} s, sha256 {manifest['sha256'][:12]})"
    )


def main() -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, no traceback."""
    try:
        app()  # standalone: click reports its own usage errors (exit 2) and exits
    except NumasparkError as exc:
        err_console.print(f"[bold red]Error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("Interrupted.")
        sys.exit(130)


if __name__ == "__main__":
    main()
