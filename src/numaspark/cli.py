"""The command line. Thin: parse options, call one package function, print what it gives.

Rendering lives in report/console.py; what is computed lives in the package of its
pipeline step. Options that several commands share are declared once, below.
"""

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

from numaspark import __version__
from numaspark.errors import NumasparkError, ToolMissingError, UsageError
from numaspark.experiment.store import RESULTS_FILE
from numaspark.placement import Binding, Layout, MemPolicy, Mode, PuOrder
from numaspark.report import console as views
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_duration, parse_pairs, parse_size

app = typer.Typer(
    name="numaspark",
    help="NUMA-aware placement, running and measurement of Spark on scale-up servers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)

# --- options shared by several commands ------------------------------------------------
# fmt: off
Opt = typer.Option
XmlOpt = Annotated[Path | None, Opt("--xml", help="hwloc XML of another server (lstopo-no-graphics --of xml > f.xml).")]
SyntheticOpt = Annotated[str | None, Opt("--synthetic", help='hwloc synthetic description, e.g. "pack:2 numa:2 core:12 pu:2".')]
JsonOpt = Annotated[bool, Opt("--json", help="Print JSON (schema in docs/schemas.md).")]
ExecutorsOpt = Annotated[int | None, Opt("--executors", help="Executors in total.")]
PerNodeOpt = Annotated[int | None, Opt("--executors-per-node", help="Executors on each NUMA node with CPUs.")]
CoresOpt = Annotated[int | None, Opt("--cores-per-executor", help="Task slots per executor (default: share the CPUs).")]
MemoryOpt = Annotated[str, Opt("--memory-per-executor", help="Executor heap, e.g. 8g, or 'auto' to split node memory.")]
BindOpt = Annotated[Binding, Opt("--bind", help="Binding level of each JVM that runs tasks.")]
PolicyOpt = Annotated[MemPolicy | None, Opt("--mem-policy", help="Memory policy (default: bind when bound, the kernel's otherwise).")]
NodesOpt = Annotated[str | None, Opt("--nodes", help="Use only these NUMA nodes for executors, e.g. 0 or 0-1.")]
PuOrderOpt = Annotated[PuOrder, Opt("--pu-order", help="For --bind pu: one thread per core first, or siblings together.")]
OutOpt = Annotated[Path, Opt("--out", help="Directory for results.jsonl and run artefacts.")]
DataOpt = Annotated[Path | None, Opt("--data", help="Where generated inputs live (default ./numaspark-data).")]
SizeOpt = Annotated[str, Opt("--size", help="tiny, small, large, huge, bytes (64MB) or rows (1000rows).")]
RepeatOpt = Annotated[int, Opt("--repeat", help="Measured iterations per configuration, in one application.")]
WarmupOpt = Annotated[int, Opt("--warmup", help="Warm-up iterations before the measured ones (stored, not counted).")]
ConfOpt = Annotated[list[str] | None, Opt("--conf", help="Extra Spark setting KEY=VALUE (repeatable).")]
ParamOpt = Annotated[list[str] | None, Opt("--param", help="Workload parameter KEY=VALUE (repeatable; see workloads).")]
ResumeOpt = Annotated[bool, Opt("--resume", help="Skip configurations already stored in --out.")]
WorkloadArg = Annotated[str, typer.Argument(help="Workload name (numaspark workloads).")]
# fmt: on


class Target(str, Enum):
    SPARK = "spark"
    YARN = "yarn"
    K8S = "k8s"


def _topology(xml: Path | None = None, synthetic: str | None = None):
    from numaspark.topology import load

    return load(xml=xml, synthetic=synthetic)


def _layout(executors, per_node, cores, memory, mode, driver_cores=1, driver_memory="1g") -> Layout:
    return Layout(executors=executors, executors_per_node=per_node, cores_per_executor=cores,
                  memory_per_executor=None if memory == "auto"
                  else parse_size(memory, "--memory-per-executor"),
                  driver_cores=driver_cores,
                  driver_memory=parse_size(driver_memory, "--driver-memory"), mode=mode)  # fmt: skip


def _nodes(nodes: str | None) -> CpuSet | None:
    return CpuSet.parse(nodes) if nodes is not None else None


def _params(param: list[str] | None) -> dict[str, str]:
    return parse_pairs(param or [], "--param", "iterations=5")


def _conf(conf: list[str] | None) -> dict[str, str]:
    return parse_pairs(conf or [], "--conf", "spark.executor.extraJavaOptions=-XX:+UseNUMA")


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def _lines(lines: list[str]) -> None:
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


def _warn(warnings: list[str]) -> None:
    for warning in views.warning_lines(warnings):
        err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)


