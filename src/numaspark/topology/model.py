"""The immutable `Topology` and its parts, as hwloc describes a machine.

Indexes: ``os_index`` is the P# the kernel uses (what numactl and taskset take);
``logical_index`` is hwloc's L#, the order of the object in the tree. They
differ on real servers (SMT siblings P#0 and P#12; NUMA node L#0 being P#1),
and everything that talks to the OS uses OS indexes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property

from numaspark.topology.cpuset import CpuSet

#: Version of the JSON written by :meth:`Topology.to_dict`. History:
#: 1 - first version (numaspark 0.1); ``devices`` added within version 1 (a record without
#: them has none known).
TOPOLOGY_SCHEMA = "numaspark.topology/1"


@dataclass(frozen=True)
class Pu:
    """A hardware thread (processing unit)."""

    os_index: int
    logical_index: int
    core: int  # logical index of its core
    node: int | None  # OS index of the NUMA node with CPUs it belongs to, if any
    allowed: bool  # in this process's allowed CPU set (cgroup/cpuset)


@dataclass(frozen=True)
class Core:
    """A physical core; its PUs are SMT siblings of each other."""

    logical_index: int
    os_index: int | None
    cpus: CpuSet  # OS indexes of its online PUs
    package: int | None  # logical index
    node: int | None  # OS index of its NUMA node with CPUs
    l3: int | None  # logical index of its L3 domain


@dataclass(frozen=True)
class NumaNode:
    """A NUMA node: memory, and the CPUs local to it (none for memory-only nodes)."""

    os_index: int
    logical_index: int
    memory: int | None  # bytes; None where the source does not say
    cpus: CpuSet  # CPUs local to this node; empty for a memory-only node
    subtype: str | None  # e.g. "MCDRAM" for high-bandwidth memory
    allowed: bool

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


@dataclass(frozen=True)
class CacheDomain:
    """A last-level (L3) cache and the CPUs that share it."""

    logical_index: int
    size: int | None  # bytes
    cpus: CpuSet


@dataclass(frozen=True)
class CgroupLimits:
    """Limits from the process's cgroup that are not CPU or node sets."""

    version: int  # 1 or 2
    path: str
    cpu_quota: float | None  # CPUs worth of time per period; None = unlimited
    memory_limit: int | None  # bytes; None = unlimited


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

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "pci_busid": self.pci_busid,
            "node": self.node,
            "pci_class": self.pci_class,
            "pci_id": self.pci_id,
            "names": list(self.names),
            "index": self.index,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Device:
        return cls(
            kind=str(data["kind"]),
            name=str(data["name"]),
            pci_busid=str(data["pci_busid"]),
            node=data.get("node"),
            pci_class=str(data.get("pci_class", "")),
            pci_id=str(data.get("pci_id", "")),
            names=tuple(data.get("names") or ()),
            index=data.get("index"),
        )


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

    def __post_init__(self) -> None:
        self._pu_by_os.update({pu.os_index: pu for pu in self.pus})

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

    def to_dict(self) -> dict:
        """The JSON form; docs/schemas.md documents it (schema `TOPOLOGY_SCHEMA`)."""
        return {
            "schema": TOPOLOGY_SCHEMA,
            "source": self.source,
            "fingerprint": self.fingerprint,
            "hostname": self.hostname,
            "architecture": self.architecture,
            "cpu_model": self.cpu_model,
            "hwloc_version": self.hwloc_version,
            "summary": self._summary(),
            "cpus": {
                "complete": str(self.complete_cpus),
                "online": str(self.online_cpus),
                "offline": str(self.offline_cpus),
                "allowed": str(self.allowed_cpus),
            },
            "allowed_nodes": str(self.allowed_nodes),
            "packages": [_package_to_json(p) for p in self.packages],
            "numa_nodes": [_node_to_json(n) for n in self.nodes],
            "l3_domains": [
                {"logical_index": c.logical_index, "size_bytes": c.size, "cpus": str(c.cpus)}
                for c in self.l3
            ],
            "cores": [_core_to_json(c) for c in self.cores],
            "pus": [_pu_to_json(p, self.siblings(p.os_index)) for p in self.pus],
            "distances": None
            if self.distances is None
            else {"nodes": list(self.distance_nodes), "matrix": [list(r) for r in self.distances]},
            "cgroup": None if self.cgroup is None else _cgroup_to_json(self.cgroup),
            "devices": [d.to_dict() for d in self.devices],
        }

    def _summary(self) -> dict:
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

    @classmethod
    def from_dict(cls, data: dict) -> Topology:
        """A topology stored by :meth:`to_dict` (a results directory's topology.json), read
        back into the one type: every reader counts its cores and memory the same way.
        Raises ValueError (or KeyError, TypeError) when ``data`` is not one."""
        if data.get("schema", TOPOLOGY_SCHEMA) != TOPOLOGY_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {TOPOLOGY_SCHEMA}")
        cpus, cgroup = data["cpus"], data.get("cgroup")
        distances = data.get("distances")
        return cls(
            source=data["source"],
            hostname=data.get("hostname"),
            architecture=data.get("architecture"),
            hwloc_version=data.get("hwloc_version"),
            packages=tuple(_package_from_json(p) for p in data["packages"]),
            nodes=tuple(_node_from_json(n) for n in data["numa_nodes"]),
            l3=tuple(
                CacheDomain(c["logical_index"], c.get("size_bytes"), CpuSet.parse(c["cpus"]))
                for c in data["l3_domains"]
            ),
            cores=tuple(_core_from_json(c) for c in data["cores"]),
            pus=tuple(_pu_from_json(p) for p in data["pus"]),
            complete_cpus=CpuSet.parse(cpus["complete"]),
            online_cpus=CpuSet.parse(cpus["online"]),
            allowed_cpus=CpuSet.parse(cpus["allowed"]),
            allowed_nodes=CpuSet.parse(data["allowed_nodes"]),
            distance_nodes=tuple(distances["nodes"]) if distances else (),
            distances=tuple(tuple(r) for r in distances["matrix"]) if distances else None,
            cgroup=None if cgroup is None else _cgroup_from_json(cgroup),
            devices=tuple(Device.from_dict(d) for d in data.get("devices") or ()),
        )


