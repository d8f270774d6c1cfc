"""What the rules need of a machine (NUMA nodes, physical cores, hardware threads, memory) and
a candidate in its terms: its layout (executors, cores per executor, task slots) and its shape
(on how many physical cores its task threads run, how many threads on each)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Machine:
    """What the rules need of a machine: NUMA nodes with CPUs, physical cores, threads, and
    the memory its JVMs may use (bytes: the nodes' total, or the cgroup's limit if lower; None
    when the topology does not say)."""

    nodes: int
    cores: int
    threads: int
    source: str = ""
    memory: int | None = None

    @classmethod
    def of(cls, topology, source: str | None = None) -> Machine:
        """From a `Topology` (what this process may use: cgroup cpusets and limit count):
        this machine's, or one stored with runs (``source``: the file it was read from)."""
        cores = len(topology.allowed_cores()) or len(topology.cores)
        threads = len(topology.allowed_cpus) or len(topology.pus)
        limit = topology.cgroup.memory_limit if topology.cgroup else None
        return cls(
            max(1, len(topology.cpu_nodes)),
            max(1, cores),
            max(1, threads),
            source or topology.source,
            _usable(topology.total_memory, limit),
        )

    @property
    def cores_per_node(self) -> float:
        return self.cores / self.nodes

    @property
    def threads_per_core(self) -> float:
        return self.threads / self.cores

    @property
    def smt(self) -> int:
        """The SMT width: hardware threads per core (1 without SMT)."""
        return max(1, round(self.threads_per_core))

    def describe(self) -> str:
        smt = f", {self.threads_per_core:g} threads per core" if self.threads > self.cores else ""
        where = f" ({self.source})" if self.source.endswith(".json") else ""
        return f"{self.nodes} NUMA node(s), {self.cores} cores{smt}{where}"


def _usable(total: object, limit: object) -> int | None:
    """The smaller of a machine's memory and its cgroup limit, each if it is a byte count."""
    known = [int(v) for v in (_number(total), _number(limit)) if v is not None]
    return min(known) if known else None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _word(value: object) -> str:
    return str(value).strip().lower()


@dataclass(frozen=True)
class ExecutorLayout:
    """A candidate's layout in the machine's terms (None where the table does not say).
    ``cores_per_executor`` and ``slots`` count task threads (hardware threads, Spark's task
    slots) unless ``threads_per_core`` is given: then ``cores_per_executor`` counts physical
    cores, each running that many of the executor's threads."""

    executors: float | None
    cores_per_executor: float | None
    slots: float | None
    local: bool
    threads_per_core: float | None = None

    @property
    def threads_per_executor(self) -> float | None:
        """Task threads (slots) per executor."""
        if self.cores_per_executor is None:
            return None
        return self.cores_per_executor * (self.threads_per_core or 1.0)


def layout_of(params: dict[str, object]) -> ExecutorLayout:
    """``params`` keyed by numaspark names (see `roles`)."""
    local = _word(params.get("mode", "")) == "local"
    executors = 1.0 if local else _number(params.get("executors"))
    cores = _number(params.get("cores_per_executor"))
    slots = _number(params.get("slots"))
    per_core = _number(params.get("threads_per_core"))
    width = per_core or 1.0  # task threads per unit of cores_per_executor
    if executors is not None and cores is not None:
        slots = slots or executors * cores * width
    elif slots is not None and executors is not None:
        cores = slots / executors / width
    elif slots is not None and cores is not None:
        executors = slots / cores / width
    return ExecutorLayout(executors, cores, slots, local, per_core)


BOUND = ("node", "core", "pu")  # bindings that keep an executor on its node(s)


def _cores_of(threads: float, per_core: float | None, spread: float) -> float:
    """The physical cores an executor's ``threads`` occupy: at its own threads per core when
    the layout gives them, else at ``spread`` (at least one thread per core)."""
    return threads / (per_core or max(spread, 1.0))


def _whole(value: float) -> bool:
    return abs(value - round(value)) < 1e-6 and round(value) >= 1


@dataclass(frozen=True)
class CoreFootprint:
    """A candidate in the machine's units: executors of physical cores, each core running
    some threads (None where the table does not say)."""

    layout: ExecutorLayout
    executors: float | None
    slots: float | None  # task threads in all
    cores_per_executor: float | None  # physical cores an executor's threads occupy
    threads_per_core: float | None  # its threads per busy core
    busy_cores: float | None  # physical cores with a task thread
    shares_a_core: bool | None  # None: no SMT, one executor, or an owned width given

    def describe(self, smt: bool = True) -> str:
        """``6 x 4 cores x 4 threads per core``, as far as known (``smt`` False: the machine
        has one thread per core, so the threads are not said)."""
        per_core = self.threads_per_core
        parts = [
            f"{self.executors:g} x" if self.executors else "",
            f"{self.cores_per_executor:.3g} cores" if self.cores_per_executor else "",
            f"x {per_core:.3g} thread{'s' if per_core != 1 else ''} per core"
            if per_core and smt
            else "",
        ]
        return " ".join(p for p in parts if p)


def shape(params: dict[str, object], machine: Machine) -> CoreFootprint:
    """Where a candidate's task threads run: on how many physical cores, how many threads on
    each. Without threads per core, threads go one per core before any core gets a second
    (the kernel's spreading, pu binding's cores-first order); with it, an executor owns that
    many whole cores. Bound executors use their own nodes' cores only."""
    layout = layout_of(params)
    executors = layout.executors
    per_node = _number(params.get("executors_per_node"))
    if executors is None and per_node is not None:
        executors = per_node * machine.nodes
    threads = layout.threads_per_executor
    per_core = layout.threads_per_core
    slots = layout.slots or (executors * threads if executors and threads else None)
    busy = spread = None
    if slots is not None:
        usable = float(machine.cores)
        if _word(params.get("binding", "")) in BOUND and executors and threads and not layout.local:
            # fewer bound executors than nodes leave whole nodes idle, and their threads
            # share the bound nodes' cores
            span = math.ceil(
                _cores_of(threads, per_core, machine.threads_per_core) / machine.cores_per_node
                - 1e-9
            )
            usable = min(usable, max(1.0, executors * span) * machine.cores_per_node)
        wanted = executors * (layout.cores_per_executor or 0) if per_core and executors else slots
        busy = max(1.0, min(wanted, usable))
        spread = slots / busy
    cores = shared = None
    if threads is not None:  # given threads per core; else as spread; else packed at SMT width
        cores = _cores_of(threads, per_core, spread or machine.threads_per_core)
        if machine.smt > 1 and spread is not None and not per_core and (executors or 0) > 1:
            # executors own whole cores only at a whole number of threads per core, and of
            # cores per executor
            shared = spread > 1 and not (_whole(spread) and _whole(cores))
    return CoreFootprint(layout, executors, slots, cores, spread, busy, shared)


def table_machine(largest_slots: float) -> Machine:
    """No machine given: assume the table's largest layout used every hardware thread of one
    node (what a grid over one server usually spans)."""
    count = max(1, round(largest_slots))
    return Machine(1, count, count, "the table's largest layout")
