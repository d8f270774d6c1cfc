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
    package_of_cpu = {cpu: i for i, (_, cpus) in enumerate(packages) for cpu in cpus}
    every = CpuSet(cpu for cpus in [*nodes_cpus.values(), *core_sets] for cpu in cpus)
    cores = tuple(
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
    in_order = [(core.logical_index, cpu) for core in cores for cpu in core.cpus]  # as hwloc's
    pus = tuple(
        Pu(os_index=cpu, logical_index=i, core=core, node=node_of_cpu.get(cpu), allowed=True)
        for i, (core, cpu) in enumerate(in_order)
    )
    order = sorted(nodes_cpus)
    distances = data.get("distances")
    matrix = (
        tuple(tuple(int(distances[str(a)][str(b)]) for b in order) for a in order)
        if distances
        else None
    )
    return Topology(
        source=f"{SOURCE_PREFIX}{host}",
        hostname=host,
        architecture=None,
        hwloc_version=None,
        packages=tuple(
            Package(
                os_index=p,
                logical_index=i,
                cpus=cpus,
                nodes=CpuSet(n for n, c in nodes_cpus.items() if c & cpus),
                cpu_model=None,
            )
            for i, (p, cpus) in enumerate(packages)
        ),
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
        pus=pus,
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
