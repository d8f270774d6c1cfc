"""See and place: the machine's topology, the plan of its JVMs, and the clusters kept up
across runs (a standalone cluster, a mini YARN)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

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
from numaspark.experiment.placing import plan_at, start_kept_cluster
from numaspark.experiment.venue import Venue
from numaspark.hosts import driver_address, plans_to_dict
from numaspark.placement import (
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
    planned = plan_at(venue, request, machine, term.say)
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
        placement, topo, where.mem_policy, options.plugin_jar, options.image, python_bytes
    )
    # the files are written before anything is printed: a bad --out is the only line shown
    written = write_files(out, platform_files(target, extra, out)) if out is not None else []
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
