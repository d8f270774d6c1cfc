"""The eleven placement options that plan, run, launch and cluster up share, declared once:
``@with_placement`` hands them to a command as one `PlacementOptions`, the devices each
executor owns among them, which plans the command's JVMs on a topology."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Annotated

from numaspark.cli.option_group import Opt, option_group
from numaspark.experiment.request import TEMPLATE_WORKLOAD, RunRequest
from numaspark.placement import Binding, Layout, MemPolicy, Mode, PuOrder, plan
from numaspark.placement.devices import parse_resources, refuse_missing_here
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_size

ExecutorsOpt = Annotated[int | None, Opt("--executors", help="Executors in total.")]
PerNodeOpt = Annotated[
    int | None, Opt("--executors-per-node", help="Executors on each NUMA node with CPUs.")
]
CoresOpt = Annotated[
    int | None,
    Opt(
        "--cores-per-executor",
        help="Task slots per executor (default: share the CPUs); with --threads-per-core, whole cores.",
    ),
]
ThreadsPerCoreOpt = Annotated[
    int | None,
    Opt(
        "--threads-per-core",
        help="SMT: hardware threads used of each core an executor owns (1 to the machine's; with --bind core or pu).",
        min=1,
    ),
]
MemoryOpt = Annotated[
    str,
    Opt("--memory-per-executor", help="Executor heap, e.g. 8g, or 'auto' to split node memory."),
]
BindOpt = Annotated[Binding, Opt("--bind", help="Binding level of each JVM that runs tasks.")]
PolicyOpt = Annotated[
    MemPolicy | None,
    Opt(
        "--mem-policy",
        help="Memory policy (default: bind where numactl binds the JVMs numaspark starts, as plan shows; preferred where the affinity plugin binds from inside, on a cluster numaspark did not start, as plan --target standalone and the plugin's files of --target yarn and k8s show; YARN's NodeManager interleaves whatever is asked; the kernel's when unbound).",
    ),
]
NodesOpt = Annotated[
    str | None, Opt("--nodes", help="Use only these NUMA nodes for executors, e.g. 0 or 0-1.")
]
PuOrderOpt = Annotated[
    PuOrder,
    Opt("--pu-order", help="For --bind pu: one thread per core first, or siblings together."),
]
GpusOpt = Annotated[
    int | None,
    Opt(
        "--gpus-per-executor",
        help="GPUs each executor owns: each node runs as many executors as its GPUs give, bound to that node (Spark's spark.executor.resource.gpu.amount).",
    ),
]
ResourceOpt = Annotated[
    list[str] | None,
    Opt(
        "--resource",
        help="NAME=N: devices of another kind each executor owns, as --gpus-per-executor (gpu, nic, nvme, accelerator); repeat for several.",
    ),
]


@dataclass(frozen=True)
class PlacementOptions:
    """The placement options that plan, run, launch and cluster up share (``@with_placement``)."""

    executors: int | None = None
    executors_per_node: int | None = None
    cores_per_executor: int | None = None
    memory_per_executor: str = "auto"
    bind: Binding = Binding.NONE
    mem_policy: MemPolicy | None = None
    nodes: str | None = None
    pu_order: PuOrder = PuOrder.CORES_FIRST
    threads_per_core: int | None = None
    gpus_per_executor: int | None = None
    resource: list[str] | None = None

    @property
    def only_nodes(self) -> CpuSet | None:
        return CpuSet.parse(self.nodes) if self.nodes is not None else None

    @property
    def resources(self) -> tuple[tuple[str, int], ...]:
        """The devices each executor owns, by Spark resource name (--gpus-per-executor,
        --resource), checked."""
        return parse_resources(self.gpus_per_executor, self.resource or [])

    def layout(self, mode: Mode, driver_cores: int = 1, driver_memory: str = "1g") -> Layout:
        memory = self.memory_per_executor
        return Layout(
            executors=self.executors,
            executors_per_node=self.executors_per_node,
            cores_per_executor=self.cores_per_executor,
            memory_per_executor=None
            if memory == "auto"
            else parse_size(memory, "--memory-per-executor"),
            driver_cores=driver_cores,
            driver_memory=parse_size(driver_memory, "--driver-memory"),
            mode=mode,
            threads_per_core=self.threads_per_core,
            resources=self.resources,
        )

    def place(self, topo, mode: Mode, **driver):
        return plan(
            topo,
            self.layout(mode, **driver),
            self.bind,
            self.mem_policy,
            self.pu_order,
            only_nodes=self.only_nodes,
        )

    def request(self, mode: Mode, **driver) -> RunRequest:
        """What these options ask of any workload (the planner's part of a run request)."""
        return RunRequest(
            TEMPLATE_WORKLOAD,
            layout=self.layout(mode, **driver),
            binding=self.bind,
            mem_policy=self.mem_policy,
            pu_order=self.pu_order,
            only_nodes=self.only_nodes,
        )

    def check_here(self, topo) -> None:
        """On this machine, where numaspark starts the JVMs (run, cluster up, launch): a
        device kind it lacks is one line that points to ``plan --xml``."""
        refuse_missing_here(topo, self.resources)

    def place_here(self, topo, mode: Mode, **driver):
        """`place` on this machine, checked first (`check_here`)."""
        self.check_here(topo)
        return self.place(topo, mode, **driver)


PLACEMENT = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=option)
    for name, option, default in (
        ("executors", ExecutorsOpt, None),
        ("executors_per_node", PerNodeOpt, None),
        ("cores_per_executor", CoresOpt, None),
        ("memory_per_executor", MemoryOpt, "auto"),
        ("bind", BindOpt, Binding.NONE),
        ("mem_policy", PolicyOpt, None),
        ("nodes", NodesOpt, None),
        ("pu_order", PuOrderOpt, PuOrder.CORES_FIRST),
        ("threads_per_core", ThreadsPerCoreOpt, None),
        ("gpus_per_executor", GpusOpt, None),
        ("resource", ResourceOpt, None),
    )
]


# the eleven placement options, handed to a command as one ``where: PlacementOptions``
with_placement = option_group("where", PLACEMENT, PlacementOptions)
