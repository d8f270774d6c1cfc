"""The immutable `Topology` and its parts, as hwloc describes a machine.

Indexes: ``os_index`` is the P# the kernel uses (what numactl and taskset take);
``logical_index`` is hwloc's L#, the order of the object in the tree. They
differ on real servers (SMT siblings P#0 and P#12; NUMA node L#0 being P#1),
and everything that talks to the OS uses OS indexes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from numaspark import records
from numaspark.records import Shape
from numaspark.topology.cpuset import CpuSet

#: Version of a topology's JSON (each class's ``__json__``; docs/schemas.md). History:
#: 1 - first version (numaspark 0.1); ``devices`` added within version 1 (a record without
#: them has none known).
TOPOLOGY_SCHEMA = "numaspark.topology/1"

# a CPU or node set is stored in Linux's list format (0-3,8-11)
records.value_type(CpuSet, str, CpuSet.parse)


@dataclass(frozen=True)
class Pu:
    """A hardware thread (processing unit)."""

    os_index: int
    logical_index: int
    core: int  # logical index of its core
    node: int | None  # OS index of the NUMA node with CPUs it belongs to, if any
    allowed: bool  # in this process's allowed CPU set (cgroup/cpuset)
    # the other hardware threads of its core, filled in by its Topology (the JSON spells them
    # out for a reader; they are not read back)
    siblings: CpuSet = field(default_factory=CpuSet, compare=False, repr=False)

    __json__: ClassVar[Shape] = Shape(
        order=("logical_index", "os_index", "core", "node", "siblings", "allowed"),
        absent={"node": None},
    )


@dataclass(frozen=True)
class Core:
    """A physical core; its PUs are SMT siblings of each other."""

    logical_index: int
    os_index: int | None
    cpus: CpuSet  # OS indexes of its online PUs
    package: int | None  # logical index
    node: int | None  # OS index of its NUMA node with CPUs
    l3: int | None  # logical index of its L3 domain

    __json__: ClassVar[Shape] = Shape(
        order=("logical_index", "os_index", "cpus", "package", "node", "l3"),
        absent=dict.fromkeys(("package", "node", "l3")),
    )


@dataclass(frozen=True)
class NumaNode:
    """A NUMA node: memory, and the CPUs local to it (none for memory-only nodes)."""

    os_index: int
    logical_index: int
    memory: int | None  # bytes; None where the source does not say
    cpus: CpuSet  # CPUs local to this node; empty for a memory-only node
    subtype: str | None  # e.g. "MCDRAM" for high-bandwidth memory
    allowed: bool

    __json__: ClassVar[Shape] = Shape(
        keys={"memory": "memory_bytes"},
        computed=("has_cpus",),
        order=("logical_index", "os_index", "memory", "cpus", "has_cpus", "subtype", "allowed"),
        absent={"memory": None, "subtype": None},
    )

    @property
    def has_cpus(self) -> bool:
        return bool(self.cpus)


@dataclass(frozen=True)
class Package:
    os_index: int | None
    logical_index: int
    cpus: CpuSet
    nodes: CpuSet  # OS indexes of NUMA nodes inside or attached to it
    cpu_model: str | None

    __json__: ClassVar[Shape] = Shape(
        order=("logical_index", "os_index", "cpus", "nodes", "cpu_model"),
        absent={"cpu_model": None},
    )


@dataclass(frozen=True)
class CacheDomain:
    """A last-level (L3) cache and the CPUs that share it."""

    logical_index: int
    size: int | None  # bytes
    cpus: CpuSet

    __json__: ClassVar[Shape] = Shape(keys={"size": "size_bytes"}, absent={"size": None})


@dataclass(frozen=True)
class CgroupLimits:
    """Limits from the process's cgroup that are not CPU or node sets."""

    version: int  # 1 or 2
    path: str
    cpu_quota: float | None  # CPUs worth of time per period; None = unlimited
    memory_limit: int | None  # bytes; None = unlimited

    __json__: ClassVar[Shape] = Shape(
        keys={"memory_limit": "memory_limit_bytes"},
        absent={"cpu_quota": None, "memory_limit": None},
    )


