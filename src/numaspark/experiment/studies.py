"""The built-in studies: each builds an experiment from the topology, and says what it cannot run.

- layouts   (Baig et al.): executors x cores-per-executor over the allowed CPUs;
- binding   (Baig et al., Awan et al.): no binding vs binding to 1..N nodes, and
            local vs remote memory (CPUs on node i, memory on node j); as root, also
            unbound with the kernel's automatic NUMA balancing on (autonuma) vs off;
- scaling   (Canali): 1..N concurrent tasks, speedup, efficiency, USL/Amdahl fits;
- executors (Awan et al., Chiba et al.): 1, 2, 4, ... executors with the same total
            cores and memory, GC per configuration;
- smt       (Awan et al.): ST on n cores, SMT on the same n cores, ST on 2n cores;
- affinity  (Expósito et al.): tasks unbound, node-bound, pinned per core, per thread.

Multi-node and SMT parts are planned on any topology (tested on
shared/topologies); on this machine they are reported as not runnable, with why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from numaspark.experiment.spec import Config, Experiment, at_venue, check_configs
from numaspark.experiment.venue import Venue
from numaspark.placement import Binding, Layout, MemPolicy, Mode
from numaspark.topology import CpuSet, NumaNode, Topology
from numaspark.workloads import get_workload


@dataclass
class Study:
    name: str
    experiment: Experiment
    cannot: list[str] = field(default_factory=list)  # parts this machine cannot run, and why
    baseline: str | None = None  # the label speedups are relative to


def _powers(limit: int) -> list[int]:
    values, v = [], 1
    while v <= limit:
        values.append(v)
        v *= 2
    if limit not in values:
        values.append(limit)
    return values


@dataclass(frozen=True)
class StudyRequest:
    """What a study is asked for: the machine it is planned on, the workload (checked as it is
    made), its input size, repetitions and warm-ups, parameters and Spark settings."""

    topology: Topology
    workload: str
    size: str = "tiny"
    repeat: int = 3
    warmup: int = 1
    params: dict = field(default_factory=dict)
    conf: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        chosen = get_workload(self.workload).with_params(self.params)
        if not chosen.streaming and chosen.application is None:
            chosen.size(self.size)

    def make(self, *how, **named) -> Config:
        """A configuration of this study's workload, placed ``how``."""
        return Config(self.workload, self.size, self.params, *how, **named)

    def experiment(
        self, name: str, configs: list[Config], cannot: list[str] | None = None
    ) -> tuple[Experiment, list[str]]:
        """The study's experiment of the ``configs`` this machine can run, and what it cannot."""
        runnable, skipped = check_configs(configs, self.topology)
        return Experiment(name, runnable, skipped, self.repeat, self.warmup), list(cannot or [])


def layouts(asked: StudyRequest) -> Study:
    """Every executors x cores-per-executor the allowed CPUs hold (standalone, core-bound)."""
    topology, make, conf = asked.topology, asked.make, dict(asked.conf)
    slots = len(topology.allowed_cores())  # whole cores: core binding never splits one
    configs = [
        make(
            Layout(executors=e, cores_per_executor=c),
            Binding.CORE,
            None,
            dict(conf),
        )
        for e in _powers(slots)
        for c in _powers(slots)
        if e * c <= slots
    ]
    experiment, cannot = asked.experiment("layouts", configs)
    return Study("layouts", experiment, cannot)