def _progress_bar(remaining: bool = False):
    """A rich progress bar on stderr: what runs now, how many of how many, time so far."""
    from rich import progress as bars

    columns = [bars.TextColumn("{task.description}"), bars.BarColumn(), bars.MofNCompleteColumn(),
               bars.TimeElapsedColumn()] + ([bars.TimeRemainingColumn()] if remaining else [])  # fmt: skip
    return bars.Progress(*columns, console=err_console, transient=False)


def _say(message: str) -> None:
    err_console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {message}", highlight=False)


@contextlib.contextmanager
def _interruptible(out: Path | None):
    """Ctrl-C or SIGTERM: every started JVM is already stopped; say what was kept, exit 130.
    ``out`` is where runs are stored; None for commands that store none (launch)."""
    from numaspark.experiment.store import ResultStore

    try:
        yield
    except KeyboardInterrupt:
        if out is None:
            err_console.print("Interrupted: every launched process stopped")
        else:
            store = ResultStore(out)
            err_console.print(f"Interrupted: every Spark JVM stopped; {store.count()} finished "
                              f"run(s) kept in {store.path}")  # fmt: skip
        raise typer.Exit(130) from None


def _failed(results: list, name=lambda r: f"run {r.run_id}") -> list:
    failed = [r for r in results if not r.ok]
    for r in failed:
        err_console.print(f"[red]{name(r)} failed:[/] {r.failure_reason}", highlight=False)
    return failed


# --- see and place ------------------------------------------------------------------------


@app.command()
def topology(xml: XmlOpt = None, synthetic: SyntheticOpt = None, as_json: JsonOpt = False) -> None:
    """Show the machine as hwloc sees it: packages, NUMA nodes, cores, PUs, allowed sets."""
    topo = _topology(xml, synthetic)
    _print_json(topo.to_dict()) if as_json else console.print(views.topology_view(topo))