@dataclass(frozen=True)
class Device:
    """A PCI device that matters to a Spark host (a GPU or other coprocessor, a network
    interface, an NVMe drive), counted once however many OS devices name it."""

    kind: str  # gpu, accelerator, nic, nvme or display (topology/devices.py: by PCI class)
    name: str  # the name shown: cudaN or nvmlN for a GPU, the network name of a NIC, ...
    pci_busid: str  # domain:bus:device.function, e.g. 0000:3b:00.0
    node: int | None  # OS index of the NUMA node it hangs off; None: none known
    pci_class: str  # four hex digits, e.g. 0302 (3D controller)
    pci_id: str  # vendor:device, e.g. 10de:1db8
    names: tuple[str, ...] = ()  # every OS device name of it (hwloc's, or the kernel's)
    index: int | None = None  # its NVML (else CUDA) index, where an OS device says

    __json__: ClassVar[Shape] = Shape(absent={"node": None, "pci_class": "", "pci_id": ""})


@dataclass(frozen=True)
class Topology:
    """A machine as hwloc sees it. Build it with :func:`numaspark.topology.load`."""

    source: str  # "this machine", "xml:PATH" or "synthetic:DESCRIPTION"
    hostname: str | None
    architecture: str | None
    hwloc_version: str | None
    packages: tuple[Package, ...]
    nodes: tuple[NumaNode, ...]  # logical order
    l3: tuple[CacheDomain, ...]
    cores: tuple[Core, ...]  # logical order
    pus: tuple[Pu, ...]  # logical order
    complete_cpus: CpuSet  # every CPU the machine has, offline ones included
    online_cpus: CpuSet  # CPUs present in the topology (online)
    allowed_cpus: CpuSet  # CPUs this process may use (cgroup cpuset, affinity)
    allowed_nodes: CpuSet  # NUMA nodes this process may allocate on
    distance_nodes: tuple[int, ...] = ()  # node OS indexes, in the order of `distances`
    distances: tuple[tuple[int, ...], ...] | None = None  # relative latency (10 = local)
    cgroup: CgroupLimits | None = None
    # PCI devices; not part of `structure()`: sources that see devices differently (hwloc with
    # its GPU libraries, sysfs) still agree on the machine, and older records stay comparable
    devices: tuple[Device, ...] = ()
    _pu_by_os: dict[int, Pu] = field(default_factory=dict, repr=False, compare=False)

    schema: ClassVar[str] = TOPOLOGY_SCHEMA
    # ``topology --json`` and a results directory's topology.json (docs/schemas.md): what a
    # reader wants first (the fingerprint, the counts), the CPU sets grouped
    __json__: ClassVar[Shape] = Shape(
        keys={
            **{"nodes": "numa_nodes", "l3": "l3_domains"},
            **{"complete_cpus": "cpus.complete", "online_cpus": "cpus.online"},
            **{"offline_cpus": "cpus.offline", "allowed_cpus": "cpus.allowed"},
            **{"distance_nodes": "distances.nodes", "distances": "distances.matrix"},
        },
        computed=("schema", "fingerprint", "cpu_model", "summary", "offline_cpus"),
        order=(
            *("schema", "source", "fingerprint", "hostname", "architecture", "cpu_model"),
            *("hwloc_version", "summary", "complete_cpus", "online_cpus", "offline_cpus"),
            *("allowed_cpus", "allowed_nodes", "packages", "nodes", "l3", "cores", "pus"),
            *("distance_nodes", "distances", "cgroup", "devices"),
        ),
        null_empty=("distances",),
        absent=dict.fromkeys(("hostname", "architecture", "hwloc_version")),
        schemas=(TOPOLOGY_SCHEMA,),
    )

    def __post_init__(self) -> None:
        pus = tuple(self._with_siblings(pu) for pu in self.pus)
        if any(new is not old for new, old in zip(pus, self.pus, strict=True)):
            object.__setattr__(self, "pus", pus)
        self._pu_by_os.update({pu.os_index: pu for pu in self.pus})

    def _with_siblings(self, pu: Pu) -> Pu:
        """``pu`` told its SMT siblings, once: a PU that has them (a copy of this topology, a
        stored one read back) keeps them."""
        cpus = self.cores[pu.core].cpus
        if pu.siblings or len(cpus) < 2:
            return pu
        return dataclasses.replace(pu, siblings=cpus - CpuSet([pu.os_index]))

    # --- lookups -------------------------------------------------------------
    def node(self, os_index: int) -> NumaNode:
        for node in self.nodes:
            if node.os_index == os_index:
                return node
        raise KeyError(os_index)

    def pu(self, os_index: int) -> Pu:
        return self._pu_by_os[os_index]

    def core_of(self, cpu: int) -> Core:
        return self.cores[self._pu_by_os[cpu].core]

    def siblings(self, cpu: int) -> CpuSet:
        """The other hardware threads on the same core as ``cpu``."""
        return self.core_of(cpu).cpus - CpuSet([cpu])

    def distance(self, a: int, b: int) -> int | None:
        if self.distances is None:
            return None
        order = self.distance_nodes
        if a not in order or b not in order:
            return None
        return self.distances[order.index(a)][order.index(b)]

    # --- derived sets --------------------------------------------------------
    @property
    def offline_cpus(self) -> CpuSet:
        """CPUs the machine has that are not in the topology (offline or not reported)."""
        return self.complete_cpus - self.online_cpus

    @property
    def smt(self) -> bool:
        return any(len(core.cpus) > 1 for core in self.cores)

    @cached_property
    def cpu_nodes(self) -> tuple[NumaNode, ...]:
        """Allowed NUMA nodes that have allowed CPUs: where executors can run."""
        return tuple(n for n in self.nodes if n.allowed and n.cpus & self.allowed_cpus)

    def allowed_cpus_of(self, node: NumaNode) -> CpuSet:
        return node.cpus & self.allowed_cpus

    def allowed_cores(self, node: NumaNode | None = None) -> tuple[tuple[Core, CpuSet], ...]:
        """Cores with at least one allowed PU (optionally within ``node``), with those PUs."""
        out = []
        for core in self.cores:
            if node is not None and core.node != node.os_index:
                continue
            cpus = core.cpus & self.allowed_cpus
            if cpus:
                out.append((core, cpus))
        return tuple(out)

    def devices_of(self, kind: str, node: int | None = None) -> tuple[Device, ...]:
        """Its devices of ``kind`` (optionally those on ``node``), in PCI bus order."""
        return tuple(d for d in self.devices if d.kind == kind and (node is None or d.node == node))

    @property
    def total_memory(self) -> int | None:
        if any(n.memory is None for n in self.nodes):
            return None
        return sum(n.memory or 0 for n in self.nodes)

    @property
    def cpu_model(self) -> str | None:
        return next((p.cpu_model for p in self.packages if p.cpu_model), None)

    # --- serialisation -------------------------------------------------------
    def structure(self) -> dict:
        """What identifies the hardware layout (not the host name or the source)."""
        return {
            "nodes": [[n.os_index, n.memory, str(n.cpus), n.subtype] for n in self.nodes],
            "cores": [[str(c.cpus), c.package, c.node] for c in self.cores],
            "allowed_cpus": str(self.allowed_cpus),
            "allowed_nodes": str(self.allowed_nodes),
            "distances": self.distances,
        }

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of :meth:`structure`: runs compare only when it matches."""
        blob = json.dumps(self.structure(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    @property
    def summary(self) -> dict:
        """The counts a reader of the JSON wants first, so it need not count the lists."""
        return {
            "packages": len(self.packages),
            "numa_nodes": len(self.nodes),
            "numa_nodes_with_cpus": sum(1 for n in self.nodes if n.has_cpus),
            "l3_domains": len(self.l3),
            "cores": len(self.cores),
            "pus": len(self.pus),
            "smt": self.smt,
            "memory_bytes": self.total_memory,
        }
