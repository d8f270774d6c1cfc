"""Reaching a venue (experiment/venue.py): the machine runs are planned on there, a request's
placement there, what a cluster refuses now, and the target that runs an application there.

This is the one module that decides which machine a run is planned for:

- this machine: its own topology (numaspark starts every JVM here, numactl places them);
- hosts over SSH: each host's own topology read with hwloc over SSH (the first host's is
  the one an experiment is planned on);
- a cluster at an address: what its manager says it has (a standalone master's workers,
  YARN's running NodeManagers, Kubernetes nodes' topology as given; spark/managers.py),
  never this machine's, and the plugin binds each executor from inside.

`Targets` keeps one runner's targets, so that a cluster numaspark started serves every run
whose placement has its shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from numaspark.errors import ClusterRefusal, UsageError
from numaspark.experiment.request import RunRequest, dynamic_allocation, plan_request
from numaspark.experiment.target import (
    ExternalTarget,
    HostsTarget,
    Target,
    read_hosts_balancing,
)
from numaspark.experiment.venue import ClusterAt, SshHosts, Venue
from numaspark.hosts import driver_address, merge, plan_hosts, read_topology
from numaspark.placement import Binding, MemPolicy, Mode, Placement, bound_from_inside
from numaspark.placement.cluster_capacity import ClusterCapacity
from numaspark.placement.devices import refuse_missing_here
from numaspark.placement.plugin import PLACEMENT_FILE
from numaspark.placement.render import executors_per_node, pinned_from_inside
from numaspark.spark.home import LOOPBACK
from numaspark.spark.learned_topology import cluster_name, learn
from numaspark.spark.managers import read_cluster
from numaspark.spark.standalone import Cluster
from numaspark.supervise.balancing import why_not
from numaspark.supervise.processes import ProcessTracker, supervised
from numaspark.topology import Topology, load_machine
from numaspark.units import MIB, parse_size
from numaspark.workloads import get_workload
from numaspark.workloads.application import DEPLOY_MODE_KEY

Say = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


# --- the machine an experiment is planned on ------------------------------------------------


def planned_topology(venue: Venue, say: Say = _quiet) -> tuple[Topology, str | None]:
    """The machine an experiment at ``venue`` is planned on, and a line that says what it is
    (None: this machine, which needs no line)."""
    if isinstance(venue, ClusterAt):
        has = read_cluster(venue.master, ui=venue.ui, given=venue.node_topology, say=say)
        topology, given = has.topology(), venue.node_topology
        said = f"planned on {venue.master}: {has.describe()}"
        if given is not None and has.fitting is not None:  # k8s: the nodes are the given
            said += (
                f"; its hosts' NUMA topology as given ({len(given.cpu_nodes)} node(s), "
                f"{len(given.allowed_cpus)} CPUs)"
            )
        return topology, said
    if isinstance(venue, SshHosts):
        hosts = venue.hosts.hosts
        topology = read_topology(hosts[0])
        return topology, (
            f"planned on {hosts[0].name}'s topology ({len(topology.cpu_nodes)} NUMA node(s), "
            f"{len(topology.allowed_cpus)} CPUs), the first of {len(hosts)} host(s)"
        )
    return load_machine(), None


def balancing_refused(venue: Venue) -> str | None:
    """Why the kernel's NUMA balancing cannot be switched per configuration at ``venue``
    (None: it can: this machine, as root)."""
    return why_not() if venue.here else venue.realiser.balancing


def balancing_as_found(venue: Venue) -> str | None:
    """The kernel's NUMA balancing on each host numaspark reaches over SSH, as one line for a
    study whose unbound configurations run with it as found; None elsewhere (this machine
    switches it; a cluster's hosts cannot be read)."""
    if isinstance(venue, SshHosts):
        return read_hosts_balancing(venue.hosts)
    return None


# --- what a cluster refuses, and a request's placement there ---------------------------------


def refusals(venue: Venue, request_of: Callable) -> Callable | None:
    """Why ``venue`` cannot hold a candidate now (None: it can), from what its manager says
    it has, read once; ``request_of(candidate)`` is the request the candidate runs as. None
    where no manager says it (this machine; hosts numaspark starts its workers on)."""
    if not isinstance(venue, ClusterAt):
        return None
    return refusals_on(
        read_cluster(venue.master, ui=venue.ui, given=venue.node_topology), request_of
    )


def refusals_on(has: ClusterCapacity, request_of: Callable) -> Callable:
    """Why the cluster ``has`` describes cannot hold a candidate: the runner's own check
    before each run (`placed_on`), so a candidate it would refuse is never proposed."""

    def refuses(candidate) -> str | None:
        try:
            placed_on(has, request_of(candidate))
        except ClusterRefusal as exc:
            return str(exc)
        return None

    return refuses


def placed_on(has: ClusterCapacity, request: RunRequest) -> Placement:
    """``request`` planned on the cluster ``has`` describes (its memory policy as the plugin
    realises it); ClusterRefusal when the cluster cannot hold it now. With dynamic
    allocation the cluster may run maxExecutors executors at once: their heaps must fit."""
    request = policy_from_inside(request)
    at_most = _at_most(request)
    return has.place(
        lambda topology: plan_request(topology, request, at_most),
        request.layout.memory_per_executor,
        at_most,
    )


def _at_most(request: RunRequest) -> int | None:
    """maxExecutors, where the request turns dynamic allocation on and bounds it."""
    dynamic = dynamic_allocation(request)
    return dynamic.maximum if dynamic is not None else None


def policy_from_inside(request: RunRequest) -> RunRequest:
    """``request`` on a cluster numaspark did not start, where the plugin binds from inside:
    a memory policy only with --bind node, and not local (the plugin moves an executor's
    memory with preferred, bind or interleave); preferred unless another is given."""
    if request.mem_policy is not None and request.binding is not Binding.NODE:
        raise UsageError(
            "--mem-policy on a cluster numaspark did not start goes with "
            "--bind node (the plugin binds each executor from inside)"
        )
    if request.mem_policy is MemPolicy.LOCAL:
        raise UsageError(
            "--mem-policy local: the plugin moves an executor's memory to its "
            "node with preferred (the default), bind or interleave"
        )
    if request.binding is Binding.NODE and request.mem_policy is None:
        return dataclasses.replace(request, mem_policy=MemPolicy.PREFERRED)
    return request


def cluster_mode_driver(request: RunRequest) -> tuple[int, int] | None:
    """The cores and MB a driver in cluster deploy mode takes of a standalone worker or in
    YARN's application master (its spark.driver.cores and spark.driver.memory, Spark's
    defaults 1 and 1g; on Kubernetes its pod, which the scheduler may put beside the
    executors' pods); None when the request's driver runs here."""
    if not isinstance(request.venue, ClusterAt):
        return None
    application = get_workload(request.workload).application
    conf = application.conf() if application is not None else {}
    if conf.get(DEPLOY_MODE_KEY) != "cluster":
        return None
    cores = int(conf.get("spark.driver.cores") or 1)
    memory = conf.get("spark.driver.memory") or "1g"
    return cores, parse_size(memory if memory[-1].isalpha() else memory + "m", "driver") // MIB


def plan_driver(
    venue: Venue, deploy_mode: str | None, cores: int, memory: int
) -> tuple[int, int] | None:
    """The cores and MB of a driver ``numaspark plan`` leaves room for on the cluster at
    ``venue`` (``memory`` in bytes): the files it writes serve whichever spark-submit a user
    runs, and in cluster deploy mode a standalone master runs the driver on a worker, YARN in
    the application master's container, Kubernetes in a pod of its own beside the executors'.
    Unless ``deploy_mode`` is client, a plan at a standalone master or on YARN keeps that
    room, on Kubernetes only when it is cluster; None where the driver takes nothing of the
    executors' hosts (client mode; here; hosts over SSH)."""
    if deploy_mode is not None and not isinstance(venue, ClusterAt):
        raise UsageError(
            f"--deploy-mode {deploy_mode}: a driver runs on the cluster only at --master "
            "spark://HOST:PORT, yarn or k8s://URL"
        )
    if deploy_mode == "client" or not isinstance(venue, ClusterAt):
        return None
    if venue.master.startswith("k8s://") and deploy_mode != "cluster":
        return None  # numaspark's runs there are client mode's unless told
    return cores, memory // MIB


# --- the target a request runs on -------------------------------------------------------------


@dataclass(frozen=True)
class PlacedRequest:
    """A request's target and its placement there, and the machines it was planned on (by
    host name; None: this machine), which the run loop saves beside the results."""

    target: Target
    placement: Placement
    machines: tuple[tuple[Topology, str | None], ...]


class Targets:
    """The targets one runner keeps: local mode and a standalone cluster here (``made``,
    from the runner's factory), a cluster on each set of hosts, one per cluster address.
    Each is made when a run first needs it and kept for the next run that goes there."""

    def __init__(self, tracker: ProcessTracker, root: Path, made: dict) -> None:
        self.tracker = tracker
        self.root = root  # where the clusters numaspark starts keep their state and logs
        self._made = made

    def here(self, mode: Mode) -> Target:
        if mode is Mode.LOCAL:  # a cluster left idle would share the CPUs a local run is bound to
            self._made[Mode.STANDALONE].close()
        return self._made[mode]

    def on_hosts(self, inventory) -> HostsTarget:
        key = ("hosts", inventory)
        if key not in self._made:
            self._made[key] = HostsTarget(self.tracker, self.root, inventory)
        return self._made[key]

    def at(self, venue: ClusterAt, has: ClusterCapacity) -> ExternalTarget:
        key = ("master", venue.master, venue.executor_wait_s, venue.driver_host)
        if key not in self._made:
            self._made[key] = ExternalTarget(
                self.tracker,
                venue.master,
                venue.executor_wait_s,
                has.describe() if has.fitting is not None else None,
                has.ui,
                driver_host=venue.driver_host,
            )
        return self._made[key]

    def close(self) -> None:
        for target in self._made.values():
            target.close()


def place(
    request: RunRequest, targets: Targets, here: Topology, say: Say = _quiet, warn: Say = _quiet
) -> PlacedRequest:
    """Where ``request`` runs and its placement there: planned on this machine (``here``),
    on each host over SSH, or on what a cluster at an address has now."""
    venue = request.venue
    if isinstance(venue, SshHosts):
        target = targets.on_hosts(venue.inventory)
        placement = target.plan(lambda topology: plan_request(topology, request))
        _say_own_workers(request, placement, say)
        found = tuple((p.topology, p.host.name) for p in target.plans)
        return PlacedRequest(target, placement, ((here, None), *found))
    if isinstance(venue, ClusterAt):
        target, placement = _place_at(venue, request, targets, say, warn)
        return PlacedRequest(target, placement, ((here, None),))
    # the JVMs start here: a device kind asked for must be here (one line: plan --xml)
    refuse_missing_here(here, request.layout.resources)
    placement = plan_request(here, request)
    _say_own_workers(request, placement, say)
    return PlacedRequest(targets.here(request.layout.mode), placement, ((here, None),))


def _say_own_workers(request: RunRequest, placement: Placement, say: Say) -> None:
    """Dynamic allocation on a cluster numaspark starts: one worker per planned executor,
    so the planned count is the most that run at once, whatever maxExecutors says."""
    dynamic = dynamic_allocation(request)
    planned = len(placement.executors)
    if dynamic is None or request.layout.mode is Mode.LOCAL:
        return
    if dynamic.maximum is None or dynamic.maximum > planned:
        say(
            f"dynamic allocation on numaspark's cluster: one bound worker per planned "
            f"executor, so at most {planned} run at once (maxExecutors "
            f"{dynamic.maximum if dynamic.maximum is not None else 'unset'})"
        )


def _place_at(
    venue: ClusterAt, request: RunRequest, targets: Targets, say: Say, warn: Say
) -> tuple[Target, Placement]:
    """A cluster numaspark did not start: the request's placement there, and the target that
    sends it there."""
    placement, has = placement_at(venue, request, cluster_mode_driver(request), say, warn)
    return targets.at(venue, has), placement


def placement_at(
    venue: ClusterAt,
    request: RunRequest,
    driver: tuple[int, int] | None = None,
    say: Say = _quiet,
    warn: Say = _quiet,
    driver_note: str | None = None,
) -> tuple[Placement, ClusterCapacity]:
    """``request`` planned for the cluster at ``venue`` (a standalone master's workers; YARN's
    running NodeManagers; Kubernetes nodes' topology as given), less ``driver``'s cores and MB
    where the driver runs there (cluster deploy mode); at --bind node the plugin binds each
    executor to a node from inside. What the cluster has now, with it. ``driver_note``: the
    driver's line goes into the placement's notes, with these words after it, instead of
    being said (``plan``, whose notes are its output)."""
    request = policy_from_inside(request)
    has = read_cluster(
        venue.master,
        ui=venue.ui,
        given=venue.node_topology,
        layout=request.layout,
        binding=request.binding,
        warn=warn,
        say=say,
    )
    notes = []
    if driver is not None:
        has = has.with_driver(*driver)
        left = (
            f"cluster deploy mode: {driver[0]} core(s) and {driver[1]} MB of a "
            f"{has.fitting.host if has.fitting else 'host'} are left to the driver"
        )
        if driver_note is None:
            say(left)
        else:
            notes.append(f"{left} {driver_note}")
    placement = placed_on(has, request)
    cores = max(e.cores for e in placement.executors)
    notes += [has.learned] if has.learned else []
    if has.learned:
        say(has.learned)
    wide = has.span_note(cores, request.binding is Binding.NODE)
    if wide is not None:
        notes.append(wide)
        say(f"note: {wide}")
    placement = dataclasses.replace(placement, notes=(*placement.notes, *notes))
    at_most = _at_most(request)
    if request.binding is Binding.NODE:
        per_host = max(executors_per_node(placement, at_most).values(), default=1)
        placement = bound_from_inside(
            placement,
            slice_known=has.numa_known(),
            slice_cpus=has.slice_cpus(cores, per_host),
            at_most=at_most,
        )
    elif request.binding in (Binding.CORE, Binding.PU):
        placement = pinned_from_inside(placement)
    return placement, has


@dataclass(frozen=True)
class PlannedAt:
    """A plan made for a venue without running anything (``numaspark plan``): the placement,
    the machine it was planned on (this one or a saved one; the first host's; a cluster's as
    its manager says it), and on hosts over SSH each host's own plan."""

    placement: Placement
    topology: Topology
    hosts: tuple = ()


def plan_at(
    venue: Venue,
    request: RunRequest,
    machine: Topology,
    say: Say = _quiet,
    driver: tuple[int, int] | None = None,
) -> PlannedAt:
    """``request`` planned for ``venue``: on ``machine`` here (this machine, or a saved
    server's), on each host over SSH from its own topology, or on what a cluster at an address
    has now (``plan --master``: sized for its workers, not for the machine ``plan`` runs on),
    less ``driver``'s cores and MB where a driver in cluster deploy mode may run there
    (`plan_driver`), said in the plan's notes."""
    if isinstance(venue, ClusterAt):
        placement, has = placement_at(
            venue,
            request,
            driver,
            say=say,
            warn=say,
            driver_note=(
                "(in case spark-submit runs it there: --deploy-mode cluster; "
                "plan --deploy-mode client plans without it)"
            ),
        )
        return PlannedAt(placement, has.topology())
    if isinstance(venue, SshHosts):
        plans = plan_hosts(venue.inventory, lambda host, topology: plan_request(topology, request))
        return PlannedAt(merge(plans), plans[0].topology, tuple(plans))
    return PlannedAt(plan_request(machine, request), machine)


def start_kept_cluster(
    venue: Venue, request: RunRequest, directory: Path, host: str = LOOPBACK, say: Say = _quiet
) -> Cluster:
    """``numaspark cluster up``: a cluster that outlives this process, planned for ``venue``
    (here, where the devices asked for must be; or on each host over SSH) and listening on
    ``host`` here. A cluster that fails half-way is stopped whole; once up, ``numaspark cluster
    down`` stops it."""
    if isinstance(venue, ClusterAt):
        raise UsageError(f"{venue.master} is a cluster numaspark did not start: it keeps no other")
    here = load_machine()
    if venue.here:
        refuse_missing_here(here, request.layout.resources)
    planned = plan_at(venue, request, here, say)
    with supervised() as tracker:
        if planned.hosts:
            cluster = Cluster.start(
                [(p.host, p.placement) for p in planned.hosts],
                planned.placement,
                directory,
                tracker,
                driver_address=driver_address(venue.inventory),
                encrypt=venue.inventory.encrypt,
                kept=True,
                on_progress=say,
            )
        else:
            cluster = Cluster.here(
                planned.placement, directory, tracker, host=host, kept=True, on_progress=say
            )
        tracker.release_all()
    return cluster


def after_run(venue: Venue, run_dir: Path, say: Say = _quiet, warn: Say = _quiet) -> None:
    """What a run teaches about its venue: on a cluster at an address, the host topologies
    the plugin reported, kept for the cluster's next plan (each new or changed host said)."""
    if not isinstance(venue, ClusterAt):
        return
    cluster = cluster_name(venue.master)
    for host in learn(cluster, run_dir / PLACEMENT_FILE, warn):
        topology = host.topology
        say(
            f"learned {host.host}'s topology from the plugin's report: "
            f"{len(topology.nodes)} NUMA node(s), {len(topology.online_cpus)} CPUs; the "
            f"next plan of {cluster} uses it"
        )
