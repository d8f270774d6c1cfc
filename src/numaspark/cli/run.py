"""Run: a workload or the user's application placed as planned (``run``, its options as one
`RunOptions`), and any program started once per planned JVM (``launch``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

import numaspark.cli.progress as progress
from numaspark.cli.app import app, panelled, term
from numaspark.cli.app_options import AppOptions, line_settings, with_application
from numaspark.cli.option_group import Opt, option_group, options_of
from numaspark.cli.options import (
    ClusterOptions,
    ConfOpt,
    DataOpt,
    JsonOpt,
    OutOpt,
    ParamOpt,
    RepeatOpt,
    SizeOpt,
    StudyWorkloadArg,
    TimeOpt,
    WarmupOpt,
    conf_of,
    params,
    topology_of,
    with_cluster,
)
from numaspark.cli.placement_options import PlacementOptions, with_placement
from numaspark.errors import UsageError
from numaspark.experiment.request import RunRequest
from numaspark.experiment.result import DEFAULT_TIME, TIMES
from numaspark.experiment.store import RESULTS_FILE
from numaspark.experiment.venue import Venue
from numaspark.launch import launch as launch_processes
from numaspark.placement import Mode, memory_on
from numaspark.report import console as views
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_duration


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """``run``'s own options (``@with_run_options``), in the order its --help shows them,
    checked here, and the request they make."""

    size: SizeOpt = "tiny"
    mode: Annotated[
        Mode, Opt(help="Where tasks run: local, in one bound JVM; standalone, in bound workers.")
    ] = Mode.LOCAL
    repeat: RepeatOpt = 1
    warmup: WarmupOpt = 0
    out: OutOpt = Path("numaspark-out")
    cluster: Annotated[
        Path | None, Opt(help="Reuse a cluster started by 'numaspark cluster up DIR'.")
    ] = None
    data: DataOpt = None
    timeout: Annotated[float, Opt(help="Seconds before a run is stopped as failed.", min=1)] = (
        1800.0
    )
    conf: ConfOpt = None
    param: ParamOpt = None
    rate: Annotated[
        float | None, Opt(help="Streaming: events a second the source sends (default 1000).")
    ] = None
    duration: Annotated[
        str | None,
        Opt(
            help="Streaming: measured time per iteration, e.g. 60s (default 60s); your application: stopped after it has run that long on Spark."
        ),
    ] = None
    stream_warmup: Annotated[str, Opt(help="Streaming: time sent before the measured window.")] = (
        "10s"
    )
    collect: Annotated[bool, Opt(help="Sample OS, NUMA and perf counters during the run.")] = True
    interval: Annotated[str, Opt(help="Collectors' sampling interval.")] = "1s"
    gc_log: Annotated[
        bool, Opt(help="Write JVM GC logs (-Xlog:gc*) per JVM into the run directory.")
    ] = False
    profile: Annotated[
        bool, Opt(help="On-CPU flame graph (async-profiler) per task-running JVM.")
    ] = False
    time: TimeOpt = DEFAULT_TIME
    numa_balancing: Annotated[
        str | None,
        Opt(
            help="The kernel's automatic NUMA balancing for this run, on or off (kernel.numa_balancing, root), put back after it (default: as found)."
        ),
    ] = None

    def check(self, workload) -> None:
        """--rate is for a stream; --duration for a stream or the user's application."""
        streaming, own = workload.streaming, workload.application is not None
        if not streaming and self.rate is not None:
            raise UsageError(f"--rate is for streaming workloads; {workload.name} is batch")
        if not streaming and not own and self.duration is not None:
            raise UsageError(
                f"--duration is for streaming workloads and your own application; "
                f"{workload.name} is batch"
            )

    def request(self, workload, where: PlacementOptions, mode: Mode, venue: Venue) -> RunRequest:
        """The run of ``workload`` these options ask for, placed by ``where`` in ``mode``, at
        ``venue`` (which checks it: --numa-balancing switches this machine's kernel only)."""
        if self.numa_balancing not in (None, "on", "off"):
            raise UsageError(f"--numa-balancing {self.numa_balancing}: give on or off")
        own = workload.application is not None
        request = RunRequest(
            workload=workload.name,
            size=self.size,
            layout=where.layout(Mode.STANDALONE if self.cluster else mode),
            numa_balancing=None if self.numa_balancing is None else self.numa_balancing == "on",
            binding=where.bind,
            mem_policy=where.mem_policy,
            pu_order=where.pu_order,
            only_nodes=where.only_nodes,
            repeat=self.repeat,
            warmup=self.warmup,
            out=self.out,
            cluster_dir=self.cluster,
            data_root=self.data,
            timeout_s=self.timeout,
            spark_conf=conf_of(self.conf),
            params=params(self.param),
            rate=1000.0 if self.rate is None else self.rate,
            duration_s=parse_duration(self.duration or "60s", "--duration"),
            stream_warmup_s=parse_duration(self.stream_warmup, "--stream-warmup"),
            collect=self.collect,
            interval_s=parse_duration(self.interval, "--interval"),
            gc_log=self.gc_log,
            profile=self.profile,
            time=self.time,
            stop_after_s=parse_duration(self.duration, "--duration")
            if own and self.duration
            else None,
        )
        venue.check(request.numa_balancing, workload.application)
        return request.at(venue)

    def title(self, workload) -> str:
        """What the table of ``workload``'s runs shows of each."""
        return f"{workload.name}: " + (
            "the measured window of each run"
            if workload.streaming
            else f"{TIMES[self.time]} of the measured runs"
            if workload.application is not None
            else "wall time of the measured runs"
        )