# --- the JSON form of each part of a Topology, written and read side by side ----------------


def _package_to_json(p: Package) -> dict:
    return {
        "logical_index": p.logical_index,
        "os_index": p.os_index,
        "cpus": str(p.cpus),
        "nodes": str(p.nodes),
        "cpu_model": p.cpu_model,
    }


def _package_from_json(p: dict) -> Package:
    return Package(
        p["os_index"],
        p["logical_index"],
        CpuSet.parse(p["cpus"]),
        CpuSet.parse(p["nodes"]),
        p.get("cpu_model"),
    )


def _node_to_json(n: NumaNode) -> dict:
    return {
        "logical_index": n.logical_index,
        "os_index": n.os_index,
        "memory_bytes": n.memory,
        "cpus": str(n.cpus),
        "has_cpus": n.has_cpus,
        "subtype": n.subtype,
        "allowed": n.allowed,
    }


def _node_from_json(n: dict) -> NumaNode:
    return NumaNode(
        n["os_index"],
        n["logical_index"],
        n.get("memory_bytes"),
        CpuSet.parse(n["cpus"]),
        n.get("subtype"),
        bool(n["allowed"]),
    )


def _core_to_json(c: Core) -> dict:
    return {
        "logical_index": c.logical_index,
        "os_index": c.os_index,
        "cpus": str(c.cpus),
        "package": c.package,
        "node": c.node,
        "l3": c.l3,
    }


def _core_from_json(c: dict) -> Core:
    return Core(
        c["logical_index"],
        c["os_index"],
        CpuSet.parse(c["cpus"]),
        c.get("package"),
        c.get("node"),
        c.get("l3"),
    )


def _pu_to_json(p: Pu, siblings: CpuSet) -> dict:
    """A PU with its SMT siblings spelled out (a reader's convenience; not read back)."""
    return {
        "logical_index": p.logical_index,
        "os_index": p.os_index,
        "core": p.core,
        "node": p.node,
        "siblings": str(siblings),
        "allowed": p.allowed,
    }


def _pu_from_json(p: dict) -> Pu:
    return Pu(p["os_index"], p["logical_index"], p["core"], p.get("node"), bool(p["allowed"]))


def _cgroup_to_json(cgroup: CgroupLimits) -> dict:
    return {
        "version": cgroup.version,
        "path": cgroup.path,
        "cpu_quota": cgroup.cpu_quota,
        "memory_limit_bytes": cgroup.memory_limit,
    }


def _cgroup_from_json(cgroup: dict) -> CgroupLimits:
    return CgroupLimits(
        cgroup["version"],
        cgroup["path"],
        cgroup.get("cpu_quota"),
        cgroup.get("memory_limit_bytes"),
    )
