"""What a cluster has, for every kind numaspark plans for: one type, `ClusterCapacity`.

A cluster is its address (a standalone master's URL, YARN's ResourceManager, a Kubernetes
API server, an inventory of hosts over SSH), and its hosts: each with the cores and memory
free for executors, and its NUMA topology where something says it (``Source``): given on the
command line (``--xml``/``--synthetic``), learned from the affinity plugin's report of an
earlier run (spark/learned_topology.py), read with hwloc over SSH (hosts/), or only the cores and
memory its manager lists (a standalone worker or a YARN node never says its NUMA nodes).

Who reads it: spark/standalone_master.py (a master's ``/json/``), spark/yarn.py (the RM's REST API),
spark/managers.py (which of those, and what was learned; Kubernetes), hosts/ (SSH). Who plans
with it: the run loop (experiment/runner.py) calls `ClusterCapacity.place` for a cluster numaspark
did not start, whatever its kind; the rules by which a manager fits an executor on a host
(``Fitting``: a standalone worker counts the heap alone; YARN a container of heap and
overhead rounded up to its minimum allocation, beside the application master's) live here,
once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import Enum

from numaspark.errors import ClusterRefusal, PlacementError, UsageError
from numaspark.placement.model import Placement
from numaspark.placement.planner import MAX_COMPRESSED_OOPS_HEAP, SPARK_MIN_HEAP, spark_overhead
from numaspark.placement.render import inside_slice_cpus
from numaspark.topology import Topology, load_synthetic
from numaspark.units import MIB

YARN_OVERHEAD_MIN_MB = 384  # Spark's executor overhead: max(384 MiB, 10%)


class Source(str, Enum):
    """Where a host's topology came from."""

    MANAGER = "manager"  # none: the cores and memory its manager lists
    GIVEN = "given"  # --xml / --synthetic
    LEARNED = "learned"  # the plugin's report from an earlier run
    READ = "read"  # hwloc on the host, over SSH


@dataclass(frozen=True)
class HostHas:
    """One host of a cluster: what is free on it for executors, and its NUMA topology when
    something says it (``None``: its manager's cores and memory only)."""

    name: str
    cores: int | None = None  # free now (None: not said: a Kubernetes node as given)
    memory_mb: int | None = None  # free now, likewise
    topology: Topology | None = None
    source: Source = Source.MANAGER


@dataclass(frozen=True)
class Fitting:
    """How a cluster's manager puts an executor on a host, and the words for it."""

    cluster: str  # "the cluster", "the YARN cluster"
    host: str  # "worker", "node"
    listed: str  # "alive worker(s)", "running node(s)"
    cores: str = "cores"  # "vcores" on YARN
    heap_from: str = "the cluster"  # the heap note's "heap from ..."
    container_rounding_mb: int = 0  # YARN's minimum allocation; 0: the heap alone (standalone)
    maximum_mb: int | None = None  # the largest container (YARN's maximum allocation)
    maximum_cores: int | None = None  # the most cores of one container
    reserved_mb: int = 0  # YARN's application master's container, on the host with most memory

    def container_mb(self, heap_mb: int) -> int:
        """What an executor of ``heap_mb`` takes of a host's memory."""
        if not self.container_rounding_mb:
            return heap_mb
        return container_mb(heap_mb, self.container_rounding_mb)


