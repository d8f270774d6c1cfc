"""The quick characterization (the README's main job): a few placements of two workloads.

Local mode unbound and bound, and a standalone cluster of one-core executors
each bound to its own core, for `wordcount` (RDD) and `sql-aggregation`
(DataFrame), each repeated. It is an experiment like any other, run by the
sweep: one cluster serves both workloads (a standalone executor takes ~15 s to
start), and an interrupted characterization resumes. Given a user's application
instead, it characterizes that, with the application's own Spark settings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from numaspark.experiment.result import RunResult
from numaspark.experiment.spec import Config, Experiment
from numaspark.experiment.sweep import run_sweep
from numaspark.placement import Binding, Layout, Mode
from numaspark.topology import Topology
from numaspark.workloads import get_workload

DEFAULT_WORKLOADS = ("wordcount", "sql-aggregation")
# The same for every configuration, so the layouts compare; Spark's default of
# 200 shuffle partitions is sized for clusters, not for a few cores and tiny inputs.
SPARK_CONF = {"spark.sql.shuffle.partitions": "8", "spark.default.parallelism": "8"}


def experiment(
    topology: Topology,
    workloads: tuple[str, ...] = DEFAULT_WORKLOADS,
    size: str = "tiny",
    repeat: int = 3,
    warmup: int = 1,
    cluster: bool = False,
) -> Experiment:
    """Three placements x the workloads, ordered so the cluster serves both workloads. On a
    cluster (``cluster``: ``topology`` is the machine it is planned as), an executor per node
    unbound and node-bound take local mode's place: local mode would run here. On a machine
    of one NUMA node, local mode runs unbound only (`one_node`)."""
    executors = min(len(topology.allowed_cpus), 2)
    if cluster:
        placements = [
            ("cluster 1/node, unbound", Layout(executors_per_node=1), Binding.NONE),
            ("cluster 1/node, node-bound", Layout(executors_per_node=1), Binding.NODE),
        ]
    else:
        placements = [("local, unbound", Layout(mode=Mode.LOCAL), Binding.NONE)]
        if not one_node(topology):
            placements.append(("local, node-bound", Layout(mode=Mode.LOCAL), Binding.NODE))
    placements.append(
        (
            f"standalone {executors}x1, core-bound",
            Layout(executors=executors, cores_per_executor=1),
            Binding.CORE,
        )
    )
    configs = [
        Config(workload, size, {}, layout, binding, None, _conf(workload), title=title)
        for title, layout, binding in placements
        for workload in workloads
    ]
    return Experiment("characterize", configs, repeat=repeat, warmup=warmup)


def one_node(topology: Topology) -> bool:
    """Whether this machine's CPUs allowed here are on one NUMA node: binding local mode's one
    JVM to its node then gives it the CPUs and memory it has unbound (numactl
    --cpunodebind=0 --membind=0 on a one-node machine changes nothing), so that
    configuration would only measure the machine's noise twice."""
    cpu_nodes = {pu.node for pu in topology.pus if pu.allowed}
    return len(cpu_nodes) <= 1 and len(topology.allowed_nodes) <= 1


ONE_NODE_NOTE = (
    "one NUMA node here: local mode bound to it is local mode unbound, so it runs unbound "
    "only (a server of two or more nodes runs both)"
)


def _conf(workload: str) -> dict[str, str]:
    """The suite's shared settings; a user's application keeps its own."""
    return {} if get_workload(workload).application is not None else dict(SPARK_CONF)


def total_runs(topology: Topology, workloads: tuple[str, ...], repeat: int, warmup: int) -> int:
    return len(experiment(topology, workloads).configs) * (repeat + warmup)


def characterize(
    topology: Topology,
    out: Path,
    workloads: tuple[str, ...] = DEFAULT_WORKLOADS,
    size: str = "tiny",
    repeat: int = 3,
    warmup: int = 1,
    data_root: Path | None = None,
    progress: Callable[[str], None] | None = None,
    on_result: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Run every configuration for every workload; results go to ``out``/results.jsonl."""
    chosen = experiment(topology, workloads, size, repeat, warmup)
    return run_sweep(
        chosen, topology, out, data_root=data_root, say=progress, on_result=on_result
    ).results
