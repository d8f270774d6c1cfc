"""`Layout` (what the user asks for) and `Placement` (where every JVM goes)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import ClassVar

from numaspark.records import Shape
from numaspark.topology import CpuSet
from numaspark.units import GIB, jvm_size, parse_size

#: Version of a plan's JSON (render.placement_to_dict; read back by records.load). History:
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

    # as a plan's ``layout`` holds it (`Placement.planned_layout`: what the plan realises, so
    # no executors per node): sizes in the JVM's spelling, devices by resource name, threads
    # per core and devices only where asked (a plan without them is as before they existed)
    __json__: ClassVar[Shape] = Shape(
        order=("mode", "executors", "cores_per_executor", "threads_per_core", "resources")
        + ("memory_per_executor", "driver_cores", "driver_memory"),
        omit_none=("threads_per_core",),
        omit_empty=("resources",),
        forms={
            "memory_per_executor": (jvm_size, lambda size: parse_size(str(size), "memory")),
            "driver_memory": (jvm_size, lambda size: parse_size(str(size), "memory")),
            "resources": (dict, lambda found: tuple((str(k), int(v)) for k, v in found.items())),
        },
    )

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

    # a hand-written plan may leave any of them out
    __json__: ClassVar[Shape] = Shape(
        absent=dict.fromkeys(("resource", "address", "name", "pci_busid", "kind"), "")
        | {"node": None}
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

    # one of a plan's ``jvms`` (render.placement_to_dict adds its binding prefix before its
    # java_options), its heap in bytes and in the JVM's spelling; its host and devices only
    # where it has them; what a hand-written plan leaves out reads neutral
    __json__: ClassVar[Shape] = Shape(
        keys={"heap_size": "heap", "heap": "heap_bytes", "overhead": "overhead_bytes"},
        computed=("heap_size",),
        order=("role", "index", "runs_tasks", "cores", "heap_size", "heap", "overhead")
        + ("binding", "cpus", "nodes", "mem_policy", "mem_nodes", "java_options", "slots")
        + ("host", "devices"),
        omit_none=("host",),
        omit_empty=("devices",),
        absent={"role": "executor", "index": 0, "cores": 0, "heap": 0, "overhead": 0}
        | {"binding": "none", "cpus": "", "nodes": "", "mem_policy": None, "mem_nodes": ""},
    )

    @property
    def heap_size(self) -> str:
        """Its heap in the JVM's spelling (``14432m``), as -Xmx and spark.executor.memory say."""
        return jvm_size(self.heap)

    @property
    def name(self) -> str:
        return "driver" if self.role == "driver" else f"executor {self.index}"

    @property
    def bound_nodes(self) -> frozenset[int] | None:
        """The nodes its memory should be on; None when it runs unbound (nothing to judge)."""
        if self.binding is Binding.NONE:
            return None
        return frozenset(self.mem_nodes if len(self.mem_nodes) else self.nodes)


def _offered(devices: tuple[ExecutorDevice, ...]) -> tuple[tuple[tuple[str, str], ...], ...]:
    """An executor's devices in a cluster's shape: (resource, address) each; nothing when it
    owns none, so a plan without devices has the shape it always had."""
    return (tuple((d.resource, d.address) for d in devices),) if devices else ()


def _recorded_conf(conf: object) -> tuple[tuple[str, str], ...] | None:
    return tuple((str(k), str(v)) for k, v in conf.items()) if isinstance(conf, dict) else None


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

    schema: ClassVar[str] = PLACEMENT_SCHEMA
    # its plan document (render.placement_to_dict adds the binding prefixes, and a fresh
    # plan's Spark conf, where ``spark_conf`` is null here): the layout it realises, read back
    # as its layout; what a hand-written one leaves out reads neutral
    __json__: ClassVar[Shape] = Shape(
        keys={
            "topology_source": "topology.source",
            "topology_fingerprint": "topology.fingerprint",
            "planned_layout": "layout",
            "recorded_conf": "spark_conf",
        },
        computed=("schema", "planned_layout"),
        order=("schema", "topology_source", "topology_fingerprint", "planned_layout", "binding")
        + ("mem_policy", "jvms", "recorded_conf", "notes"),
        forms={"recorded_conf": (dict, _recorded_conf)},
        absent={"topology_source": "", "topology_fingerprint": "", "binding": "none"}
        | {"mem_policy": None, "jvms": (), "layout": {}},
        schemas=(PLACEMENT_SCHEMA,),
    )

    @property
    def executors(self) -> tuple[JvmPlacement, ...]:
        return tuple(j for j in self.jvms if j.runs_tasks)

    @property
    def planned_layout(self) -> Layout:
        """The layout the plan realises: its executors, each one's cores (whole cores, with
        threads per core) and heap, beside what was asked of the driver, threads and devices."""
        first = self.executors[0]
        return replace(
            self.layout,
            executors=len(self.executors),
            cores_per_executor=first.cores // (self.layout.threads_per_core or 1),
            memory_per_executor=first.heap,
        )

    @property
    def driver(self) -> JvmPlacement:
        return next(j for j in self.jvms if j.role == "driver")

    @property
    def total_cores(self) -> int:
        return sum(j.cores for j in self.executors)

    @property
    def shape(self) -> tuple[tuple, ...]:
        """What a running cluster must match to serve this placement: each executor's host,
        task slots, CPUs and heap, and the devices its worker offers where it owns any (the
        driver is started per application: it does not count)."""
        return tuple(
            (j.host, j.cores, j.cpus, j.heap, *_offered(j.devices)) for j in self.executors
        )

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts its executors run on, in order (empty: all on this machine)."""
        return tuple(dict.fromkeys(j.host for j in self.executors if j.host is not None))