@app.command("plan")
def plan_command(
    executors: ExecutorsOpt = None, executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None, memory_per_executor: MemoryOpt = "auto",
    driver_cores: Annotated[int, Opt(help="Driver cores.")] = 1,
    driver_memory: Annotated[str, Opt(help="Driver heap.")] = "1g",
    bind: BindOpt = Binding.NONE, mem_policy: PolicyOpt = None,
    pu_order: PuOrderOpt = PuOrder.CORES_FIRST, nodes: NodesOpt = None,
    mode: Annotated[Mode, Opt(help="local: one JVM runs tasks; standalone: executors.")] = Mode.STANDALONE,
    target: Annotated[Target, Opt(help="Also print settings for YARN or Kubernetes.")] = Target.SPARK,
    xml: XmlOpt = None, synthetic: SyntheticOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Place executors on the machine: CPUs, nodes, heap and the numactl prefix of each JVM."""
    from numaspark.placement import k8s_settings, placement_to_dict, plan, yarn_settings

    topo = _topology(xml, synthetic)
    layout = _layout(executors, executors_per_node, cores_per_executor, memory_per_executor,
                     mode, driver_cores, driver_memory)  # fmt: skip
    placement = plan(topo, layout, bind, mem_policy, pu_order, only_nodes=_nodes(nodes))
    render = {Target.YARN: yarn_settings, Target.K8S: k8s_settings}.get(target)
    extra = render(placement, topo) if render else {}
    if as_json:
        _print_json({**placement_to_dict(placement), **({target.value: extra} if extra else {})})
        return
    console.print(views.placement_view(placement))
    if extra:
        console.print(views.settings_view(target.value.upper(), extra))


# --- run ------------------------------------------------------------------------------------


@app.command()
def run(
    workload: WorkloadArg, size: SizeOpt = "tiny",
    mode: Annotated[Mode, Opt(help="local: one bound JVM; standalone: bound workers.")] = Mode.LOCAL,
    executors: ExecutorsOpt = None, executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None, memory_per_executor: MemoryOpt = "auto",
    bind: BindOpt = Binding.NONE, mem_policy: PolicyOpt = None, nodes: NodesOpt = None,
    pu_order: PuOrderOpt = PuOrder.CORES_FIRST, repeat: RepeatOpt = 1, warmup: WarmupOpt = 0,
    out: OutOpt = Path("numaspark-out"),
    cluster: Annotated[Optional[Path], Opt(help="Reuse a cluster started by 'numaspark cluster up DIR'.")] = None,  # noqa: UP045
    data: DataOpt = None,
    timeout: Annotated[float, Opt(help="Seconds before a run is stopped as failed.")] = 1800.0,
    conf: ConfOpt = None, param: ParamOpt = None,
    rate: Annotated[Optional[float], Opt(help="Streaming: events a second the source sends (default 1000).")] = None,  # noqa: UP045
    duration: Annotated[Optional[str], Opt(help="Streaming: measured time per iteration, e.g. 60s (default 60s).")] = None,  # noqa: UP045
    stream_warmup: Annotated[str, Opt(help="Streaming: time sent before the measured window.")] = "10s",
    collect: Annotated[bool, Opt(help="Sample OS, NUMA and perf counters during the run.")] = True,
    interval: Annotated[str, Opt(help="Collectors' sampling interval.")] = "1s",
    gc_log: Annotated[bool, Opt(help="Write JVM GC logs (-Xlog:gc*) per JVM into the run directory.")] = False,
    profile: Annotated[bool, Opt(help="On-CPU flame graph (async-profiler) per task-running JVM.")] = False,
    xml: XmlOpt = None, synthetic: SyntheticOpt = None,
) -> None:  # fmt: skip
    """Run a workload, placed as planned, with repetitions; every run is stored as it ends."""
    from numaspark.experiment.runner import RunRequest, run_workload
    from numaspark.report.metrics import comparison_table, stream_table
    from numaspark.workloads import get_workload

    if xml is not None or synthetic is not None:
        raise UsageError("run starts real JVMs on this machine: --xml and --synthetic are for "
                         "'plan' only")  # fmt: skip
    streaming = get_workload(workload).streaming
    if not streaming and (rate is not None or duration is not None):
        raise UsageError(f"--rate and --duration are for streaming workloads; {workload} is batch")
    request = RunRequest(
        workload=workload, size=size,
        layout=_layout(executors, executors_per_node, cores_per_executor, memory_per_executor,
                       Mode.STANDALONE if cluster is not None else mode),
        binding=bind, mem_policy=mem_policy, pu_order=pu_order, only_nodes=_nodes(nodes),
        repeat=repeat, warmup=warmup, out=out, cluster_dir=cluster, data_root=data,
        timeout_s=timeout, spark_conf=_conf(conf), params=_params(param),
        rate=1000.0 if rate is None else rate,
        duration_s=parse_duration(duration or "60s", "--duration"),
        stream_warmup_s=parse_duration(stream_warmup, "--stream-warmup"), collect=collect,
        interval_s=parse_duration(interval, "--interval"), gc_log=gc_log, profile=profile,
    )  # fmt: skip
    with _interruptible(out):
        results = run_workload(request, _topology(), progress=_say)
    _lines(views.run_lines(results))
    table, warnings = comparison_table(results, title=f"{workload}: wall time of the measured runs")
    if streaming:
        table = stream_table(results, title=f"{workload}: the measured window of each run")
    console.print(table)
    _warn(warnings + sorted({w for r in results for w in r.warnings}))
    failed = _failed(results)
    for graph in sorted({g for r in results for g in r.artifacts.get("flame_graphs", [])}):
        console.print(f"flame graph: {graph}", highlight=False)
    console.print(f"results: {(out / RESULTS_FILE).resolve()}")
    if failed:
        raise typer.Exit(1)


@app.command(context_settings={"ignore_unknown_options": True})
def launch(
    command: Annotated[list[str], typer.Argument(help="The program and its arguments, after '--'.")],
    mode: Annotated[Mode, Opt(help="local: one process; standalone: one per executor.")] = Mode.STANDALONE,
    executors: ExecutorsOpt = None, executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None, memory_per_executor: MemoryOpt = "auto",
    bind: BindOpt = Binding.NONE, mem_policy: PolicyOpt = None,
    mem_nodes: Annotated[Optional[str], Opt(help="Bind memory to these nodes instead of the CPUs' own (remote memory).")] = None,  # noqa: UP045
    nodes: NodesOpt = None, pu_order: PuOrderOpt = PuOrder.CORES_FIRST,
    duration: Annotated[Optional[str], Opt(help="Stop the processes after this long, e.g. 10s (default: until they exit).")] = None,  # noqa: UP045
    timeout: Annotated[str, Opt(help="Stop them as failed after this long.")] = "10m",
    interval: Annotated[str, Opt(help="How often placement and pages are read.")] = "0.5s",
    out: Annotated[Path, Opt(help="Directory for launch.json and the logs.")] = Path("numaspark-out/launch"),
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Start any program once per planned JVM, bound as planned; record where each really ran.

    Placeholders {index} {heap} {cores} {cpus} {nodes} {mem_nodes} in the command are filled in
    per process, e.g.: numaspark launch --executors-per-node 1 --bind node -- java -Xmx{heap} -jar app.jar
    """
    from numaspark.launch import launch as launch_processes
    from numaspark.placement import memory_on, plan

    topo = _topology()
    placement = plan(topo, _layout(executors, executors_per_node, cores_per_executor,
                                   memory_per_executor, mode),
                     bind, mem_policy, pu_order, only_nodes=_nodes(nodes))  # fmt: skip
    if mem_nodes is not None:
        chosen = CpuSet.parse(mem_nodes)
        if not chosen or not chosen.issubset(topo.allowed_nodes):
            raise UsageError(f"--mem-nodes {mem_nodes}: this machine's allowed NUMA nodes are "
                             f"{topo.allowed_nodes} (numaspark topology)")  # fmt: skip
        placement = memory_on(placement, chosen)
    with _interruptible(None):
        record = launch_processes(
            placement, topo, command, out,
            duration_s=parse_duration(duration, "--duration") if duration else None,
            timeout_s=parse_duration(timeout, "--timeout"),
            interval_s=parse_duration(interval, "--interval"),
            on_progress=(lambda message: None) if as_json else _say,
        )  # fmt: skip
    if as_json:
        _print_json(record)
    else:
        console.print(views.launch_view(record))
        console.print(f"record: {(out / 'launch.json').resolve()}", highlight=False)
    failed = [p for p in record["processes"] if not p["ok"]]
    for entry in failed:
        err_console.print(f"[red]{entry['name']} {entry['status']}:[/] {entry.get('error', '')} "
                          f"(log {entry['log']})", highlight=False)  # fmt: skip
    if failed:
        raise typer.Exit(1)


cluster_app = typer.Typer(help="A standalone cluster kept up across runs (executors take ~15 s to start).")  # fmt: skip
app.add_typer(cluster_app, name="cluster")


@cluster_app.command("up")
def cluster_up(
    directory: Annotated[Path, typer.Argument(help="The cluster's directory (state, logs, work dirs).")],
    executors: ExecutorsOpt = None, executors_per_node: PerNodeOpt = None,
    cores_per_executor: CoresOpt = None, memory_per_executor: MemoryOpt = "auto",
    bind: BindOpt = Binding.NONE, mem_policy: PolicyOpt = None, nodes: NodesOpt = None,
    pu_order: PuOrderOpt = PuOrder.CORES_FIRST,
    host: Annotated[str, Opt(help="Address the master and workers listen on.")] = "127.0.0.1",
) -> None:  # fmt: skip
    """Start a master and one bound worker per planned executor, and leave them running."""
    from numaspark.experiment.target import start_kept_cluster
    from numaspark.placement import plan

    layout = _layout(executors, executors_per_node, cores_per_executor, memory_per_executor,
                     Mode.STANDALONE)  # fmt: skip
    placement = plan(_topology(), layout, bind, mem_policy, pu_order, only_nodes=_nodes(nodes))
    cluster = start_kept_cluster(placement, directory, host, _say)
    console.print(f"cluster up: {cluster.master_url}, {len(cluster.workers)} worker(s); state in "
                  f"{directory / 'cluster.json'}")  # fmt: skip
    console.print(f"use it: numaspark run WORKLOAD --cluster {directory} ...; stop it: numaspark "
                  f"cluster down {directory}")  # fmt: skip


@cluster_app.command("status")
def cluster_status(directory: Annotated[Path, typer.Argument()], as_json: JsonOpt = False) -> None:
    """Show the master's view of a running cluster and where each worker really runs."""
    from numaspark.spark.cluster import cluster_status as read_status

    state = read_status(directory)
    _print_json(state) if as_json else console.print(views.cluster_table(state))


@cluster_app.command("down")
def cluster_down(directory: Annotated[Path, typer.Argument()]) -> None:
    """Stop every process of the cluster (its executors too)."""
    from numaspark.spark.cluster import stop_cluster_dir

    stopped = stop_cluster_dir(directory)
    console.print(f"stopped {len(stopped)} process(es) of the cluster in {directory}")


# --- experiment -----------------------------------------------------------------------------


def _run_experiment(experiment, topo, out: Path, resume: bool, data: Path | None, title: str,
                    baseline: str | None = None):  # fmt: skip
    """Run an experiment with a progress bar; print skipped configurations first, then the table."""
    from numaspark.experiment.store import ResultStore
    from numaspark.experiment.sweep import run_sweep
    from numaspark.report.study import study_table

    for config, reason in experiment.skipped:
        err_console.print(f"[yellow]skipped[/] {config.label}: {reason}", highlight=False)
    if not experiment.configs:
        raise UsageError("no configuration of this experiment fits this machine (see above)")
    with _interruptible(out), _progress_bar(remaining=True) as bar:
        task = bar.add_task("starting", total=len(experiment.configs))
        report = run_sweep(
            experiment, topo, out, resume=resume, data_root=data,
            on_start=lambda i, n, c: bar.update(task, description=f"{c.workload} {c.label}"),
            on_end=lambda config, results: bar.advance(task),
        )  # fmt: skip
        bar.update(task, completed=len(experiment.configs), description="done")
    if report.resumed:
        console.print(
            f"{len(report.resumed)} configuration(s) already stored in {out}: not run again"
        )
    for config in report.over_budget:
        err_console.print(f"[yellow]over budget, not run:[/] {config.label}", highlight=False)
    store = ResultStore(out)
    stored = store.load()
    table, warnings, medians = study_table(experiment, stored, title, baseline)
    console.print(table)
    _warn(warnings)
    _failed(report.results, lambda r: r.spec.label)
    console.print(f"results: {store.path.resolve()}")
    return stored, medians


@app.command()
def sweep(
    spec: Annotated[Path, typer.Argument(help="Experiment spec (TOML; docs/experiments.md).")],
    out: OutOpt = Path("numaspark-out"), resume: ResumeOpt = False, data: DataOpt = None,
) -> None:  # fmt: skip
    """Run every configuration of an experiment spec, storing each run as it ends."""
    from numaspark.experiment.spec import load_spec

    topo = _topology()
    experiment = load_spec(spec, topo)
    _run_experiment(experiment, topo, out, resume, data,
                    f"{experiment.name}: wall time per configuration")  # fmt: skip


study_app = typer.Typer(help="Built-in studies: layouts, binding, scaling, executors, smt, affinity, cosched.")  # fmt: skip
app.add_typer(study_app, name="study")


def _study_command(kind: str, doc: str):
    def command(workload: WorkloadArg, size: SizeOpt = "tiny", repeat: RepeatOpt = 3,
                warmup: WarmupOpt = 1, out: OutOpt = Path("numaspark-out"),
                resume: ResumeOpt = False, data: DataOpt = None, conf: ConfOpt = None,
                param: ParamOpt = None) -> None:  # fmt: skip
        from numaspark.experiment.studies import STUDIES

        if repeat < 1 or warmup < 0:
            raise UsageError("--repeat must be at least 1 and --warmup at least 0")
        topo = _topology()
        study = STUDIES[kind](topo, workload, size, repeat, warmup, params=_params(param),
                              conf=_conf(conf))  # fmt: skip
        for line in study.cannot:
            err_console.print(f"[yellow]cannot run here:[/] {line}", highlight=False)
        _, medians = _run_experiment(study.experiment, topo, out, resume, data,
                                     f"study {kind}: {workload} {size}", study.baseline)  # fmt: skip
        configs = study.experiment.configs
        if kind == "scaling":
            _lines(views.scaling_lines([(c.layout.cores_per_executor, medians[c.label])
                                        for c in configs if c.label in medians]))  # fmt: skip
        if kind == "smt":
            _lines([views.smt_line({c.note: medians.get(c.label) for c in configs})])

    command.__doc__ = doc
    study_app.command(kind)(command)


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
    size: Annotated[str, Opt(help="Input size of every workload.")] = "tiny",
    window: Annotated[str, Opt(help="Measured window (the studies: 1h).")] = "2m",
    warmup_time: Annotated[Optional[str], Opt(help="Before the window (default: a quarter of it).")] = None,  # noqa: UP045
    cooldown: Annotated[Optional[str], Opt(help="After the window (default: a quarter of it).")] = None,  # noqa: UP045
    by: Annotated[str, Opt(help="Split by nodes, cores, or auto.")] = "auto",
    out: OutOpt = Path("numaspark-out"), data: DataOpt = None,
) -> None:  # fmt: skip
    """Run workloads concurrently, each in a loop, bound to its share and unbound: completions."""
    from numaspark.experiment.cosched import cosched

    if by not in ("auto", "nodes", "cores"):
        raise UsageError(f"--by {by!r}: use auto, nodes or cores")
    window_s = parse_duration(window, "--window")
    warmup_s = parse_duration(warmup_time, "--warmup-time") if warmup_time else window_s / 4
    cooldown_s = parse_duration(cooldown, "--cooldown") if cooldown else window_s / 4
    topo = _topology()
    with _interruptible(out), _progress_bar() as bar:
        task = bar.add_task("starting", total=None)

        def on_round(number, total, label):
            bar.update(task, total=total, completed=number,
                       description=f"{label}: {warmup_s + window_s + cooldown_s:.0f} s")  # fmt: skip

        rows = cosched(topo, workloads, size, window_s, warmup_s, cooldown_s, out, data, by,
                       on_round=on_round)  # fmt: skip
        bar.update(task, completed=bar.tasks[0].total, description="done")
    console.print(views.cosched_table(rows, window_s, warmup_s))
    console.print(f"results: {(out / 'cosched.jsonl').resolve()}")