def container_mb(heap_mb: int, minimum_mb: int) -> int:
    """The container YARN grants an executor of ``heap_mb``: heap plus Spark's overhead,
    rounded up to a multiple of the minimum allocation."""
    asked = heap_mb + spark_overhead(heap_mb * MIB) // MIB
    return -(-asked // max(1, minimum_mb)) * max(1, minimum_mb)


def largest_heap_mb(container: int, minimum_mb: int) -> int:
    """The largest heap whose container fits in ``container`` MB (0 when none does)."""
    if container - YARN_OVERHEAD_MIN_MB < 3840:
        heap = container - YARN_OVERHEAD_MIN_MB
    else:
        heap = int(container / 1.1)
    while heap > 0 and container_mb(heap, minimum_mb) > container:
        heap -= 1
    return max(0, heap)


def room_for(free: list[tuple[int, int]], cores: int, memory_mb: int) -> int:
    """How many executors of ``cores`` and ``memory_mb`` the machines with ``free`` (cores,
    MB) hold, none split across two (a standalone worker's or a YARN node's)."""
    return sum(max(0, min(c // max(1, cores), m // max(1, memory_mb))) for c, m in free)


@dataclass(frozen=True)
class ClusterCapacity:
    """What one cluster has: its ``kind`` (standalone, yarn, k8s, hosts), ``address``, hosts,
    and the rules its manager fits executors by (``fitting``; None where the plan is made on
    a host's own topology: Kubernetes nodes, hosts over SSH). ``learned``: the line that says
    which topologies were learned, and when, if any were."""

    kind: str
    address: str
    hosts: tuple[HostHas, ...]
    fitting: Fitting | None = None
    learned: str | None = None
    ui: str | None = None  # a standalone master's web UI: its workers, their room, their logs

    def __post_init__(self) -> None:
        if not self.hosts or (self.fitting is not None and not self.listed()):
            raise ValueError(
                f"{self.address}: a cluster has at least one host (listed, where "
                "its manager lists them)"
            )

    def with_driver(self, cores: int, memory_mb: int) -> ClusterCapacity:
        """The cluster less a driver in cluster deploy mode: YARN runs it in the application
        master's container (its heap and overhead, rounded up: the AM this plan reserves); a
        standalone master runs it on a worker, whose cores and memory it takes (on the one
        with most memory: the master's choice is its own, so the plan leaves that room where
        it is likeliest)."""
        fitting, listed = self.fitting, self.listed()
        if fitting is not None and fitting.container_rounding_mb:
            am = container_mb(memory_mb, fitting.container_rounding_mb)
            return replace(self, fitting=replace(fitting, reserved_mb=am))
        if not listed:
            return self
        host = max(listed, key=lambda h: (h.memory_mb or 0, h.cores or 0))
        less = replace(
            host,
            cores=max(0, (host.cores or 0) - cores),
            memory_mb=max(0, (host.memory_mb or 0) - memory_mb),
        )
        return replace(self, hosts=tuple(less if h is host else h for h in self.hosts))

    # --- what is known -----------------------------------------------------------------

    def host(self, name: str) -> HostHas | None:
        return next((h for h in self.hosts if h.name == name), None)

    def listed(self) -> tuple[HostHas, ...]:
        """The hosts its manager lists now, with their free cores and memory."""
        return tuple(h for h in self.hosts if h.cores is not None)

    def topologies(self, *sources: Source) -> list[Topology]:
        """The NUMA topologies of its hosts (from ``sources`` only, when given)."""
        return [
            h.topology
            for h in self.hosts
            if h.topology is not None and (not sources or h.source in sources)
        ]

    def numa_known(self) -> bool:
        """Whether a host's NUMA topology is known (given, learned or read), not only cores."""
        return bool(self.topologies(Source.GIVEN, Source.LEARNED, Source.READ))

    def with_topologies(
        self, topologies: Iterable[tuple[str, Topology]], source: Source, said: str | None = None
    ) -> ClusterCapacity:
        """Its hosts with these (name, topology) pairs: a listed host of that name gets its
        own; the others are kept beside the listed ones (a manager lists a worker by the
        address it was started on, the plugin names the host by its hostname)."""
        known = dict(topologies)
        hosts = [
            replace(h, topology=known.pop(h.name), source=source) if h.name in known else h
            for h in self.hosts
        ]
        hosts += [HostHas(name, topology=t, source=source) for name, t in sorted(known.items())]
        if self.fitting is None:  # planned on a host's own topology: those without none
            hosts = [h for h in hosts if h.topology is not None] or hosts
        return replace(self, hosts=tuple(hosts), learned=said or self.learned)

    def describe(self) -> str:
        if self.fitting is None:
            return ", ".join(f"{h.name}: {_numa(h.topology)}" for h in self.hosts)
        listed = self.listed()
        cores = sum(h.cores or 0 for h in listed)
        memory = sum(h.memory_mb or 0 for h in listed)
        return (
            f"{len(listed)} {self.fitting.listed}, {cores} {self.fitting.cores} and "
            f"{memory} MB free"
        )

    # --- planning ----------------------------------------------------------------------

    def topology(self) -> Topology:
        """The machine a plan is made on: a host's own topology where the plan is made on it
        (the largest known); else the listed hosts with the most free cores as one machine
        whose NUMA nodes are those hosts, each of their cores (at most one container's): the
        manager spreads executors over its hosts, so two one-core workers hold two executors;
        smaller hosts are left out of the plan, and `check_fits` checks each host's own room.
        The memory is the cluster's to share out (`place`)."""
        if self.fitting is None:
            known = self.topologies()
            if not known:
                raise UsageError(f"{self.address}: the topology of the cluster's hosts is unknown")
            return max(known, key=lambda t: len(t.online_cpus))
        most = max(h.cores or 0 for h in self.listed())
        cores = max(1, most)
        if self.fitting.maximum_cores is not None:
            cores = max(1, min(cores, self.fitting.maximum_cores))
        largest = sum(1 for h in self.listed() if (h.cores or 0) == most)
        return load_synthetic(f"package:{largest} numa:1 core:{cores} pu:1")

    def place(
        self,
        plan: Callable[[Topology], Placement],
        asked_heap: int | None,
        at_most: int | None = None,
    ) -> Placement:
        """``plan`` on `topology`; on a cluster whose manager lists its hosts' room, the heap
        (when not asked for) the most that every host holds for the executors its manager
        spreads onto it, then `check_fits`. ``at_most``: the most executors that may run at
        once when that is more than planned (dynamic allocation's maxExecutors): the heap is
        sized, and the room checked, for that many."""
        fitting = self.fitting
        if fitting is None:
            return plan(self.topology())
        try:
            placement = plan(self.topology())
        except (PlacementError, UsageError) as exc:
            raise ClusterRefusal(
                f"planned on the {fitting.host}s of {fitting.cluster} at "
                f"{self.address} ({self.describe()}): {exc}"
            ) from None
        if asked_heap is None:
            placement = self._sized(placement, at_most)
        self.check_fits(placement, at_most)
        return placement

    def _sized(self, placement: Placement, at_most: int | None = None) -> Placement:
        fitting = self.fitting
        executors = placement.executors
        listed = self.listed()
        count = max(len(executors), at_most or 0)
        per_host = -(-count // len(listed))  # the manager spreads them
        memory = sorted(h.memory_mb or 0 for h in listed)
        memory[-1] -= fitting.reserved_mb  # the application master, on the host with most
        budget = min(memory) // per_host
        if fitting.maximum_mb is not None:
            budget = min(budget, fitting.maximum_mb)
        heap_mb = (
            largest_heap_mb(budget, fitting.container_rounding_mb)
            if fitting.container_rounding_mb
            else budget
        )
        heap = min(heap_mb * MIB, MAX_COMPRESSED_OOPS_HEAP)
        if heap < SPARK_MIN_HEAP:
            beside = (
                " (after Spark's overhead and the application master's container)"
                if fitting.reserved_mb
                else ""
            )
            raise ClusterRefusal(
                f"{fitting.cluster} at {self.address} has {self.describe()}: "
                f"{per_host} executor(s) on a {fitting.host} would get "
                f"{heap // MIB} MB heap each{beside}, below Spark's minimum of "
                "450 MB: give fewer --executors"
                + (
                    " or a lower spark.dynamicAllocation.maxExecutors"
                    if count > len(executors)
                    else ""
                )
            )
        jvms = tuple(
            replace(j, heap=heap, overhead=spark_overhead(heap)) if j.runs_tasks else j
            for j in placement.jvms
        )
        notes = tuple(n for n in placement.notes if not n.startswith("node memory is unknown"))
        if fitting.container_rounding_mb:
            note = (
                f"heap from {fitting.heap_from}: {heap // MIB} MB, so that {per_host} "
                f"executor container(s) of {fitting.container_mb(heap // MIB)} MB fit on "
                f"its smallest {fitting.host} beside the application master"
            )
        else:
            note = (
                f"heap from {fitting.heap_from}: {heap // MIB} MB, the free memory of its "
                f"smallest {fitting.host} shared by the {per_host} executor(s) the master "
                "puts on it"
            )
        return replace(placement, jvms=jvms, notes=(*notes, note))

    def check_fits(self, placement: Placement, at_most: int | None = None) -> None:
        """Refuse, in one line naming what is missing, a placement whose executors (and YARN's
        application master) the listed hosts cannot hold now: ``at_most`` of them where that
        is more than planned (dynamic allocation's maxExecutors)."""
        fitting = self.fitting
        if fitting is None:
            return
        planned = placement.executors
        executors = [planned[0]] * max(len(planned), at_most or 0)
        cores = max(e.cores for e in planned)
        heap_mb = max(e.heap for e in planned) // MIB
        taken = fitting.container_mb(heap_mb)
        if fitting.container_rounding_mb:
            what = (
                f"{len(executors)} executor container(s) of {cores} vcore(s) and {taken} MB "
                f"({heap_mb} MB heap + overhead)"
            )
            too_big = fitting.maximum_mb is not None and taken > fitting.maximum_mb
            if too_big or (fitting.maximum_cores is not None and cores > fitting.maximum_cores):
                raise ClusterRefusal(
                    f"{fitting.cluster} at {self.address} grants at most "
                    f"{fitting.maximum_mb} MB and {fitting.maximum_cores} vcore(s) "
                    f"per container, not {what.split(' of ', 1)[1]}: give less "
                    "--memory-per-executor or --cores-per-executor"
                )
        else:
            what = f"{len(executors)} executor(s) of {cores} core(s) and {heap_mb} MB heap"
        # the application master first, on the host with the most memory (its memory only: it
        # only asks for executors, and the capacity scheduler's default calculator counts no
        # vcores); then the executors
        free = sorted(([h.memory_mb or 0, h.cores or 0] for h in self.listed()), reverse=True)
        free[0][0] -= fitting.reserved_mb
        room = room_for([(c, m) for m, c in free], cores, taken)
        if room >= len(executors):
            return
        have = ", ".join(
            f"{h.name}: {h.cores} {fitting.cores}, {h.memory_mb} MB free" for h in self.listed()
        )
        beside = (
            f" beside the application master's {fitting.reserved_mb} MB"
            if fitting.reserved_mb
            else ""
        )
        raise ClusterRefusal(
            f"{fitting.cluster} at {self.address} cannot hold {what}{beside} (room "
            f"for {room}; its {fitting.listed.split(' ', 1)[0]} "
            f"{fitting.host}s: {have}): give fewer --executors, "
            "--cores-per-executor or --memory-per-executor"
            + (
                ", or a lower spark.dynamicAllocation.maxExecutors"
                if len(executors) > len(planned)
                else ""
            )
        )

    def slice_cpus(self, cores: int, per_host: int = 1) -> int | None:
        """-XX:ActiveProcessorCount of an executor of ``cores`` bound from inside on the hosts
        whose topology is known, ``per_host`` executors sharing a host: its node slice's CPUs
        divided by those that may share it (None: the plan is made on such a host itself,
        or none is)."""
        known = self.topologies(Source.LEARNED, Source.READ)
        if not known or self.fitting is None:
            return None
        return inside_slice_cpus(known, cores, per_host)

    def span_note(self, cores: int, bound: bool) -> str | None:
        """Executors wider than the largest NUMA node of the known hosts, in words."""
        known = self.topologies(Source.LEARNED, Source.READ)
        if not known or self.fitting is None:
            return None
        largest = max(len(n.cpus) for host in known for n in host.cpu_nodes)
        if cores <= largest:
            return None
        how = (
            "the plugin binds each to the fewest nodes that hold them, nearest first"
            if bound
            else "each spans nodes"
        )
        return (
            f"{cores} cores per executor are more than the largest NUMA node of the "
            f"cluster's hosts has ({largest} CPUs): {how}"
        )


def _numa(topology: Topology | None) -> str:
    if topology is None:
        return "topology unknown"
    return f"{len(topology.nodes)} NUMA node(s), {len(topology.online_cpus)} CPUs"
