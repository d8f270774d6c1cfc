"""The quick characterization (the README's main job): a few placements of two workloads.

Local mode unbound and bound, and a standalone cluster of one-core executors
each bound to its own core, for `wordcount` (RDD) and `sql-aggregation`
(DataFrame), each repeated. One cluster serves both workloads, because a
standalone executor takes ~15 s to start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from numaspark.experiment.result import RunResult
from numaspark.experiment.runner import RunRequest, run_workload
from numaspark.placement import Binding, Layout, Mode, plan
from numaspark.spark.cluster import StandaloneCluster
from numaspark.spark.processes import ProcessTracker, sigterm_raises
from numaspark.topology import Topology

DEFAULT_WORKLOADS = ("wordcount", "sql-aggregation")
# The same for every configuration, so the layouts compare; Spark's default of
# 200 shuffle partitions is sized for clusters, not for a few cores and tiny inputs.
SPARK_CONF = {"spark.sql.shuffle.partitions": "8", "spark.default.parallelism": "8"}


@dataclass(frozen=True)
class Config:
    label: str
    layout: Layout
    binding: Binding


def configurations(topology: Topology) -> list[Config]:
    cpus = len(topology.allowed_cpus)
    executors = min(cpus, 2)
    return [
        Config("local, unbound", Layout(mode=Mode.LOCAL), Binding.NONE),
        Config("local, node-bound", Layout(mode=Mode.LOCAL), Binding.NODE),
        Config(
            f"standalone {executors}x1, core-bound",
            Layout(executors=executors, cores_per_executor=1),
            Binding.CORE,
        ),
    ]


def total_runs(topology: Topology, workloads: tuple[str, ...], repeat: int, warmup: int) -> int:
    return len(configurations(topology)) * len(workloads) * (repeat + warmup)


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
    results: list[RunResult] = []
    with ProcessTracker() as tracker, sigterm_raises():
        for config in configurations(topology):
            cluster = None
            if config.layout.mode is Mode.STANDALONE:
                if progress:
                    progress(f"{config.label}: starting the cluster")
                placement = plan(topology, config.layout, config.binding)
                cluster = StandaloneCluster.start(
                    placement, out / "cluster", tracker, on_progress=progress
                )
            for workload in workloads:
                request = RunRequest(
                    workload=workload,
                    size=size,
                    layout=config.layout,
                    binding=config.binding,
                    repeat=repeat,
                    warmup=warmup,
                    out=out,
                    data_root=data_root,
                    label=config.label,
                    spark_conf=dict(SPARK_CONF),
                )
                results += run_workload(
                    request, topology, progress, cluster=cluster, on_result=on_result
                )
            if cluster is not None:
                cluster.stop()
    return results