@app.command()
def characterize(
    out: OutOpt = Path("numaspark-out/characterize"),
    size: Annotated[str, Opt(help="Input size of both workloads.")] = "tiny",
    repeat: RepeatOpt = 3, warmup: WarmupOpt = 1, data: DataOpt = None,
    report: Annotated[bool, Opt(help="Write OUT/report.html at the end.")] = True,
) -> None:  # fmt: skip
    """Quick characterization of this machine: topology, then two workloads placed three ways,
    ending with an HTML report."""
    from numaspark.experiment import characterize as quick
    from numaspark.experiment.store import ResultStore
    from numaspark.report.metrics import comparison_table

    topo = _topology()
    console.print(views.topology_view(topo))
    total = quick.total_runs(topo, quick.DEFAULT_WORKLOADS, repeat, warmup)
    with _interruptible(out), _progress_bar() as bar:
        task = bar.add_task("starting", total=total)
        results = quick.characterize(
            topo, out, size=size, repeat=repeat, warmup=warmup, data_root=data,
            progress=lambda message: bar.update(task, description=message),
            on_result=lambda result: bar.advance(task),
        )  # fmt: skip
        bar.update(task, description="done")
    table, warnings = comparison_table(
        results, title="Characterization: wall time per iteration (s)"
    )
    console.print(table)
    _warn(warnings)
    failed = _failed(results, lambda r: f"{r.spec.label} {r.spec.workload}")
    console.print(f"results: {ResultStore(out).path.resolve()}  (numaspark results {out})")
    if report:
        from numaspark.report.html import write_report

        console.print(
            f"report: {write_report(out, out / 'report.html').resolve()}", highlight=False
        )
    if failed:
        raise typer.Exit(1)


