"""See and place: the machine's topology, the plan of its JVMs, and the clusters kept up
across runs (a standalone cluster, a mini YARN)."""

from __future__ import annotations

import dataclasses
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from numaspark import records
from numaspark.cli.app import app, cluster_app, term, yarn_app
from numaspark.cli.option_group import Opt, option_group, options_of
from numaspark.cli.options import (
    ClusterOptions,
    HostOpt,
    HostsFileOpt,
    HostsOpt,
    JsonOpt,
    SyntheticOpt,
    XmlOpt,
    topology_of,
)
from numaspark.cli.placement_options import PlacementOptions, with_placement
from numaspark.errors import UsageError
from numaspark.experiment.placing import plan_at, plan_driver, start_kept_cluster
from numaspark.experiment.venue import Venue
from numaspark.hosts import driver_address, plans_to_dict
from numaspark.placement import (
    MemPolicy,
    Mode,
    Placement,
    Platform,
    placement_to_dict,
    platform_files,
    write_files,
)
from numaspark.report import console as views
from numaspark.spark.kept_clusters import cluster_status as read_status
from numaspark.spark.kept_clusters import start_kept_yarn, stop_cluster_dir
from numaspark.units import parse_size


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


class DeployMode(str, Enum):
    """Where spark-submit runs the driver of the application a plan at --master is for."""

    CLIENT = "client"  # where spark-submit runs: the workers keep every core
    CLUSTER = "cluster"  # on a standalone worker, or in YARN's application master


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
    master: Annotated[
        str | None,
        Opt(
            help="Plan for a cluster numaspark did not start (spark://HOST:PORT, yarn, k8s://URL): sized for what its manager says its hosts have, with --xml or --synthetic as their topology."
        ),
    ] = None
    master_ui: Annotated[
        str | None, Opt(help="With --master spark://: its web UI (default: port 8080 on its host).")
    ] = None
    deploy_mode: Annotated[
        DeployMode | None,
        Opt(
            help="With --master spark:// or yarn: where spark-submit will run the driver. cluster: the plan leaves a worker (YARN: the application master) the driver's --driver-cores and --driver-memory; client: the executors get every core. Default: cluster with --target standalone or yarn, whose files then serve either; client otherwise, as run plans."
        ),
    ] = None
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

    def venue(self) -> Venue:
        """Where the plan is for: this machine (or --xml's, --synthetic's), --hosts, or the
        cluster at --master (--xml, --synthetic: its hosts' topology)."""
        cluster = self.master is not None or self.hosts is not None or self.hosts_file
        given = {"xml": self.xml, "synthetic": self.synthetic} if cluster else {}
        return ClusterOptions(
            master=self.master,
            master_ui=self.master_ui,
            hosts=self.hosts,
            hosts_file=self.hosts_file,
            **given,
        ).venue()

    def driver(self, venue: Venue) -> tuple[int, int] | None:
        """The driver's cores and MB the plan leaves on the cluster at ``venue`` (None: none):
        unless --deploy-mode says, room for either where plan writes a manager's files
        (standalone, yarn), none as ``run`` plans a client-mode driver (--target spark)."""
        if self.deploy_mode is None and self.target is Platform.SPARK:
            return None
        mode = self.deploy_mode.value if self.deploy_mode is not None else None
        return plan_driver(
            venue, mode, self.driver_cores, parse_size(self.driver_memory, "--driver-memory")
        )

    def sized(self) -> dict:
        """The driver's size, as `PlacementOptions.place` takes it (the devices each executor
        owns are placement options: `PlacementOptions.resources`)."""
        return {"driver_cores": self.driver_cores, "driver_memory": self.driver_memory}


# plan's own options, handed to it as one ``options: PlanOptions`` (before the placement's)
with_plan_options = option_group("options", options_of(PlanOptions), PlanOptions)


@app.command("plan")
@with_placement
@with_plan_options
def plan_command(where: PlacementOptions, options: PlanOptions) -> None:
    """Place executors here, on --hosts or at --master.

    Each JVM gets its CPUs, nodes, heap and numactl prefix; with --hosts, from each
    host's own topology; with --master, from what the cluster's manager says it has. With --gpus-per-executor, the GPUs on each node decide its
    executors, and each executor owns GPUs of its own node.

    \b
    Example:
      numaspark plan --executors-per-node 1 --bind node
    """
    python_bytes = options.python_bytes()
    venue = options.venue()
    request = where.request(options.mode, **options.sized()).at(venue)
    machine = topology_of(options.xml, options.synthetic) if venue.here else None
    driver = options.driver(venue)
    planned = plan_at(venue, request, machine, term.say, driver)
    if planned.hosts:  # the driver stays here; executors go to the hosts
        driver = driver_address(venue.inventory)
        return (
            term.json(plans_to_dict(list(planned.hosts), driver))
            if options.as_json
            else term.print(views.hosts_view(list(planned.hosts), driver))
        )
    placement, topo = planned.placement, planned.topology
    target, out = options.target, options.out
    extra = target.settings(
        placement,
        topo,
        where.mem_policy,
        options.plugin_jar,
        options.image,
        python_bytes,
        driver=driver is not None,
    )
    # --out with --target spark: platform_files's one line (no manager's files to write)
    shown = target is not Platform.SPARK or out is not None
    files = platform_files(target, extra, out) if shown else {}
    # the files are written before anything is printed: a bad --out is the only line shown
    written = write_files(out, files) if out is not None else []
    if options.as_json:
        term.json({**placement_to_dict(placement), **({target.value: extra} if extra else {})})
    elif target is Platform.SPARK:
        term.print(views.placement_view(placement))
    else:
        _show_target(placement, target, extra, where.mem_policy)
        _show_files(files, out)
    for path in written:
        term.note("wrote", str(path), colour="green")


def _show_target(
    placement: Placement, target: Platform, extra: dict, asked: MemPolicy | None
) -> None:
    """The placement as ``target``'s realisers apply it, one table for each way it offers
    (``extra``: its settings), and the plan's notes."""
    for way in target.applied(placement, extra, asked):
        # the heading on a line of its own: a table's title would be folded at its width
        term.print(
            Text.assemble(
                (f"Placement by {way.who}", "bold"),
                f": {len(way.rows)} executor(s), bind {placement.binding.value}, "
                f"memory {way.memory}",
            ),
            soft_wrap=True,
        )
        table = Table()
        for column in ("JVM", "node(s)", "CPUs", "slots", "heap", "applied"):
            table.add_column(column, no_wrap=column in ("JVM", "heap"))
        for row in way.rows:
            table.add_row(*(Text(cell) for cell in row))
        term.print(table)
    if placement.notes:
        notes = "\n".join(f"note: {n}" for n in placement.notes)
        term.print(Text(notes, style="yellow"))


def _show_files(files: dict[str, str], out: Path | None) -> None:
    """Each file the plan writes (--out) or would write, whole, under a ``==> NAME <==``
    line: what is printed is what is written."""
    for name, text in files.items():
        where = str(out / name) if out is not None else f"{name} (written with --out DIR)"
        term.print(Text(f"\n==> {where} <=="), soft_wrap=True)
        term.print(Text(text.removesuffix("\n")), soft_wrap=True)


@cluster_app.command("up")
@with_placement
def cluster_up(
    where: PlacementOptions,
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

    venue = ClusterOptions(hosts=hosts, hosts_file=hosts_file).venue()
    request = where.request(Mode.STANDALONE).at(venue)
    cluster = start_kept_cluster(venue, request, directory, host, term.say)
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
