"""Sharing one machine among several co-scheduled workloads: whole NUMA nodes, or cores."""

from __future__ import annotations

import itertools
from enum import Enum

from numaspark.errors import UsageError
from numaspark.topology import CpuSet, Topology


class Split(str, Enum):
    """How the machine is shared out: whole NUMA nodes, cores, or nodes when there are enough."""

    AUTO = "auto"
    NODES = "nodes"
    CORES = "cores"


def splits(topology: Topology, count: int, by: str = "auto") -> list[list[CpuSet]]:
    """CPU sets per workload: every way to give each of ``count`` workloads >= 1 node (or core)."""
    nodes = list(topology.cpu_nodes)
    use_nodes = by == "nodes" or (by == "auto" and len(nodes) >= count)
    if use_nodes:
        units = [topology.allowed_cpus_of(n) for n in nodes]
    else:
        units = [cpus for _, cpus in topology.allowed_cores()]
    if len(units) < count:
        raise UsageError(
            f"{count} workloads need at least {count} cores; this machine allows {len(units)}"
        )
    found = []
    for sizes in itertools.product(range(1, len(units) + 1), repeat=count):
        if sum(sizes) != len(units):
            continue
        start, parts = 0, []
        for size in sizes:
            parts.append(CpuSet.union(units[start : start + size]))
            start += size
        found.append(parts)
    return found