def binding(
    asked: StudyRequest,
    autonuma: bool | str = False,
) -> Study:
    """n executors (one per node) unbound vs node-bound, n = 1..N (nU vs nB); local vs remote
    memory per (CPU node, memory node) pair, one node-bound executor.

    ``autonuma``: True adds nA, unbound with the kernel's automatic NUMA balancing on, beside
    nU with it off (kernel.numa_balancing switched for each run and put back: the caller has
    checked that it can be, ``supervise.balancing.why_not``); a text is why it cannot be,
    reported once with what else cannot run."""
    topology, make, conf = asked.topology, asked.make, dict(asked.conf)
    conf = dict(conf)
    nodes = list(topology.cpu_nodes)
    memory_nodes = [n for n in topology.nodes if n.allowed]
    configs = _bound_or_not(make, nodes, conf, compared=autonuma is True)
    cannot = []
    if isinstance(autonuma, str):
        cannot.append(f"autonuma (unbound, the kernel's NUMA balancing on): {autonuma}")
    if len(memory_nodes) < 2:
        cannot.append(
            f"remote memory (CPUs on node i, memory on node j) and binding to 2..N nodes need "
            f"several NUMA nodes; this machine has {len(memory_nodes)}"
        )
    else:
        configs += _memory_pairs(make, nodes, memory_nodes, conf)
    experiment, more = asked.experiment("binding", configs, cannot)
    return Study("binding", experiment, more, baseline=configs[0].label)


def _bound_or_not(
    make: Callable[..., Config], nodes: list[NumaNode], conf: dict, compared: bool
) -> list[Config]:
    """n executors, one per node on the first n nodes, n = 1..N: unbound (nU) and node-bound
    with their memory (nB); ``compared``: also unbound with the kernel's NUMA balancing on
    (nA), and nU with it off."""
    configs = []
    for count in range(1, len(nodes) + 1):
        chosen = CpuSet(n.os_index for n in nodes[:count])
        layout = Layout(executors_per_node=1)  # on the chosen nodes: count executors
        configs.append(
            make(
                layout,
                Binding.NONE,
                None,
                conf,
                only_nodes=chosen,
                note=f"{count}U",
                numa_balancing=False if compared else None,
            )
        )
        if compared:
            configs.append(
                make(
                    layout,
                    Binding.NONE,
                    None,
                    conf,
                    only_nodes=chosen,
                    note=f"{count}A",
                    numa_balancing=True,
                )
            )
        configs.append(
            make(
                layout,
                Binding.NODE,
                MemPolicy.BIND,
                conf,
                only_nodes=chosen,
                note=f"{count}B",
            )
        )
    return configs


def _memory_pairs(
    make: Callable[..., Config], nodes: list[NumaNode], memory_nodes: list[NumaNode], conf: dict
) -> list[Config]:
    """One node-bound executor per (CPU node, memory node) pair: its memory local or remote."""
    configs = []
    for cpu_node in nodes:
        for mem_node in memory_nodes:
            where = "local" if cpu_node.os_index == mem_node.os_index else "remote"
            configs.append(
                make(
                    Layout(executors=1),
                    Binding.NODE,
                    MemPolicy.BIND,
                    conf,
                    only_nodes=CpuSet([cpu_node.os_index]),
                    mem_nodes=CpuSet([mem_node.os_index]),
                    note=f"{where} cpu{cpu_node.os_index}-mem{mem_node.os_index}",
                )
            )
    return configs


def scaling(asked: StudyRequest) -> Study:
    """1..N concurrent tasks in one core-bound local JVM (local[p] on p cores)."""
    topology, make, conf = asked.topology, asked.make, dict(asked.conf)
    slots = len(topology.allowed_cores())
    configs = [
        make(
            Layout(cores_per_executor=p, mode=Mode.LOCAL),
            Binding.CORE,
            None,
            dict(conf),
            note=f"p={p}",
        )
        for p in range(1, slots + 1)
    ]
    experiment, cannot = asked.experiment("scaling", configs)
    if slots < 3:
        cannot.append(
            f"this machine has {slots} allowed core(s): a scaling curve of "
            f"{slots} point(s) fits Amdahl at best, USL needs 3 or more"
        )
    return Study("scaling", experiment, cannot, baseline=configs[0].label)


