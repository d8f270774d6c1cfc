"""`Layout` (what the user asks for) and `Placement` (where every JVM goes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from numaspark.topology import CpuSet
from numaspark.units import GIB

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
    cores_per_executor: int | None = None  # task slots per executor
    memory_per_executor: int | None = None  # heap bytes; None = auto
    driver_cores: int = 1
    driver_memory: int = 1 * GIB
    mode: Mode = Mode.STANDALONE


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

    @property
    def name(self) -> str:
        return "driver" if self.role == "driver" else f"executor {self.index}"


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

    @property
    def executors(self) -> tuple[JvmPlacement, ...]:
        return tuple(j for j in self.jvms if j.runs_tasks)

    @property
    def driver(self) -> JvmPlacement:
        return next(j for j in self.jvms if j.role == "driver")

    @property
    def total_cores(self) -> int:
        return sum(j.cores for j in self.executors)
