"""The command line. Thin: parse options, call one package function, print what it gives.

Rendering lives in report/console.py (views) and cli/terminal.py (the terminal and
long work under progress bars); what is computed lives in the package of its pipeline
step; options that several commands share are declared once in options.py.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from pathlib import Path
from typing import Annotated

import typer

import numaspark.cli.terminal as long_work
from numaspark import __version__, records
from numaspark.cli.terminal import Terminal
from numaspark.errors import UsageError
from numaspark.experiment.request import RunRequest
from numaspark.experiment.result import DEFAULT_TIME, TIMES
from numaspark.experiment.store import RESULTS_FILE
from numaspark.placement import Binder, Mode, Placement, Platform, target_files, write_files
from numaspark.placement.share import Split
from numaspark.report import console as views
from numaspark.topology import Topology
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_counts, parse_duration, parse_size

# isort: off
from numaspark.cli.options import (
    AppOptions,
    ClusterOptions,
    ConfOpt,
    DataOpt,
    HostOpt,
    HostsFileOpt,
    HostsOpt,
    CompareTimeOpt,
    EventLogsOpt,
    InProgressOpt,
    JsonOpt,
    MixedOpt,
    Opt,
    OutOpt,
    ParamOpt,
    RepeatOpt,
    ResumeOpt,
    SizeOpt,
    SyntheticOpt,
    TimeOpt,
    StudyWorkloadArg,
    WarmupOpt,
    Where,
    WorkloadArg,
    XmlOpt,
    check_repeat,
    conf_of,
    venue_of,
    cosched_workload,
    inventory_of,
    line_target,
    option_group,
    params,
    topology_of,
    with_application,
    with_cluster,
    with_placement,
)
from numaspark.placement import placement_to_dict
from numaspark.launch import launch as launch_processes
from numaspark.placement import memory_on
from numaspark.experiment.placing import balancing_refused, planned_topology
from numaspark.experiment.target import start_kept_cluster
from numaspark.experiment.venue import HERE, Venue
from numaspark.spark.kept_clusters import cluster_status as read_status
from numaspark.spark.kept_clusters import stop_cluster_dir
from numaspark.spark.kept_clusters import start_kept_yarn
from numaspark.experiment.spec import build, cluster_table, read_spec
from numaspark.experiment.spec import at_venue
from numaspark.decide.readings import log_summary
from numaspark.probe import build_membench, probe_commands, save_probe
from numaspark.doctor import run_checks
from numaspark.experiment.result import refuse_mixed, retimed
from numaspark.experiment.store import ResultStore
from numaspark.decide.classify import LABELS
from numaspark.decide.classify import classify as classify_runs
from numaspark.workloads import all_workloads
from numaspark.workloads.datagen import generate
from numaspark.hosts import driver_address, plan_hosts, plans_to_dict
from numaspark.experiment.planned_study import plan_study
# isort: on

app = typer.Typer(
    name="numaspark",
    help="NUMA-aware placement, running and measurement of Spark on scale-up servers.\n\n"
    "Run 'numaspark COMMAND --help' for a command's options and an example.\n\n"
    "\b\nExample:\n  numaspark run wordcount --size tiny --bind node",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # click's own help layout: rich's panels squeeze the descriptions to ~19 columns at 80
    rich_markup_mode=None,
)
term = Terminal()


def options_of(group: type) -> list[inspect.Parameter]:
    """A dataclass's fields as a command's options, for `option_group`: each field's type is
    its option (typer's ``Annotated``) and its default the option's, so that a group of
    options is declared once, as the class that holds them."""
    hints = typing.get_type_hints(group, include_extras=True)
    return [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(group)
    ]


# --- see and place ------------------------------------------------------------------------


@app.command()
def topology(
    xml: XmlOpt = None,
    synthetic: SyntheticOpt = None,
    as_json: JsonOpt = False,
    host: HostOpt = None,
    hosts_file: HostsFileOpt = None,
) -> None:
    """Show the machine as hwloc sees it.

    Its packages, NUMA nodes, cores, PUs and allowed sets: this machine's, a saved
    XML's, a synthetic description's or a host's over SSH.

    \b
    Example:
      numaspark topology
    """
    topo = topology_of(xml, synthetic, host, hosts_file)
    term.json(records.dump(topo)) if as_json else term.print(views.topology_view(topo))


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """``plan``'s own options (``@with_plan_options``), in the order its --help shows them."""

    driver_cores: Annotated[int, Opt(help="Driver cores.")] = 1
    driver_memory: Annotated[str, Opt(help="Driver heap.")] = "1g"
    mode: Annotated[
        Mode, Opt(help="Where tasks run: local, in one JVM; standalone, in executors.")
    ] = Mode.STANDALONE
    target: Annotated[
        Platform,
        Opt(
            help="Also print settings for YARN, Kubernetes, or a standalone cluster numaspark did not start (a spark-defaults.conf fragment)."
        ),
    ] = Platform.SPARK
    xml: XmlOpt = None
    synthetic: SyntheticOpt = None
    as_json: JsonOpt = False
    hosts: HostsOpt = None
    hosts_file: HostsFileOpt = None
    out: Annotated[
        Path | None,
        Opt(
            help="With --target yarn, k8s or standalone: write the files to apply (yarn-site.xml, spark-defaults.conf, kubelet-config.yaml, the executor pod template, README.txt) into this directory."
        ),
    ] = None
    plugin_jar: Annotated[
        str | None,
        Opt(
            help="With --target k8s: a URL every pod fetches the plugin's jar from (default: local:///opt/numaspark/numaspark-affinity.jar, in the image)."
        ),
    ] = None
    image: Annotated[
        str | None,
        Opt(
            help="With --target k8s: the Spark image of the driver and executors (spark.kubernetes.container.image)."
        ),
    ] = None
    python_memory: Annotated[
        str | None,
        Opt(
            help="With --target yarn or k8s: each executor's Python workers' memory (spark.executor.pyspark.memory, e.g. 2g), counted in its container or pod."
        ),
    ] = None

    def python_bytes(self) -> int:
        """The options for one target only, checked; the Python workers' memory in bytes."""
        if (self.plugin_jar or self.image) and self.target is not Platform.K8S:
            raise UsageError("--plugin-jar and --image are for --target k8s")
        if self.python_memory and self.target not in (Platform.YARN, Platform.K8S):
            raise UsageError(
                "--python-memory sizes YARN containers and Kubernetes pods: give "
                "--target yarn or k8s (elsewhere pass --conf spark.executor.pyspark.memory)"
            )
        return parse_size(self.python_memory, "--python-memory") if self.python_memory else 0

    def sized(self) -> dict:
        """The driver's size, as `Where.place` takes it (the devices each executor owns are
        placement options: `Where.resources`)."""
        return {"driver_cores": self.driver_cores, "driver_memory": self.driver_memory}


# plan's own options, handed to it as one ``options: PlanOptions`` (before the placement's)
with_plan_options = option_group("options", options_of(PlanOptions), PlanOptions)


@app.command("plan")
@with_placement
@with_plan_options
def plan_command(where: Where, options: PlanOptions) -> None:
    """Place executors on this machine, or on each of --hosts.

    Each JVM gets its CPUs, nodes, heap and numactl prefix; with --hosts, from each
    host's own topology. With --gpus-per-executor, the GPUs on each node decide its
    executors, and each executor owns GPUs of its own node.

    \b
    Example:
      numaspark plan --executors-per-node 1 --bind node
    """
    python_bytes = options.python_bytes()
    sized = options.sized()
    inventory = inventory_of(options.hosts, options.hosts_file)
    if inventory is not None:  # the driver stays here; executors go to the hosts
        found = plan_hosts(
            inventory,
            lambda host, topo: where.place(topo, Mode.STANDALONE, **sized),
        )
        driver = driver_address(inventory)
        return (
            term.json(plans_to_dict(found, driver))
            if options.as_json
            else term.print(views.hosts_view(found, driver))
        )
    topo = topology_of(options.xml, options.synthetic)
    placement = where.place(topo, options.mode, **sized)
    target, out = options.target, options.out
    extra = target.settings(
        placement, topo, where.mem_policy, options.plugin_jar, options.image, python_bytes
    )
    # the files are written before anything is printed: a bad --out is the only line shown
    written = write_files(out, target_files(target, extra, out)) if out is not None else []
    if options.as_json:
        term.json({**placement_to_dict(placement), **({target.value: extra} if extra else {})})
    else:
        _show_plan(placement, target, extra)
    for path in written:
        term.note("wrote", str(path), colour="green")


def _show_plan(placement: Placement, target: Platform, extra: dict) -> None:
    """The placement, and what ``target`` is given to apply it (``extra``: its settings)."""
    manager = {Platform.YARN: "YARN", Platform.K8S: "Kubernetes"}.get(target)
    term.print(views.placement_view(placement, manager))
    # standalone: lines to paste into the standing cluster's spark-defaults.conf
    if target is Platform.STANDALONE:
        term.print(views.spark_defaults_fragment(extra["spark-defaults.conf"]), soft_wrap=True)
        if "worker" in extra:  # devices: what each worker offers Spark's scheduler
            term.print(views.settings_view("standalone", {"worker": extra["worker"]}))
    elif extra:
        term.print(views.settings_view(target.value.upper(), extra))


# --- run ------------------------------------------------------------------------------------


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

    def request(self, workload, where: Where, mode: Mode, venue: Venue) -> RunRequest:
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


@app.command()
@with_placement
@with_cluster
@with_application
@with_run_options
def run(
    where: Where,
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
    where, mode, master = line_target(where, options.mode, on.master, chosen)
    request = options.request(chosen, where, mode, on.venue(master))
    with term.interruptible(options.out):
        results = run_workload(request, topology_of(), progress=term.say)
    term.lines(views.run_lines(results))
    failed = long_work.show_runs(term, results, options.title(chosen), chosen.streaming)
    term.print(f"results: {(options.out / RESULTS_FILE).resolve()}")
    if failed:
        raise typer.Exit(1)


@app.command(context_settings={"ignore_unknown_options": True})
@with_placement
def launch(
    where: Where,
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
    if long_work.show_launch(term, record, out, as_json):
        raise typer.Exit(1)


cluster_app = typer.Typer(
    help="A standalone cluster kept up across runs.\n\nIts executors take about 15 s to start; runs that reuse it skip that wait.\n\n\b\nExample:\n  numaspark cluster up ./cluster --executors 2 --bind core",
    rich_markup_mode=None,
)
app.add_typer(cluster_app, name="cluster")


@cluster_app.command("up")
@with_placement
def cluster_up(
    where: Where,
    directory: Annotated[
        Path, typer.Argument(help="The cluster's directory (state, logs, work dirs).")
    ],
    host: Annotated[str, Opt(help="Address the master and workers listen on.")] = "127.0.0.1",
    hosts: HostsOpt = None,
    hosts_file: HostsFileOpt = None,
) -> None:
    """Start a master and bound workers, and leave them running.

    One worker per planned executor, here or on each of --hosts over SSH; with
    --gpus-per-executor, each worker offers Spark its executor's planned GPUs.

    \b
    Example:
      numaspark cluster up ./cluster --executors 2 --bind core
    """

    inventory = inventory_of(hosts, hosts_file)
    place = where.place if inventory is not None else where.place_here  # here: devices checked
    cluster = start_kept_cluster(
        lambda topo: place(topo, Mode.STANDALONE), directory, host, term.say, inventory
    )
    term.print(
        f"cluster up: {cluster.master_url}, {len(cluster.workers)} worker(s); state in "
        f"{directory / 'cluster.json'}"
    )
    term.print(
        f"use it: numaspark run WORKLOAD --cluster {directory} ...; stop it: numaspark "
        f"cluster down {directory}"
    )


@cluster_app.command("status")
def cluster_status(
    directory: Annotated[Path, typer.Argument(help="The cluster's directory.")],
    as_json: JsonOpt = False,
) -> None:
    """Show a running cluster and where each worker really runs.

    It is the master's view, and each worker's placement read back.

    \b
    Example:
      numaspark cluster status ./cluster
    """

    state = read_status(directory)
    table = views.yarn_table if state.get("kind") == "yarn-mini" else views.cluster_table
    term.json(state) if as_json else term.print(table(state))


@cluster_app.command("down")
def cluster_down(
    directory: Annotated[Path, typer.Argument(help="The cluster's directory.")],
) -> None:
    """Stop every process of the cluster, its executors too.

    \b
    Example:
      numaspark cluster down ./cluster
    """

    stopped = stop_cluster_dir(directory)
    term.print(f"stopped {len(stopped)} process(es) of the cluster in {directory}")


yarn_app = typer.Typer(
    help="A mini YARN on this machine to run --master yarn on.\n\nIt is a ResourceManager and NodeManagers (hadoop-client-minicluster).\n\n\b\nExample:\n  numaspark yarn up ./yarn --nodemanagers 2",
    rich_markup_mode=None,
)
app.add_typer(yarn_app, name="yarn")


@yarn_app.command("up")
def yarn_up(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Its directory (state, logs, conf/yarn-site.xml, the NodeManagers' work)."
        ),
    ],
    nodemanagers: Annotated[int, Opt(help="NodeManagers to start.")] = 1,
    nm_memory: Annotated[str, Opt(help="Memory each NodeManager offers containers.")] = "4g",
    nm_vcores: Annotated[int, Opt(help="Vcores each NodeManager offers.")] = 2,
    min_allocation: Annotated[
        str, Opt(help="The scheduler's minimum (and rounding) allocation.")
    ] = "128m",
    host: Annotated[
        str, Opt(help="Address the ResourceManager and NodeManagers listen on.")
    ] = "127.0.0.1",
    site: Annotated[
        Path | None,
        Opt(
            help="A yarn-site.xml fragment applied over the mini YARN's settings: what 'plan --target yarn --out DIR' writes (NUMA awareness; its NodeManager size wins)."
        ),
    ] = None,
) -> None:
    """Start a mini YARN and leave it running.

    It is hadoop-client-minicluster: a ResourceManager and NodeManagers. The last line
    it prints is the HADOOP_CONF_DIR to export for --master yarn.

    \b
    Example:
      numaspark yarn up ./yarn --nodemanagers 2
    """

    mib = 1 << 20
    cluster = start_kept_yarn(
        directory,
        nodemanagers,
        parse_size(nm_memory) // mib,
        nm_vcores,
        parse_size(min_allocation) // mib,
        host,
        term.say,
        site=site,
    )
    # unwrapped lines: the last one is for a shell (scripts/yarn-mini.sh, eval)
    term.lines(
        [
            f"mini YARN up: ResourceManager web app http://{host}:{cluster.master_webui}, "
            f"{nodemanagers} NodeManager(s); state in {cluster.directory / 'cluster.json'}",
            f"use it: numaspark run WORKLOAD --master yarn ...; stop it: numaspark yarn down "
            f"{directory}",
            f"export HADOOP_CONF_DIR={cluster.hadoop_conf_dir}",
        ]
    )


@yarn_app.command("status")
def yarn_status(
    directory: Annotated[Path, typer.Argument(help="The mini YARN's directory.")],
    as_json: JsonOpt = False,
) -> None:
    """Show a running mini YARN's NodeManagers.

    It is the ResourceManager's view.

    \b
    Example:
      numaspark yarn status ./yarn
    """

    cluster_status(directory, as_json)


@yarn_app.command("down")
def yarn_down(
    directory: Annotated[Path, typer.Argument(help="The mini YARN's directory.")],
) -> None:
    """Stop the mini YARN and any container it left.

    \b
    Example:
      numaspark yarn down ./yarn
    """

    cluster_down(directory)


# --- experiment -----------------------------------------------------------------------------


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
    done = long_work.run_experiment(term, experiment, topo, out, resume, data)
    long_work.show_study(
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


study_app = typer.Typer(
    help="Built-in studies, each a sweep that answers one question.\n\nThe studies are layouts, binding, scaling, executors, smt, affinity and cosched.\n\n\b\nExample:\n  numaspark study binding wordcount --size tiny",
    rich_markup_mode=None,
)
app.add_typer(study_app, name="study")


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
        done = long_work.run_experiment(term, experiment, topo, out, resume, data)
        medians = long_work.show_study(
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
    rows = long_work.run_cosched(
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

    It shows the topology, then runs two workloads (or your application) placed three
    ways, and ends with an HTML report.

    \b
    Example:
      numaspark characterize --repeat 1 --warmup 0
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.experiment.characterize import DEFAULT_WORKLOADS, experiment
    from numaspark.report.html import write_report

    check_repeat(repeat, warmup)
    chosen, venue = DEFAULT_WORKLOADS, on.venue()
    if workload is not None or application.app_args:
        workload_of = application.workload(workload)
        chosen, venue = (workload_of.name,), venue_of(on, workload_of)
    topo = planned_on(venue)
    term.print(views.topology_view(topo))
    planned = experiment(
        topo, chosen, size=size, repeat=repeat, warmup=warmup, cluster=not venue.here
    )
    done = long_work.run_experiment(
        term,
        at(planned, venue, topo),
        topo,
        out,
        resume,
        data,
    )
    failed = long_work.show_runs(
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


# --- measure --------------------------------------------------------------------------------


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
        term.json(summaries)
    else:
        for log, summary in zip(logs, summaries, strict=True):
            term.lines(views.log_lines(log, summary))
            term.warn(log.warnings)
    for line in write_log_tables(logs, tasks, stages):
        term.err.print(line)


@app.command()
def whatif(
    event_log: Annotated[
        Path, typer.Argument(help="An event log file or eventlog_v2_* directory.")
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

    The prediction replays its real task durations.

    \b
    Example:
      numaspark whatif numaspark-out/runs/*/eventlog/eventlog_v2_* --cores 1,2,4
    """
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.decide.whatif import TASK_COLUMNS, default_counts, measured_s, simulate
    from numaspark.metrics.eventlog import parse_event_log

    given = parse_counts(cores, "--cores") if cores is not None else None
    log = parse_event_log(event_log, tasks=TASK_COLUMNS)
    if not log.complete:
        raise UsageError(f"{event_log}: the application did not finish; what-if needs its end")
    counts, origin = (given, "--cores") if given else default_counts(log, event_log)
    predictions = [simulate(log, c) for c in counts]
    if as_json:
        term.json(
            {
                "event_log": str(event_log),
                "measured_s": measured_s(log),
                "counts_from": origin,
                "predictions": [p.__dict__ for p in predictions],
            }
        )
        return
    term.print(views.whatif_table(log.app_id, measured_s(log), predictions))
    term.print(
        f"core counts: {origin}; task durations are kept as measured: what changes with "
        "the core count (memory bandwidth, GC) is not simulated",
        highlight=False,
    )


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
    found = long_work.run_probes(term, commands)
    path = save_probe(found, topo)
    if as_json:
        term.json({**found, "saved": str(path)})
        return
    term.print(views.probe_table(found))
    term.print(f"saved: {path} (topology {topo.fingerprint})")


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check this machine for NUMA experiments.

    It checks the tools, perf events, kernel settings and limits.

    \b
    Example:
      numaspark doctor
    """

    results = run_checks()
    if as_json:
        term.json(
            {
                name: [{"level": m.level, "text": m.text} for m in messages]
                for name, messages in results
            }
        )
    else:
        term.print(views.doctor_table(results, __version__))


# --- decide and show ------------------------------------------------------------------------


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
    return long_work.counted(
        term,
        "reading event logs",
        lambda progress: history.read_logs(source, forced, in_progress, progress),
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
            term.json(scan.listing())
        else:
            term.print(views.applications_table(scan))
            term.lines([scan.tally()])
        _written(export_applications(scan.rows(), [csv, parquet]), as_json)
        return
    directory = Path(source)
    stored = retimed(ResultStore(directory).load(), time)
    refuse_mixed(stored, directory, mixed)
    if as_json:
        term.json({"source": source, "runs": results_rows(stored)})
    else:
        long_work.show_stored(term, stored)
    _written(export_results(stored, runs=[csv, parquet], configs=config_table), as_json)


def _written(lines: list[str], as_json: bool) -> None:
    """What an export wrote: on stdout, or on stderr beside JSON (which stdout holds alone)."""
    if not as_json:
        term.lines(lines)
        return
    for line in lines:
        term.err.print(line, markup=False, highlight=False, soft_wrap=True)


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
        term.json(records.dump(found))
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
        scan = long_work.counted(
            term,
            "reading event logs",
            lambda progress: history.scan_source(source, in_progress, progress),
        )
        show_many_logs(scan, as_json)
        return
    advices = rules.advise_source(Path(source), mixed)
    if as_json:
        term.json({"source": str(source), "advice": records.dump(advices)})
    else:
        term.lines(views.advice_lines(advices, show_all))


def show_many_logs(scan, as_json: bool) -> None:
    """``advise`` of many event logs (a `decide.history.Scan`): the table, or JSON."""
    term.warn(scan.all_warnings())
    if as_json:
        term.json(records.dump(scan))
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
            help="With --replay: what a column means, NAME=ROLE (repeatable), e.g. scaleout=workers, cpu_cores_per_node=cores_per_worker; roles: the prior's names (executors, cores_per_executor, slots, threads_per_core, binding, partitions, memory, ...) and their synonyms, or none (searched without a prior: also undoes a role read from the column's name).",
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
    space, found = _tuned(options, workload, venue, on.machine() if venue.here else None)
    if options.as_json:
        term.json(records.dump(found))
        return
    measured = options.minimize if options.replay else "median s"
    term.print(views.trials_table(found, space, measured))
    term.lines(views.trial_failures(found))
    term.print(f"stopped: {found.stopped}\n{found.prior}", highlight=False)
    if workload is not None:
        term.print(f"results: {(options.out / RESULTS_FILE).resolve()}")


def _tuned(
    options: TuneOptions, workload: str | None, venue: Venue, given: Topology | None
) -> tuple:
    """The search ``options`` ask for, over a --replay table or by real runs of ``workload``
    at ``venue``: its space and its result. ``given``: --xml's or --synthetic's machine,
    where it is not the cluster's (the venue holds that)."""
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.decide.tune import parse_columns, read_table, replay_objective
    from numaspark.decide.tune_runs import tune_machine

    replay, out = options.replay, options.out
    planned = None if replay is not None else planned_on(venue)
    machine = tune_machine(workload, replay, given, topology_of, planned)
    budget_time = options.budget_time
    search = dict(
        seed=options.seed,
        noise=options.noise,
        early_stop=options.early_stop,
        machine=machine,
        columns=parse_columns(options.column or []),
        time_budget_s=parse_duration(budget_time, "--budget-time") if budget_time else None,
    )
    if replay is not None:
        if options.resume:
            raise UsageError("--resume continues real runs stored in --out, not a --replay table")
        space, lookup = read_table(replay, options.minimize, skipped := [])
        term.warn(skipped)
        objective = replay_objective(lookup, space)
    else:
        space, objective, search["resumed"] = _live_search(options, workload, planned, venue)
    found = long_work.run_tuner(
        term,
        space,
        objective,
        options.budget,
        workload or replay.name,
        out if workload else None,
        **search,
    )
    return space, found


def _live_search(options: TuneOptions, workload: str, planned: Topology, venue: Venue) -> tuple:
    """Real runs of ``workload`` on ``planned`` (the machine of ``venue``): the
    space, the objective that runs a candidate, and an earlier tune's candidates (--resume)."""
    # lazy, as _tuned's: the tuner brings numpy and pandas, which other commands never load
    from numaspark.decide.tune_runs import (
        cluster_refusals,
        live_objective,
        live_space,
        resumed_trials,
    )

    check_repeat(options.repeat, options.warmup)
    # autonuma is one more binding where kernel.numa_balancing switches: here only
    cannot = balancing_refused(venue)
    if cannot is not None:
        term.note("not compared:", f"autonuma (the kernel's NUMA balancing): {cannot}")
    space, configs = live_space(
        planned,
        workload,
        options.size,
        params(options.param),
        conf_of(options.conf),
        autonuma=cannot is None,
        local=venue.here,
        refuses=cluster_refusals(venue),
        refused=(refused := []),
    )
    if refused:  # bounded by what the cluster holds now, as each run is checked before it starts
        term.note(
            "not proposed:",
            f"{len(refused)} configuration(s) the cluster cannot hold now, e.g. {refused[0]}",
        )
    resumed = resumed_trials(configs, options.out, options.resume)
    objective = live_objective(
        configs,
        planned,
        options.out,
        options.repeat,
        options.warmup,
        options.data,
        time=options.time,
        venue=venue,
    )
    return space, objective, resumed


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
        term.json(found)
        return
    for view in views.fit_views(table.name, found):
        term.print(view, highlight=False)


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
        applications, warnings = long_work.counted(
            term,
            "reading applications",
            lambda progress: read_applications(scan, MAX_APPLICATIONS, progress),
        )
        term.warn(scan.all_warnings() + warnings)
        written = write_log_report(scan, applications, warnings, output)
    term.print(f"report: {written.resolve()}", highlight=False)


# --- workloads --------------------------------------------------------------------------------


@app.command()
def workloads() -> None:
    """List the workloads numaspark can run.

    Each with its parameters and size profiles.

    \b
    Example:
      numaspark workloads
    """

    term.print(views.workloads_table(all_workloads()))


@app.command()
def datagen(
    workload: WorkloadArg,
    size: Annotated[
        str, Opt(help="The input size: tiny, small, large, huge, bytes (64MB) or rows.")
    ] = "tiny",
    data: DataOpt = None,
    seed: Annotated[int, Opt(help="Random seed of the generator.")] = 42,
) -> None:
    """Generate a workload's input ahead of time.

    Later runs that ask for the same input reuse it.

    \b
    Example:
      numaspark datagen wordcount --size small
    """

    path, manifest = generate(workload, size, seed, data)
    term.print(
        f"{workload} {manifest['size']}: {manifest['rows']:,} rows, {manifest['bytes']:,} "
        f"bytes in {path} (generated in {manifest['generation_s']} s, sha256 "
        f"{manifest['sha256'][:12]})"
    )


@app.command()
def version() -> None:
    """Print numaspark's version.

    \b
    Example:
      numaspark version
    """
    term.print(__version__)


def main() -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, no traceback."""
    sys.exit(term.main(app))


if __name__ == "__main__":
    main()
