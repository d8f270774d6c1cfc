"""A host's topology as the affinity plugin reported it from inside an executor (the first
placement report's ``host_topology``, read from that host's sysfs): the same `Topology`
as hwloc gives here, for hosts of a cluster numaspark did not start and cannot read.

The plugin reports NUMA nodes with their CPUs and memory, cores (SMT siblings together),
packages and the distance matrix; not caches, CPU models or offline CPUs, so those are
left empty or unknown (``l3`` is empty, ``cpu_model`` None).
"""

from __future__ import annotations

from numaspark.topology.cpuset import CpuSet
from numaspark.topology.model import Core, NumaNode, Package, Pu, Topology

SOURCE_PREFIX = "plugin:"  # a learned topology's source: "plugin:HOST"


def from_report(host: str, data: dict) -> Topology:
    """``host``'s topology from a report's ``host_topology``. Raises ValueError (or KeyError,
    TypeError) when ``data`` is not one."""
    nodes_cpus = {int(n): CpuSet.parse(c) for n, c in data["nodes"].items()}
    if not nodes_cpus:
        raise ValueError("host_topology lists no NUMA node")
    memory = {int(n): int(b) for n, b in (data.get("node_memory_bytes") or {}).items()}
    node_of_cpu = {cpu: n for n, cpus in nodes_cpus.items() for cpu in cpus}
    core_sets = sorted((CpuSet.parse(c) for c in data["cores"]), key=lambda c: c.first())
    packages = sorted((int(p), CpuSet.parse(c)) for p, c in (data.get("packages") or {}).items())
    every = CpuSet(cpu for cpus in [*nodes_cpus.values(), *core_sets] for cpu in cpus)
    cores = _cores(core_sets, packages, node_of_cpu)
    order = sorted(nodes_cpus)
    matrix = _distance_matrix(data.get("distances"), order)
    return Topology(
        source=f"{SOURCE_PREFIX}{host}",
        hostname=host,
        architecture=None,
        hwloc_version=None,
        packages=_packages(packages, nodes_cpus),
        nodes=tuple(
            NumaNode(
                os_index=n,
                logical_index=i,
                memory=memory.get(n),
                cpus=nodes_cpus[n],
                subtype=None,
                allowed=True,
            )
            for i, n in enumerate(order)
        ),
        l3=(),
        cores=cores,
        pus=_pus(cores, node_of_cpu),
        complete_cpus=every,
        online_cpus=every,
        # every CPU and node of the host, not the executor's allowed ones: a container's
        # cpuset narrows what one executor may use, while the plan is for the host, as hwloc's
        # --disallowed gives it here
        allowed_cpus=every,
        allowed_nodes=CpuSet(order),
        distance_nodes=tuple(order) if matrix else (),
        distances=matrix,
    )


def _cores(
    core_sets: list[CpuSet], packages: list[tuple[int, CpuSet]], node_of_cpu: dict[int, int]
) -> tuple[Core, ...]:
    """The cores by their first CPU (the plugin reports no core numbers: ``os_index`` None)."""
    package_of_cpu = {cpu: i for i, (_, cpus) in enumerate(packages) for cpu in cpus}
    return tuple(
        Core(
            logical_index=i,
            os_index=None,
            cpus=cpus,
            package=package_of_cpu.get(cpus.first()),
            node=node_of_cpu.get(cpus.first()),
            l3=None,
        )
        for i, cpus in enumerate(core_sets)
    )


def _pus(cores: tuple[Core, ...], node_of_cpu: dict[int, int]) -> tuple[Pu, ...]:
    """The hardware threads, numbered core by core as hwloc numbers them."""
    in_order = [(core.logical_index, cpu) for core in cores for cpu in core.cpus]
    return tuple(
        Pu(os_index=cpu, logical_index=i, core=core, node=node_of_cpu.get(cpu), allowed=True)
        for i, (core, cpu) in enumerate(in_order)
    )


def _packages(
    packages: list[tuple[int, CpuSet]], nodes_cpus: dict[int, CpuSet]
) -> tuple[Package, ...]:
    return tuple(
        Package(
            os_index=p,
            logical_index=i,
            cpus=cpus,
            nodes=CpuSet(n for n, c in nodes_cpus.items() if c & cpus),
            cpu_model=None,
        )
        for i, (p, cpus) in enumerate(packages)
    )


def _distance_matrix(
    distances: dict | None, order: list[int]
) -> tuple[tuple[int, ...], ...] | None:
    """The reported distances (node to node to distance, keyed by strings) as a matrix in
    the nodes' order; None where the plugin reported none."""
    if not distances:
        return None
    return tuple(tuple(int(distances[str(a)][str(b)]) for b in order) for a in order)
