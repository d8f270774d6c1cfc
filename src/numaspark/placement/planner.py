"""Turn a `Layout` and a binding level into a `Placement` on a `Topology`.

Rules (each one tested in tests/test_planner.py):
- executors run only on allowed CPUs of allowed NUMA nodes that have CPUs;
- `node` binding keeps an executor inside one NUMA node whenever it fits in one,
  and spreads executors over nodes (the node with most free capacity first);
- `core` binding gives each executor whole physical cores (one task slot per
  core, its SMT siblings with it);
- `pu` binding gives each task slot one hardware thread, one per core before
  any SMT sibling unless `PuOrder.SIBLINGS_FIRST` is asked for;
- with threads per core (`Layout.threads_per_core`), a core- or pu-bound executor owns
  whole cores and runs on that many hardware threads of each (the lowest-numbered of the
  core's threads), so no two executors share a core; its task slots are cores x threads;
- with devices per executor (`Layout.resources`), each node runs the executors its devices
  give, each bound to that node and owning its devices (placement/devices.py);
- `auto` heap splits a node's memory, less a reserve for the OS and the
  driver, among its executors, less Spark's off-heap overhead, capped at 31g
  so compressed oops stay on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from numaspark.errors import PlacementError, UsageError
from numaspark.placement.devices import (
    NOUNS,
    RESOURCE_KINDS,
    asked,
    assign_devices,
    executors_by_node,
    unplanned_notes,
)
from numaspark.placement.model import (
    Binding,
    JvmPlacement,
    Layout,
    MemPolicy,
    Mode,
    Placement,
    PuOrder,
)
from numaspark.topology import CpuSet, NumaNode, Topology
from numaspark.units import GIB, MIB, human_size, jvm_size

# Above ~32 GB the JVM turns compressed ordinary object pointers off, and a
# 33 GB heap holds less than a 31 GB one.
MAX_COMPRESSED_OOPS_HEAP = 31 * GIB
SPARK_MIN_HEAP = 450 * MIB  # Spark refuses executors below 1.5 x 300 MB reserved memory
OS_RESERVE_SHARE = 0.10  # of each node's memory, kept for the OS and page cache
DEFAULT_HEAP = 1 * GIB  # Spark's default, used when node memory is unknown


def spark_overhead(heap: int) -> int:
    """Spark's default spark.executor.memoryOverhead: max(384 MiB, 10% of the heap)."""
    return max(384 * MIB, heap // 10)


def most_sharing(count: int, planned: int, at_most: int | None) -> int:
    """The most executors that share what ``count`` of the ``planned`` executors share (a
    node, a host) when up to ``at_most`` may run at once (dynamic allocation's maxExecutors;
    None or fewer: the plan's own): spread as the plan spreads them, rounded up."""
    if at_most is None or at_most <= planned or planned <= 0:
        return count
    return -(-count * at_most // planned)


@dataclass
class _Slot:
    """An executor's CPUs taken on one node."""

    node: int
    cpus: CpuSet
    units: int  # cores (core binding) or CPUs (other levels) taken


def plan(
    topology: Topology,
    layout: Layout,
    binding: Binding = Binding.NONE,
    mem_policy: MemPolicy | None = None,
    pu_order: PuOrder = PuOrder.CORES_FIRST,
    only_nodes: CpuSet | None = None,
    max_executors: int | None = None,
) -> Placement:
    """Place every JVM of ``layout`` on ``topology``; PlacementError when it cannot fit.

    ``only_nodes`` restricts executors to those NUMA nodes (OS indexes). ``max_executors``:
    the most that may run at once (dynamic allocation's maxExecutors): heaps are sized, and
    checked, for that many, spread as the plan spreads its own."""
    whole_machine = topology
    if only_nodes is not None:
        topology = _restrict(topology, only_nodes)
    nodes = topology.cpu_nodes
    if not nodes:
        raise PlacementError(
            f"no allowed NUMA node has allowed CPUs (allowed CPUs {topology.allowed_cpus or '-'}, "
            f"nodes {topology.allowed_nodes or '-'})"
        )
    _check_request(topology, layout, nodes)
    policy = _memory_policy(binding, mem_policy)
    per_core = _threads_per_core(topology, layout, binding)
    pools = _Pools(topology, binding, pu_order, whole_cores=per_core is not None)
    by_node = executors_by_node(topology, layout.resources) if layout.resources else None
    count, cores = _executor_shape(topology, layout, binding, pools, by_node)
    _check_slots_fit(topology, count, cores, pools)
    notes: list[str] = []
    homes = _homes(topology, layout, by_node)
    assignments = _assign(topology, binding, count, cores, pools, notes, homes)
    devices = [()] * count if by_node is None else assign_devices(topology, layout.resources, homes)
    if by_node is not None:
        notes.extend(unplanned_notes(topology, layout.resources, by_node))
    if per_core is not None:
        assignments = [
            [replace(s, cpus=_first_threads(topology, s.cpus, per_core)) for s in slots]
            for slots in assignments
        ]
        notes.append(_threads_note(topology, per_core))
    heaps = _heaps(topology, layout, binding, policy, assignments, notes, max_executors)
    jvms = _task_jvms(
        topology, layout, binding, policy, cores, per_core, assignments, heaps, devices, notes
    )
    if binding is Binding.NODE and layout.mode is not Mode.LOCAL:
        jvms = _node_processor_count(jvms, notes)
    if layout.mode is not Mode.LOCAL:
        jvms.insert(0, _driver(whole_machine, layout))
    return Placement(
        topology_source=topology.source,
        topology_fingerprint=whole_machine.fingerprint,
        layout=layout,
        binding=binding,
        mem_policy=policy,
        jvms=tuple(jvms),
        notes=tuple(dict.fromkeys(notes)),  # each note once, in order
    )


def _memory_policy(binding: Binding, asked: MemPolicy | None) -> MemPolicy | None:
    """The policy asked for; unbound JVMs keep the kernel's unless one is asked, bound ones
    default to bind."""
    if binding is Binding.NONE and asked is None:
        return None
    return asked or MemPolicy.BIND


def _check_slots_fit(topology: Topology, count: int, cores: int, pools: _Pools) -> None:
    """Refuse more task slots than the allowed CPUs (or cores) hold."""
    unit = pools.unit
    total = pools.total()
    if count * cores > total:
        raise PlacementError(
            f"{count} executor(s) x {cores} cores = {count * cores} task slots, but the machine "
            f"allows {total} {unit} ({topology.allowed_cpus}): use fewer executors or cores per executor"
        )


def _task_jvms(
    topology: Topology,
    layout: Layout,
    binding: Binding,
    policy: MemPolicy | None,
    cores: int,
    per_core: int | None,
    assignments: list[list[_Slot]],
    heaps: list[int],
    devices: list[tuple],
    notes: list[str],
) -> list[JvmPlacement]:
    """The JVMs that run tasks, one per assignment of CPUs: the executors, or local mode's
    one driver. ``cores`` per JVM (with threads per core: cores, each ``per_core`` slots)."""
    jvms: list[JvmPlacement] = []
    for index, (slots, heap) in enumerate(zip(assignments, heaps, strict=True)):
        cpus = CpuSet.union(s.cpus for s in slots)
        cpu_nodes = CpuSet(s.node for s in slots)
        mem_nodes = _mem_nodes(policy, cpu_nodes, topology)
        jvms.append(
            JvmPlacement(
                role="driver" if layout.mode is Mode.LOCAL else "executor",
                index=index,
                cores=cores * (per_core or 1),
                heap=heap,
                overhead=spark_overhead(heap),
                binding=binding,
                cpus=cpus,
                nodes=cpu_nodes,
                mem_policy=policy,
                mem_nodes=mem_nodes,
                java_options=_java_options(binding, cpu_nodes, policy, mem_nodes, topology, notes),
                slots=_task_slots(topology, cpus, binding, per_core),
                devices=devices[index],
            )
        )
    return jvms


def _node_processor_count(jvms: list[JvmPlacement], notes: list[str]) -> list[JvmPlacement]:
    """Node-bound executors that share a node: the JVM would size its GC and JIT threads for
    every CPU of the node it sees, so -XX:ActiveProcessorCount is the node's CPUs divided by
    the executors on it, never fewer than an executor's cores (one value for all: the least).
    Alone on its node an executor sees the node's CPUs, its due: nothing is set."""
    sharing: dict[int, int] = {}
    for jvm in jvms:
        for node in jvm.nodes:
            sharing[node] = sharing.get(node, 0) + 1
    if max(sharing.values(), default=1) < 2:
        return jvms
    count = min(max(j.cores, len(j.cpus) // max(sharing[n] for n in j.nodes)) for j in jvms)
    notes.append(
        f"-XX:ActiveProcessorCount={count}: executors share a node, and each would size its "
        "GC and JIT threads for the whole node"
    )
    option = f"-XX:ActiveProcessorCount={count}"
    return [replace(j, java_options=(*j.java_options, option)) for j in jvms]


def _restrict(topology: Topology, only_nodes: CpuSet) -> Topology:
    """The same machine with only ``only_nodes`` allowed."""
    usable = CpuSet(n.os_index for n in topology.cpu_nodes)
    for node in only_nodes:
        if node not in usable:
            raise PlacementError(
                f"NUMA node {node} cannot run executors: this machine's allowed nodes with CPUs "
                f"are {usable or '-'}"
            )
    cpus = CpuSet.union(topology.node(n).cpus for n in only_nodes)
    return replace(
        topology,
        allowed_nodes=topology.allowed_nodes & only_nodes,
        allowed_cpus=topology.allowed_cpus & cpus,
        _pu_by_os={},
    )


def _check_request(topology: Topology, layout: Layout, nodes: tuple[NumaNode, ...]) -> None:
    """Refuse what no placement can give: bad numbers, several JVMs in local mode, more
    driver cores than the machine allows."""
    _check_layout_numbers(layout)
    per_node = layout.executors_per_node
    if layout.mode is Mode.LOCAL and per_node is not None and per_node * len(nodes) != 1:
        raise UsageError(
            f"local mode runs one JVM, but --executors-per-node {per_node} on "
            f"{len(nodes)} node(s) asks for {per_node * len(nodes)}: give "
            "--mode standalone (or --master) for several executors"
        )
    allowed = len(topology.allowed_cpus)
    if layout.driver_cores > allowed:
        raise UsageError(
            f"--driver-cores {layout.driver_cores}: the machine allows {allowed} "
            f"CPUs ({topology.allowed_cpus}): give at most {allowed}"
        )


def _check_layout_numbers(layout: Layout) -> None:
    if layout.executors is not None and layout.executors_per_node is not None:
        raise UsageError("give either --executors or --executors-per-node, not both")
    for name, value in (
        ("--executors", layout.executors),
        ("--executors-per-node", layout.executors_per_node),
        ("--cores-per-executor", layout.cores_per_executor),
        ("--driver-cores", layout.driver_cores),
    ):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be at least 1, got {value}")
    if layout.mode is Mode.LOCAL and (layout.executors or 1) != 1:
        raise UsageError("local mode runs one JVM: use --executors 1 or --mode standalone")
    if layout.resources:
        option = asked(*layout.resources[0])
        if layout.mode is Mode.LOCAL:
            raise UsageError(f"{option} plans executors: give --mode standalone (or --master)")
        if layout.executors is not None or layout.executors_per_node is not None:
            raise UsageError(
                f"{option}: the devices on each node decide its executors: leave out "
                "--executors and --executors-per-node"
            )


def _threads_per_core(topology: Topology, layout: Layout, binding: Binding) -> int | None:
    """The layout's threads per core, checked against the machine; None where it changes
    nothing (not given, or a machine without SMT)."""
    per_core = layout.threads_per_core
    if per_core is None:
        return None
    width = max((len(cpus) for _, cpus in topology.allowed_cores()), default=1)
    if not 1 <= per_core <= width:
        raise UsageError(
            f"--threads-per-core {per_core}: this machine's cores have {width} "
            f"hardware thread(s) (numaspark topology): give 1 to {width}"
        )
    if width == 1:
        return None  # one thread per core is all there is: planned as before
    if binding not in (Binding.CORE, Binding.PU):
        raise UsageError(
            f"--threads-per-core {per_core} gives each executor whole cores and "
            f"{per_core} of their threads: give --bind core or --bind pu "
            f"(--bind {binding.value} leaves threads to the kernel)"
        )
    return per_core


def _first_threads(topology: Topology, cpus: CpuSet, per_core: int) -> CpuSet:
    """The lowest-numbered ``per_core`` hardware threads of each core in ``cpus``."""
    return CpuSet(cpu for core in topology.cores for cpu in (core.cpus & cpus).to_list()[:per_core])


def _threads_note(topology: Topology, per_core: int) -> str:
    width = max(len(cpus) for _, cpus in topology.allowed_cores())
    return (
        f"threads per core {per_core} of {width}: each executor owns whole cores and runs "
        f"on {per_core} of each core's hardware threads (the lowest-numbered)"
        + ("" if per_core == width else "; the others stay idle")
    )


def _task_slots(
    topology: Topology, cpus: CpuSet, binding: Binding, per_core: int | None
) -> tuple[CpuSet, ...]:
    """The affinity plugin's slots: at core level a task per core (with threads per core,
    that many tasks share each core's threads), at pu level the core groups the plugin
    splits into one hardware thread a task."""
    if binding not in (Binding.CORE, Binding.PU):
        return ()
    cores = _core_slots(topology, cpus)
    if binding is Binding.CORE and per_core:
        return tuple(core for core in cores for _ in range(per_core))
    return cores


def _core_slots(topology: Topology, cpus: CpuSet) -> tuple[CpuSet, ...]:
    """``cpus`` grouped by physical core, in core order: what each running task may be pinned
    to (the affinity plugin takes a whole core at core level, one thread of it at pu level)."""
    groups = [core.cpus & cpus for core in topology.cores]
    return tuple(g for g in groups if g)


class _Pools:
    """Free capacity per node, in the unit the binding hands out."""

    def __init__(
        self, topology: Topology, binding: Binding, pu_order: PuOrder, whole_cores: bool = False
    ) -> None:
        self.topology = topology
        self.binding = binding
        self.whole_cores = whole_cores or binding is Binding.CORE
        self.unit = "cores" if self.whole_cores else "CPUs"
        self.free: dict[int, list[CpuSet]] = {}
        for node in topology.cpu_nodes:
            if self.whole_cores:
                self.free[node.os_index] = [cpus for _, cpus in topology.allowed_cores(node)]
            else:
                self.free[node.os_index] = [
                    CpuSet([c]) for c in _ordered_pus(topology, node, pu_order)
                ]

    def total(self) -> int:
        return sum(len(v) for v in self.free.values())

    def capacity(self, node: int) -> int:
        return len(self.free[node])

    def take(self, node: int, units: int) -> _Slot:
        taken, self.free[node] = self.free[node][:units], self.free[node][units:]
        return _Slot(node, CpuSet.union(taken), units)


def _ordered_pus(topology: Topology, node: NumaNode, order: PuOrder) -> list[int]:
    cores = topology.allowed_cores(node)
    if order is PuOrder.SIBLINGS_FIRST:
        return [cpu for _, cpus in cores for cpu in cpus]
    by_rank: list[int] = []
    rank = 0
    while True:
        layer = [cpus.to_list()[rank] for _, cpus in cores if len(cpus) > rank]
        if not layer:
            return by_rank
        by_rank.extend(layer)
        rank += 1


def _executor_shape(
    topology: Topology,
    layout: Layout,
    binding: Binding,
    pools: _Pools,
    by_node: dict[int, int] | None = None,
) -> tuple[int, int]:
    """How many executors, and how many task slots each."""
    nodes = [n.os_index for n in topology.cpu_nodes]
    if by_node is not None:
        return _device_shape(layout, pools, by_node)
    total = pools.total()
    if layout.mode is Mode.LOCAL:
        count = 1
        default = max(pools.capacity(n) for n in nodes) if binding is Binding.NODE else total
        return count, layout.cores_per_executor or default
    if layout.executors is not None:
        count = layout.executors
        cores = layout.cores_per_executor or total // count
        if cores < 1:
            raise PlacementError(
                f"{count} executors need at least {count} CPUs, but the machine allows {total} "
                f"({topology.allowed_cpus}): use fewer executors"
            )
        return count, cores
    per_node = layout.executors_per_node or 1
    count = per_node * len(nodes)
    smallest = min(pools.capacity(n) for n in nodes)
    cores = layout.cores_per_executor or smallest // per_node
    if cores < 1:
        raise PlacementError(
            f"{per_node} executors per node need {per_node} CPUs per node, but the smallest node "
            f"allows {smallest}: use fewer executors per node"
        )
    return count, cores


def _device_shape(layout: Layout, pools: _Pools, by_node: dict[int, int]) -> tuple[int, int]:
    """Executors by their devices: as many as the nodes' devices give, each of the cores
    asked, else of the most cores every node has for each of its executors."""
    used = {n: k for n, k in by_node.items() if k}
    cores = layout.cores_per_executor or min(pools.capacity(n) // k for n, k in used.items())
    for node, executors in used.items():
        if pools.capacity(node) < executors * max(cores, 1):
            devices = ", ".join(f"{a} {NOUNS[RESOURCE_KINDS[r]]}" for r, a in layout.resources)
            raise PlacementError(
                f"node {node} allows {pools.capacity(node)} {pools.unit}, too few for the "
                f"{executors} executor(s) its devices ask for ({devices} each) x "
                f"{max(cores, 1)} cores: give each executor more devices"
                + (" or fewer cores" if layout.cores_per_executor else "")
            )
    return sum(used.values()), cores


def _homes(topology: Topology, layout: Layout, by_node: dict[int, int] | None) -> list[int] | None:
    """The node of each executor where the layout decides it (executors per node, or the
    devices on each node); None where the planner spreads them (freest node first)."""
    order = [n.os_index for n in topology.cpu_nodes]
    if by_node is not None:
        return [node for node in order for _ in range(by_node[node])]
    per_node = layout.executors_per_node if layout.mode is Mode.STANDALONE else None
    if per_node and layout.executors is None:
        return [node for node in order for _ in range(per_node)]
    return None


def _assign(
    topology: Topology,
    binding: Binding,
    count: int,
    cores: int,
    pools: _Pools,
    notes: list[str],
    homes: list[int] | None,
) -> list[list[_Slot]]:
    """The CPUs of each executor, node by node."""
    if binding is Binding.NONE:
        every = [_Slot(n.os_index, topology.allowed_cpus_of(n), 0) for n in topology.cpu_nodes]
        return [list(every) for _ in range(count)]
    order = [n.os_index for n in topology.cpu_nodes]
    assignments: list[list[_Slot]] = []
    for index in range(count):
        if homes is not None:
            home = homes[index]
            if pools.capacity(home) < cores:
                allows = len(
                    _Pools(topology, binding, PuOrder.CORES_FIRST, pools.whole_cores).free[home]
                )
                raise PlacementError(
                    f"node {home} allows {allows} {pools.unit}, too few for {homes.count(home)} "
                    f"executor(s) x {cores} cores: lower --cores-per-executor"
                )
            candidates = [home]
        else:
            candidates = sorted(order, key=lambda n: (-pools.capacity(n), order.index(n)))
        fits = [n for n in candidates if pools.capacity(n) >= cores]
        if fits:
            slot = pools.take(fits[0], cores)
            if binding is Binding.NODE:
                slot = _Slot(slot.node, topology.allowed_cpus_of(topology.node(slot.node)), cores)
            assignments.append([slot])
            continue
        assignments.append(_straddle(topology, binding, cores, pools, order))
        notes.append(
            f"executor {index} needs {cores} {pools.unit}, more than any one node has free: "
            "it spans several nodes (remote memory accesses are likely)"
        )
    return assignments


def _straddle(
    topology: Topology, binding: Binding, cores: int, pools: _Pools, order: list[int]
) -> list[_Slot]:
    """Take ``cores`` units from the freest node and then its nearest neighbours."""
    start = max(order, key=lambda n: (pools.capacity(n), -order.index(n)))

    def nearness(n: int) -> tuple[int, int]:
        return (topology.distance(start, n) or (0 if n == start else 20), order.index(n))

    slots: list[_Slot] = []
    needed = cores
    for node in sorted(order, key=nearness):
        if needed == 0:
            break
        take = min(needed, pools.capacity(node))
        if take:
            slot = pools.take(node, take)
            if binding is Binding.NODE:
                slot = _Slot(node, topology.allowed_cpus_of(topology.node(node)), take)
            slots.append(slot)
            needed -= take
    return slots


def _heaps(
    topology: Topology,
    layout: Layout,
    binding: Binding,
    policy: MemPolicy | None,
    assignments: list[list[_Slot]],
    notes: list[str],
    max_executors: int | None = None,
) -> list[int]:
    """Heap per executor, explicit (checked) or auto, for ``max_executors`` at once if more."""
    confined = binding is not Binding.NONE and policy is MemPolicy.BIND
    users = _node_users(binding, assignments)
    planned = len(assignments)
    if max_executors is not None and max_executors > planned:
        notes.append(
            f"dynamic allocation: heaps sized for up to {max_executors} executor(s) at once"
        )
    if layout.memory_per_executor is not None:
        heap = layout.memory_per_executor
        if heap < SPARK_MIN_HEAP:
            raise PlacementError(
                f"executor heap {jvm_size(heap)} is below Spark's minimum of 450m: "
                "give --memory-per-executor 450m or more"
            )
        _check_fits(topology, heap, confined, users, planned, max_executors)
        _note_compressed_oops(heap, notes)
        return [heap] * len(assignments)

    budgets = _node_budgets(topology, layout)
    if budgets is None:
        notes.append(
            f"node memory is unknown for this topology: heap set to Spark's default "
            f"{jvm_size(DEFAULT_HEAP)} (give --memory-per-executor to choose)"
        )
        return [DEFAULT_HEAP] * len(assignments)
    heaps = []
    for slots in assignments:
        share = sum(_share(budgets, s, users[s.node], planned, max_executors) for s in slots)
        heap = int(min(share / 1.1, share - 384 * MIB))
        heap = (heap // MIB) * MIB
        if heap > MAX_COMPRESSED_OOPS_HEAP:
            heap = MAX_COMPRESSED_OOPS_HEAP
            notes.append(
                "auto heap capped at 31g so the JVM keeps compressed oops "
                "(above ~32 GB every object reference doubles in size)"
            )
        if heap < SPARK_MIN_HEAP:
            raise PlacementError(
                f"auto heap would be {jvm_size(max(heap, 0))}, below Spark's minimum of 450m: "
                "use fewer executors per node or give --memory-per-executor"
            )
        heaps.append(heap)
    # One spark.executor.memory serves every executor: the smallest share fits them all.
    heaps = [min(heaps)] * len(heaps)
    notes.append(
        f"auto heap: each node's memory less {OS_RESERVE_SHARE:.0%} for the OS"
        + ("" if layout.mode is Mode.LOCAL else " and a share of the driver's")
        + ", split among its executors, less Spark's off-heap overhead (max(384m, 10%))"
    )
    return heaps


def _share(
    budgets: dict[int, float], slot: _Slot, sharing: list[_Slot], planned: int, most: int | None
) -> float:
    """An executor's memory on ``slot``'s node: its weight of the node's budget, less as the
    node's executors grow from the planned to the most that may run (maxExecutors)."""
    more = most_sharing(len(sharing), planned, most) / len(sharing)
    return budgets[slot.node] * _weight(slot, sharing) / more


def _node_users(binding: Binding, assignments: list[list[_Slot]]) -> dict[int, list[_Slot]]:
    users: dict[int, list[_Slot]] = {}
    for slots in assignments:
        for slot in slots:
            users.setdefault(slot.node, []).append(slot)
    return users


def _weight(slot: _Slot, sharing: list[_Slot]) -> float:
    """This executor's share of a node's memory: by units taken, or equal when unbound."""
    units = sum(s.units for s in sharing)
    return slot.units / units if units else 1 / len(sharing)


def _node_budgets(topology: Topology, layout: Layout) -> dict[int, float] | None:
    nodes = topology.cpu_nodes
    if any(n.memory is None for n in nodes):
        return None
    memory = {n.os_index: float(n.memory or 0) for n in nodes}
    whole = sum(memory.values())
    driver = (
        0
        if layout.mode is Mode.LOCAL
        else layout.driver_memory + spark_overhead(layout.driver_memory)
    )
    # The driver runs unbound: charge it to the nodes in proportion to their memory.
    return {n: m * (1 - OS_RESERVE_SHARE) - driver * m / whole for n, m in memory.items()}


def _check_fits(
    topology: Topology,
    heap: int,
    confined: bool,
    users: dict[int, list[_Slot]],
    count: int,
    max_executors: int | None = None,
) -> None:
    need = heap + spark_overhead(heap)
    if confined:
        for node_index, sharing in users.items():
            memory = topology.node(node_index).memory
            if memory is None:
                continue
            executors = most_sharing(len(sharing), count, max_executors)
            if executors * need > memory:
                raise PlacementError(
                    f"{executors} executor(s) on node {node_index} need {human_size(executors * need)} "
                    f"({jvm_size(heap)} heap + {jvm_size(spark_overhead(heap))} overhead each), "
                    f"but node {node_index} has {human_size(memory)}: lower --memory-per-executor"
                )
        return
    memory = topology.total_memory
    count = max(count, max_executors or 0)
    if memory is not None and count * need > memory:
        raise PlacementError(
            f"{count} executor(s) need {human_size(count * need)} ({jvm_size(heap)} heap + overhead "
            f"each), but the machine has {human_size(memory)}: lower --memory-per-executor"
        )


def _note_compressed_oops(heap: int, notes: list[str]) -> None:
    if heap > MAX_COMPRESSED_OOPS_HEAP:
        notes.append(
            f"heap {jvm_size(heap)} is above 31g: the JVM turns compressed oops off, so the "
            "heap holds less than a 31g one; prefer more, smaller executors"
        )


def _mem_nodes(policy: MemPolicy | None, cpu_nodes: CpuSet, topology: Topology) -> CpuSet:
    if policy is None or policy is MemPolicy.LOCAL:
        return CpuSet()
    if policy is MemPolicy.PREFERRED:
        return CpuSet([cpu_nodes.first()])
    return cpu_nodes & topology.allowed_nodes


def _java_options(
    binding: Binding,
    cpu_nodes: CpuSet,
    policy: MemPolicy | None,
    mem_nodes: CpuSet,
    topology: Topology,
    notes: list[str],
) -> tuple[str, ...]:
    """-XX:+UseNUMA where it takes effect: the JVM switches it off when its memory is bound to
    one node, and when the nodes of its memory mask are not those of its CPUs (JDK-8205051).
    The mask is the policy's nodes under membind or interleave, else every node the process
    may allocate on; an unbound JVM's CPUs are on every node with allowed CPUs."""
    if binding is Binding.NONE:
        cpu_nodes = CpuSet(
            n.os_index for n in topology.cpu_nodes if not n.cpus.isdisjoint(topology.allowed_cpus)
        )
    bound = policy in (MemPolicy.BIND, MemPolicy.INTERLEAVE) and len(mem_nodes)
    mask = mem_nodes if bound else topology.allowed_nodes
    if len(cpu_nodes) > 1 and cpu_nodes == mask:
        notes.append(
            "-XX:+UseNUMA for JVMs whose CPUs and memory span the same several nodes: G1 and "
            "Parallel GC then keep each thread's young objects on its own node"
        )
        return ("-XX:+UseNUMA",)
    return ()


def _driver(topology: Topology, layout: Layout) -> JvmPlacement:
    """The driver of a standalone app: unbound, it runs no tasks."""
    nodes = CpuSet(n.os_index for n in topology.cpu_nodes)
    return JvmPlacement(
        role="driver",
        index=0,
        cores=layout.driver_cores,
        heap=layout.driver_memory,
        overhead=spark_overhead(layout.driver_memory),
        binding=Binding.NONE,
        cpus=topology.allowed_cpus,
        nodes=nodes,
        mem_policy=None,
        mem_nodes=CpuSet(),
        runs_tasks=False,
    )


def memory_on(placement: Placement, nodes: CpuSet, topology: Topology | None = None) -> Placement:
    """The same CPUs, memory bound to ``nodes`` (remote-memory experiments: CPUs on node i,
    memory on node j); with ``topology``, the nodes must be ones this process may use."""
    if topology is not None and (not nodes or not nodes.issubset(topology.allowed_nodes)):
        raise UsageError(
            f"--mem-nodes {nodes or '(none)'}: this machine's allowed NUMA nodes "
            f"are {topology.allowed_nodes} (numaspark topology)"
        )
    # -XX:+UseNUMA stays only where the memory's nodes are still the CPUs' (JDK-8205051)
    jvms = tuple(
        replace(
            j,
            mem_policy=MemPolicy.BIND,
            mem_nodes=nodes,
            java_options=tuple(
                o for o in j.java_options if o != "-XX:+UseNUMA" or nodes == j.nodes
            ),
        )
        if j.runs_tasks
        else j
        for j in placement.jvms
    )
    return replace(placement, jvms=jvms, mem_policy=MemPolicy.BIND)