# run's own options, handed to it as one ``options: RunOptions`` (after its workload)
with_run_options = option_group("options", options_of(RunOptions), RunOptions)


#: ``run --help``'s headings: where it runs, the layout, the binding, what is measured, the
#: workload or application, and where the results go
RUN_HELP = panelled(
    (
        "Where",
        (
            "--mode",
            "--cluster",
            "--master",
            "--master-ui",
            "--executor-wait",
            "--driver-host",
            "--python",
            "--image",
            "--hosts",
            "--hosts-file",
            "--xml",
            "--synthetic",
        ),
    ),
    (
        "Layout",
        (
            "--executors",
            "--executors-per-node",
            "--cores-per-executor",
            "--memory-per-executor",
            "--nodes",
            "--threads-per-core",
            "--gpus-per-executor",
            "--resource",
        ),
    ),
    ("Binding", ("--bind", "--mem-policy", "--pu-order", "--numa-balancing")),
    (
        "Measurement",
        (
            "--repeat",
            "--warmup",
            "--timeout",
            "--collect",
            "--interval",
            "--gc-log",
            "--profile",
            "--time",
        ),
    ),
    (
        "Workload",
        (
            "--size",
            "--data",
            "--conf",
            "--param",
            "--rate",
            "--duration",
            "--stream-warmup",
            "--class",
            "--name",
            "--py-files",
            "--files",
            "--jars",
            "--packages",
            "--check",
        ),
    ),
    ("Output", ("--out",)),
)


@app.command(cls=RUN_HELP)
@with_placement
@with_cluster
@with_application
@with_run_options
def run(
    where: PlacementOptions,
    on: ClusterOptions,
    application: AppOptions,
    options: RunOptions,
    workload: StudyWorkloadArg = None,
) -> None:
    """Run a workload or your own application, placed as planned.

    It runs with repetitions, and every run is stored as it ends. With
    --gpus-per-executor, each executor owns GPUs of the node it is bound to.

    \b
    Example:
      numaspark run wordcount --size tiny --bind node
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.experiment.runner import run_workload

    chosen = application.workload(workload)
    options.check(chosen)
    where, mode, master = line_settings(where, options.mode, on.master, chosen)
    request = options.request(chosen, where, mode, on.venue(master))
    with term.interruptible(options.out):
        results = run_workload(request, topology_of(), progress=term.say)
    term.lines(views.run_lines(results))
    failed = progress.show_runs(term, results, options.title(chosen), chosen.streaming)
    term.print(f"results: {(options.out / RESULTS_FILE).resolve()}")
    if failed:
        raise typer.Exit(1)


@app.command(context_settings={"ignore_unknown_options": True})
@with_placement
def launch(
    where: PlacementOptions,
    command: Annotated[
        list[str], typer.Argument(help="The program and its arguments, after '--'.")
    ],
    mode: Annotated[
        Mode, Opt(help="How many processes: local, one; standalone, one per executor.")
    ] = Mode.STANDALONE,
    mem_nodes: Annotated[
        str | None,
        Opt(help="Bind memory to these nodes instead of the CPUs' own (remote memory)."),
    ] = None,
    duration: Annotated[
        str | None,
        Opt(help="Stop the processes after this long, e.g. 10s (default: until they exit)."),
    ] = None,
    timeout: Annotated[str, Opt(help="Stop them as failed after this long.")] = "10m",
    interval: Annotated[str, Opt(help="How often placement and pages are read.")] = "0.5s",
    out: Annotated[Path, Opt(help="Directory for launch.json and the logs.")] = Path(
        "numaspark-out/launch"
    ),
    as_json: JsonOpt = False,
) -> None:
    """Start any program once per planned JVM, bound as planned.

    It records where each process really ran. The placeholders {index} {heap} {cores}
    {cpus} {nodes} {mem_nodes} in the command are filled in per process.

    \b
    Examples:
      numaspark launch --executors-per-node 1 --bind node --duration 2s -- sleep 5
      numaspark launch --executors 2 --bind core -- java -Xmx{heap} -jar app.jar
    """

    topo = topology_of()
    placement = where.place_here(topo, mode)
    if mem_nodes is not None:
        placement = memory_on(placement, CpuSet.parse(mem_nodes), topo)
    with term.interruptible(None):
        record = launch_processes(
            placement,
            topo,
            command,
            out,
            duration_s=parse_duration(duration, "--duration") if duration else None,
            timeout_s=parse_duration(timeout, "--timeout"),
            interval_s=parse_duration(interval, "--interval"),
            on_progress=(lambda message: None) if as_json else term.say,
        )
    if progress.show_launch(term, record, out, as_json):
        raise typer.Exit(1)