def executors(asked: StudyRequest) -> Study:
    """1, 2, 4, ... executors sharing the same cores and memory (fewer, bigger vs more, smaller)."""
    topology, make, conf = asked.topology, asked.make, dict(asked.conf)
    slots = len(topology.allowed_cores())
    configs = [
        make(
            Layout(executors=e, cores_per_executor=slots // e),
            Binding.CORE,
            None,
            dict(conf),
            note=f"{e} executor(s)",
        )
        for e in _powers(slots)
        if slots % e == 0
    ]
    experiment, cannot = asked.experiment("executors", configs)
    return Study("executors", experiment, cannot, baseline=configs[0].label)


def smt(asked: StudyRequest) -> Study:
    """ST on n cores, SMT on the same n cores (2n hardware threads), ST on 2n cores."""
    topology, make, conf = asked.topology, asked.make, dict(asked.conf)
    cores = len(topology.allowed_cores())
    smt_ways = max(1, len(topology.allowed_cpus) // max(1, cores))
    n = max(1, cores // 2)
    conf = dict(conf)
    configs = [
        make(
            Layout(cores_per_executor=n, mode=Mode.LOCAL),
            Binding.PU,
            None,
            conf,
            note=f"ST {n} cores",
        ),
        make(
            Layout(cores_per_executor=2 * n, mode=Mode.LOCAL),
            Binding.CORE,
            None,
            conf,
            note=f"SMT {n} cores",
        ),
        make(
            Layout(cores_per_executor=2 * n, mode=Mode.LOCAL),
            Binding.PU,
            None,
            conf,
            note=f"ST {2 * n} cores",
        ),
    ]
    cannot = []
    if smt_ways < 2:
        cannot.append(
            "SMT needs two or more hardware threads per core; this machine has one "
            "(hyper-threading off, or a VM without it)"
        )
        configs = [c for c in configs if not c.note.startswith("SMT")]
    experiment, more = asked.experiment("smt", configs, cannot)
    return Study("smt", experiment, more, baseline=configs[0].label)


def affinity(asked: StudyRequest) -> Study:
    """One JVM on every allowed core, bound at each level (Expósito et al.'s comparison):
    none; node (numactl alone); core and pu (numactl, and each running task pinned to its own
    core or hardware thread by the affinity plugin)."""
    topology, make, conf = asked.topology, asked.make, dict(asked.conf)
    cores = len(topology.allowed_cores())
    configs = [
        make(
            Layout(cores_per_executor=cores, mode=Mode.LOCAL),
            level,
            None,
            dict(conf),
            note=f"level {level.value}",
        )
        for level in (Binding.NONE, Binding.NODE, Binding.CORE, Binding.PU)
    ]
    cannot = []
    if not topology.smt:
        cannot.append(
            "no SMT here: pu level pins one task per hardware thread, which is one "
            "per core on this machine, so it measures what core does"
        )
    experiment, more = asked.experiment("affinity", configs, cannot)
    return Study("affinity", experiment, more, baseline=configs[0].label)


def study_at(study: Study, venue: Venue, topology: Topology) -> Study:
    """The parts of ``study`` (planned on ``topology``, the machine ``venue`` is planned as:
    experiment/placing.py) that whoever places the JVMs there can realise; each part it cannot
    is a line in ``cannot`` that says why, as this machine's are."""
    experiment, more = at_venue(study.experiment, venue, topology)
    if venue.here:
        return dataclasses.replace(study, experiment=experiment)
    cannot = [line.replace("this machine", "the cluster as planned") for line in study.cannot]
    labels = {c.label for c in experiment.configs}
    baseline = study.baseline if study.baseline in labels else None
    return Study(study.name, experiment, cannot + more, baseline)


def ht_effectiveness(ht_scaling: float, dp_scaling: float) -> float:
    """Awan et al.'s HT effectiveness: HT_scaling x (0.538 + 0.462 / DP_scaling).

    ``ht_scaling``: speedup of SMT on n cores over ST on n cores; ``dp_scaling``:
    speedup of ST on 2n cores over ST on n cores.
    """
    return ht_scaling * (0.538 + 0.462 / dp_scaling)


STUDIES = {
    "layouts": layouts,
    "binding": binding,
    "scaling": scaling,
    "executors": executors,
    "smt": smt,
    "affinity": affinity,
}
