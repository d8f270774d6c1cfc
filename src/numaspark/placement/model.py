"""`Layout` (what the user asks for) and `Placement` (where every JVM goes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from numaspark.topology import CpuSet
from numaspark.units import GIB, parse_size

#: Version of the JSON written by :meth:`Placement.to_dict`. History:
#: 1 - first version (numaspark 0.1).
PLACEMENT_SCHEMA = "numaspark.placement/1"


class Binding(str, Enum):
    """How tightly a JVM is bound (the levels of Flame-MR/jhwloc)."""

    NONE = "none"  # the scheduler decides
    NODE = "node"  # CPUs and memory of whole NUMA nodes
    CORE = "core"  # whole physical cores (SMT siblings included)
    PU = "pu"  # individual hardware threads


class MemPolicy(str, Enum):
    BIND = "bind"  # allocate only on the given nodes (numactl --membind)
    PREFERRED = "preferred"  # prefer one node, fall back elsewhere (--preferred)
    INTERLEAVE = "interleave"  # round-robin pages over the nodes (--interleave)
    LOCAL = "local"  # allocate on the node the thread runs on (--localalloc)


class Mode(str, Enum):
    LOCAL = "local"  # one driver JVM runs the tasks: local[N]
    STANDALONE = "standalone"  # a master, one bound worker per executor, executors


class PuOrder(str, Enum):
    """Which hardware threads `pu` binding takes first."""

    CORES_FIRST = "cores-first"  # one thread of every core, then the SMT siblings
    SIBLINGS_FIRST = "siblings-first"  # both threads of a core, then the next core


@dataclass(frozen=True)
class Layout:
    """The Spark software configuration: how many executors, how big."""

    executors: int | None = None  # in total
    executors_per_node: int | None = None
    # task slots per executor; with threads_per_core, physical cores per executor (each
    # running that many task threads: slots = cores x threads per core)
    cores_per_executor: int | None = None
    memory_per_executor: int | None = None  # heap bytes; None = auto
    driver_cores: int = 1
    driver_memory: int = 1 * GIB
    mode: Mode = Mode.STANDALONE
    # hardware threads used of each core an executor owns (1 to the SMT width); None: as
    # before it existed (the binding decides: a task slot per core at core level, per
    # hardware thread at pu level)
    threads_per_core: int | None = None
    # devices per executor by Spark resource name, e.g. (("gpu", 2),): the devices on each
    # node then decide its executors (placement/devices.py)
    resources: tuple[tuple[str, int], ...] = ()

    @property
    def slots_per_executor(self) -> int | None:
        """Task slots per executor (spark.executor.cores), when the layout says."""
        if self.cores_per_executor is None:
            return None
        return self.cores_per_executor * (self.threads_per_core or 1)


@dataclass(frozen=True)
class ExecutorDevice:
    """A device planned for one executor, and the address Spark's scheduler hands it out by."""

    resource: str  # Spark's resource name, e.g. gpu
    address: str  # its address in Spark's resource JSON: the GPU index, a NIC's name
    name: str  # as hwloc or the kernel names it (nvml3, ib0)
    pci_busid: str
    node: int | None
    kind: str  # the topology's device kind (gpu, nic, nvme, accelerator)

    def to_dict(self) -> dict:
        return {
            "resource": self.resource,
            "address": self.address,
            "name": self.name,
            "pci_busid": self.pci_busid,
            "node": self.node,
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ExecutorDevice:
        return cls(
            resource=str(data.get("resource", "")),
            address=str(data.get("address", "")),
            name=str(data.get("name", "")),
            pci_busid=str(data.get("pci_busid", "")),
            node=data.get("node"),
            kind=str(data.get("kind", "")),
        )


@dataclass(frozen=True)
class JvmPlacement:
    """Where one JVM runs: its CPUs, its memory policy, its size."""

    role: str  # "driver" or "executor"
    index: int
    cores: int  # task slots (local[N] for a local-mode driver)
    heap: int  # bytes
    overhead: int  # off-heap bytes Spark adds (spark.executor.memoryOverhead)
    binding: Binding
    cpus: CpuSet  # CPUs it may run on
    nodes: CpuSet  # NUMA nodes those CPUs belong to
    mem_policy: MemPolicy | None  # None: the kernel's default (local allocation)
    mem_nodes: CpuSet  # nodes the policy names
    runs_tasks: bool = True
    java_options: tuple[str, ...] = ()
    # core/pu binding: its CPUs grouped by physical core, the task slots of the affinity plugin
    slots: tuple[CpuSet, ...] = ()
    host: str | None = None  # the host it runs on (None: this one); its CPUs are that host's
    devices: tuple[ExecutorDevice, ...] = ()  # the devices it owns (plan --gpus-per-executor)

    @property
    def name(self) -> str:
        return "driver" if self.role == "driver" else f"executor {self.index}"

    @property
    def bound_nodes(self) -> frozenset[int] | None:
        """The nodes its memory should be on; None when it runs unbound (nothing to judge)."""
        if self.binding is Binding.NONE:
            return None
        return frozenset(self.mem_nodes if len(self.mem_nodes) else self.nodes)

    @classmethod
    def from_dict(cls, data: dict, binding: Binding = Binding.NONE) -> JvmPlacement:
        """One entry of ``placement_to_dict``'s ``jvms``; fields an older or hand-written
        record leaves out take neutral defaults."""
        heap = data.get("heap_bytes")
        if heap is None and data.get("heap"):
            heap = parse_size(str(data["heap"]), "heap")
        return cls(
            role=str(data.get("role", "executor")),
            index=int(data.get("index", 0)),
            cores=int(data.get("cores") or 0),
            heap=int(heap or 0),
            overhead=int(data.get("overhead_bytes") or 0),
            binding=Binding(data["binding"]) if data.get("binding") else binding,
            cpus=CpuSet.parse(str(data.get("cpus") or "")),
            nodes=CpuSet.parse(str(data.get("nodes") or "")),
            mem_policy=MemPolicy(data["mem_policy"]) if data.get("mem_policy") else None,
            mem_nodes=CpuSet.parse(str(data.get("mem_nodes") or "")),
            runs_tasks=bool(data.get("runs_tasks", True)),
            java_options=tuple(data.get("java_options") or ()),
            slots=tuple(CpuSet.parse(str(s)) for s in data.get("slots") or ()),
            host=str(data["host"]) if data.get("host") else None,
            devices=tuple(ExecutorDevice.from_dict(d) for d in data.get("devices") or ()),
        )


def _count(value: object) -> int | None:
    return int(value) if value is not None else None  # type: ignore[call-overload]


@dataclass(frozen=True)
class Placement:
    """One entry per JVM, plus what the planner had to decide or warn about."""

    topology_source: str
    topology_fingerprint: str
    layout: Layout
    binding: Binding
    mem_policy: MemPolicy | None
    jvms: tuple[JvmPlacement, ...]
    notes: tuple[str, ...] = field(default=())
    # a loaded record's Spark conf as it ran (jar paths are the machine's of that day);
    # None for a fresh plan, whose conf is rendered from the fields above
    recorded_conf: tuple[tuple[str, str], ...] | None = field(default=None, compare=False)

    @property
    def executors(self) -> tuple[JvmPlacement, ...]:
        return tuple(j for j in self.jvms if j.runs_tasks)

    @property
    def driver(self) -> JvmPlacement:
        return next(j for j in self.jvms if j.role == "driver")

    @property
    def total_cores(self) -> int:
        return sum(j.cores for j in self.executors)

    @property
    def shape(self) -> tuple[tuple[str | None, int, CpuSet, int], ...]:
        """What a running cluster must match to serve this placement: each executor's host,
        task slots, CPUs and heap (the driver is started per application: it does not count)."""
        return tuple((j.host, j.cores, j.cpus, j.heap) for j in self.executors)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts its executors run on, in order (empty: all on this machine)."""
        return tuple(dict.fromkeys(j.host for j in self.executors if j.host is not None))

    @classmethod
    def from_dict(cls, data: dict) -> Placement:
        """The inverse of ``placement_to_dict`` (schema ``PLACEMENT_SCHEMA``), lenient with
        records that leave fields out: old results and hand-written ones still load."""
        layout = data.get("layout") or {}
        binding = Binding(data.get("binding") or "none")
        policy = data.get("mem_policy")
        memory = layout.get("memory_per_executor")
        driver_memory = layout.get("driver_memory")
        topology = data.get("topology") or {}
        return cls(
            topology_source=str(topology.get("source", "")),
            topology_fingerprint=str(topology.get("fingerprint", "")),
            layout=Layout(
                executors=layout.get("executors"),
                executors_per_node=layout.get("executors_per_node"),
                cores_per_executor=layout.get("cores_per_executor"),
                memory_per_executor=parse_size(str(memory), "memory") if memory else None,
                driver_cores=int(layout.get("driver_cores") or 1),
                driver_memory=parse_size(str(driver_memory), "memory") if driver_memory else GIB,
                mode=Mode(layout.get("mode") or "standalone"),
                threads_per_core=_count(layout.get("threads_per_core")),
                resources=tuple(
                    (str(k), int(v)) for k, v in (layout.get("resources") or {}).items()
                ),
            ),
            binding=binding,
            mem_policy=MemPolicy(policy) if policy else None,
            jvms=tuple(JvmPlacement.from_dict(j, binding) for j in data.get("jvms") or ()),
            notes=tuple(data.get("notes") or ()),
            recorded_conf=tuple((str(k), str(v)) for k, v in data["spark_conf"].items())
            if isinstance(data.get("spark_conf"), dict)
            else None,
        )