# --- measure --------------------------------------------------------------------------------


@app.command()
def analyze(
    event_logs: Annotated[list[Path], typer.Argument(help="Event log files or eventlog_v2_* directories.")],
    as_json: JsonOpt = False,
    tasks: Annotated[Optional[Path], Opt(help="Write the task table (.parquet or .csv).")] = None,  # noqa: UP045
    stages: Annotated[Optional[Path], Opt(help="Write the stage table (.parquet or .csv).")] = None,  # noqa: UP045
) -> None:  # fmt: skip
    """Summarise any Spark event log (plain, rolling, zstd/lz4/snappy) in sparkMeasure's terms."""
    import pandas as pd

    from numaspark.decide.readings import log_summary
    from numaspark.metrics.eventlog import parse_event_log
    from numaspark.report.export import write_table

    logs = [parse_event_log(path) for path in event_logs]
    summaries = [log_summary(log) for log in logs]
    if as_json:
        _print_json(summaries)
    else:
        for log, summary in zip(logs, summaries, strict=True):
            _lines(views.log_lines(log, summary))
            for warning in log.warnings:
                err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for target, attribute in ((tasks, "tasks"), (stages, "stages")):
        if target is not None:
            frame = pd.concat([getattr(log, attribute).assign(appId=log.app_id) for log in logs])
            write_table(frame, target)
            err_console.print(f"wrote {len(frame)} {attribute} to {target}")


@app.command()
def whatif(
    event_log: Annotated[Path, typer.Argument(help="An event log file or eventlog_v2_* directory.")],
    cores: Annotated[str, Opt(help="Core counts to simulate, e.g. 1,2,4,8.")] = "1,2,4,8",
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Predict the application's time on other core counts from its real task durations."""
    from numaspark.metrics.eventlog import parse_event_log
    from numaspark.metrics.whatif import measured_s, simulate

    try:
        counts = [int(c) for c in cores.split(",") if c.strip()]
    except ValueError:
        counts = []
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
    console.print(views.whatif_table(log.app_id, measured_s(log), predictions))
    console.print("task durations are kept as measured: what changes with the core count "
                  "(memory bandwidth, GC) is not simulated", highlight=False)  # fmt: skip


@app.command()
def probe(
    size: Annotated[Optional[str], Opt(help="Bytes per STREAM array (default: 4x the last-level cache, >= 128MB).")] = None,  # noqa: UP045
    latency_size: Annotated[str, Opt(help="Pointer-chase buffer.")] = "256MB",
    loads: Annotated[int, Opt(help="Dependent loads timed per latency probe.")] = 10_000_000,
    repeat: Annotated[int, Opt(help="STREAM repetitions (the best counts).")] = 5,
    dry_run: Annotated[bool, Opt(help="Print the commands, run nothing (always so with --xml/--synthetic).")] = False,
    xml: XmlOpt = None, synthetic: SyntheticOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Measure memory bandwidth and latency for every (CPU node, memory node) pair."""
    import shlex

    from numaspark.probe import build_membench, default_elements, plan_probe, run_probe, save_probe

    topo = _topology(xml, synthetic)
    elements = parse_size(size, "--size") // 8 if size else default_elements(topo)
    latency_bytes = parse_size(latency_size, "--latency-size")
    if elements < 1024 or latency_bytes < 4096 or loads < 1 or repeat < 1:
        raise UsageError("--size, --latency-size, --loads and --repeat are too small to measure")
    elsewhere = dry_run or xml is not None or synthetic is not None
    exe = "membench" if elsewhere else str(build_membench())
    commands = plan_probe(topo, elements, loads, latency_bytes, repeat, exe=exe)
    if not commands:
        raise UsageError("no NUMA node has CPUs this process may use: nothing to probe")
    if elsewhere:
        _lines([" ".join(f"{k}={v}" for k, v in c.env.items()) + f" {shlex.join(c.argv)}"
                for c in commands])  # fmt: skip
        return
    if shutil.which("numactl") is None:
        raise ToolMissingError("numaspark probe binds with numactl: apt-get install numactl")
    with _progress_bar() as bar:
        task = bar.add_task("probing", total=len(commands))
        found = run_probe(commands, on_progress=lambda i, total, c: bar.update(
            task, completed=i - 1,
            description=f"{c.kind} CPUs node {c.cpu_node} -> memory node {c.mem_node}"))  # fmt: skip
        bar.update(task, completed=len(commands))
    path = save_probe(found, topo)
    if as_json:
        _print_json({**found, "saved": str(path)})
        return
    console.print(views.probe_table(found))
    console.print(f"saved: {path} (topology {topo.fingerprint})")


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check this machine for NUMA experiments: tools, perf events, kernel settings, limits."""
    from numaspark.doctor import run_checks

    results = run_checks()
    if as_json:
        _print_json({name: [{"level": m.level, "text": m.text} for m in messages]
                     for name, messages in results})  # fmt: skip
    else:
        console.print(views.doctor_table(results, __version__))


# --- decide and show ------------------------------------------------------------------------


@app.command()
def results(
    directory: Annotated[Path, typer.Argument(help="A --out directory of run or characterize.")],
    csv: Annotated[Optional[Path], Opt(help="Export one row per run to CSV.")] = None,  # noqa: UP045
    parquet: Annotated[Optional[Path], Opt(help="Export one row per run to Parquet.")] = None,  # noqa: UP045
    config_table: Annotated[Optional[Path], Opt("--table", help="Export one row per configuration (what varies, median wall_s): the table 'tune --replay' reads.")] = None,  # noqa: UP045
) -> None:  # fmt: skip
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
    _warn(warnings)
    for target in (csv, parquet):
        if target is not None:
            write_table(results_frame(stored), target)
            console.print(f"wrote {len(stored)} run(s) to {target}")
    if config_table is not None:
        frame = config_frame(stored)
        write_table(frame, config_table)
        console.print(f"wrote {len(frame)} configuration(s) to {config_table}")


@app.command()
def classify(
    directory: Annotated[Path, typer.Argument(help="Results of a sweep or study (--out).")],
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Group a sweep's configurations by what explains their time (Baig et al.)."""
    from numaspark.decide.classify import LABELS
    from numaspark.decide.classify import classify as classify_runs
    from numaspark.experiment.store import ResultStore

    found = classify_runs(ResultStore(directory).load())
    if as_json:
        _print_json(found.to_dict())
        return
    if not found.configs:
        raise UsageError(f"{directory}: no measured ok run to classify")
    console.print(views.classification_table(found, directory))
    for name, why in found.not_assessed.items():
        err_console.print(f"[yellow]not assessed:[/] {LABELS[name]}: {why}", highlight=False)


@app.command()
def advise(
    source: Annotated[Path, typer.Argument(help="A results directory (--out) or an event log.")],
    show_all: Annotated[bool, Opt("--all", help="Also list the rules that found nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Rules with severities: what to change, the numbers behind it, the command that tries it."""
    from numaspark.decide.advise import advise_event_log, advise_results
    from numaspark.experiment.store import ResultStore

    if not source.exists():
        raise UsageError(f"{source} does not exist: give a results directory or an event log")
    store = ResultStore(source)
    if source.is_dir() and store.path.exists():
        advices = advise_results(store.load())
        if not advices:
            raise UsageError(f"{source}: no measured ok run to advise on")
    else:
        advices = [advise_event_log(source)]
    if as_json:
        _print_json({"source": str(source), "advice": [a.to_dict() for a in advices]})
    else:
        _lines(views.advice_lines(advices, show_all))


@app.command()
def tune(
    workload: Annotated[Optional[str], typer.Argument(help="Workload to tune by real runs (or give --replay).")] = None,  # noqa: UP045
    replay: Annotated[Optional[Path], Opt(help="Replay a recorded CSV (one row per configuration) instead of Spark.")] = None,  # noqa: UP045
    minimize: Annotated[str, Opt(help="With --replay: the column to minimize.")] = "wall_s",
    budget: Annotated[int, Opt(help="Most runs (trials).")] = 10,
    budget_time: Annotated[Optional[str], Opt(help="Start no trial after this long, e.g. 30m.")] = None,  # noqa: UP045
    seed: Annotated[int, Opt(help="Seed of the search.")] = 0,
    noise: Annotated[float, Opt(help="Relative difference treated as noise (early stop).")] = 0.05,
    early_stop: Annotated[bool, Opt(help="Stop when no configuration left can beat the best.")] = True,
    size: SizeOpt = "tiny", repeat: Annotated[int, Opt(help="Measured iterations per trial.")] = 2,
    warmup: Annotated[int, Opt(help="Warm-up iterations per trial.")] = 1,
    out: OutOpt = Path("numaspark-out"), data: DataOpt = None, conf: ConfOpt = None,
    param: ParamOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Find a good layout and binding in few runs (TPE with the studies' priors, early stop)."""
    from numaspark.decide.tune import read_table, replay_objective
    from numaspark.decide.tune import tune as search

    if (workload is None) == (replay is None):
        raise UsageError("give a WORKLOAD to tune by real runs, or --replay FILE.csv (not both)")
    if not 0 <= noise < 1:
        raise UsageError(f"--noise {noise}: give a fraction like 0.05")
    time_budget = parse_duration(budget_time, "--budget-time") if budget_time else None
    if replay is not None:
        space, lookup = read_table(replay, minimize)
        found = search(space, replay_objective(lookup, space), budget, seed, noise,
                       early_stop=early_stop, time_budget_s=time_budget)  # fmt: skip
    else:
        from numaspark.decide.live import live_objective, live_space

        if repeat < 1 or warmup < 0:
            raise UsageError("--repeat must be at least 1 and --warmup at least 0")
        topo = _topology()
        space, configs = live_space(topo, workload, size, _params(param), _conf(conf))
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
    console.print(views.trials_table(found, space, minimize if replay else "median s"))
    console.print(f"stopped: {found.stopped}", highlight=False)
    if workload is not None:
        console.print(f"results: {(out / RESULTS_FILE).resolve()}")


@app.command()
def fit(
    table: Annotated[Path, typer.Argument(help="CSV of concurrency,elapsed seconds (header ok).")],
    predict: Annotated[Optional[list[float]], Opt(help="Predict the time at this concurrency (repeatable).")] = None,  # noqa: UP045
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Fit Amdahl's law and the Universal Scalability Law to a (concurrency, time) table."""
    from numaspark.experiment.scaling import fit_report, read_points

    if not table.exists():
        raise UsageError(f"{table} does not exist: give a CSV of concurrency,seconds rows")
    found = fit_report(read_points(table), predict)
    if as_json:
        _print_json(found)
        return
    for view in views.fit_views(table.name, found):
        console.print(view, highlight=False)


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="A results directory (--out of any command).")],
    output: Annotated[Path, Opt("-o", "--output", help="The HTML file to write.")] = Path("numaspark-report.html"),
) -> None:  # fmt: skip
    """Write one self-contained HTML report (plots, topology, advice) of a results directory."""
    from numaspark.report.html import write_report

    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory: give the --out of a run or study")
    console.print(f"report: {write_report(directory, output).resolve()}", highlight=False)


# --- workloads --------------------------------------------------------------------------------


@app.command()
def workloads() -> None:
    """List the workloads numaspark can run, their parameters and size profiles."""
    from numaspark.workloads import all_workloads

    console.print(views.workloads_table(all_workloads()))


@app.command()
def datagen(
    workload: WorkloadArg,
    size: Annotated[str, Opt(help="tiny, small, large, huge, bytes (64MB) or rows.")] = "tiny",
    data: DataOpt = None, seed: Annotated[int, Opt(help="Random seed of the generator.")] = 42,
) -> None:  # fmt: skip
    """Generate a workload's input ahead of time (reused by later runs that ask for it)."""
    from numaspark.workloads import get_workload
    from numaspark.workloads.datagen import prepare_input

    chosen = get_workload(workload)
    if chosen.streaming:
        raise UsageError(f"{workload} reads numaspark's live event source, nothing to generate: "
                         f"run it with numaspark run {workload} --rate 1000 --duration 60s")  # fmt: skip
    path, manifest = prepare_input(chosen, chosen.size(size), seed, data)
    console.print(f"{chosen.name} {manifest['size']}: {manifest['rows']:,} rows, "
                  f"{manifest['bytes']:,} bytes in {path} (generated in "
                  f"{manifest['generation_s']} s, sha256 {manifest['sha256'][:12]})")  # fmt: skip


@app.command()
def version() -> None:
    """Print numaspark's version."""
    console.print(__version__)


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
