"""A cluster kept up across runs (``numaspark cluster up DIR``): attaching to it, stopping it
(with what a killed numaspark left) and reading its status, from its directory's state file."""

from __future__ import annotations

from pathlib import Path

from numaspark.errors import UsageError
from numaspark.spark.cluster import STATE_FILE, Cluster, stop_cluster_state
from numaspark.supervise.ledger import reap


def attach(directory: Path) -> Cluster:
    """The running cluster a directory's state file describes."""
    return Cluster.attach(directory)


def stop_cluster_dir(directory: Path) -> list[int]:
    """Stop whatever a cluster directory's state file names, even a half-started cluster (on
    several hosts: over SSH); and what a numaspark killed by SIGKILL left (perf stat too)."""
    reaped = [p.pid for p in reap()]
    if not (directory.resolve() / STATE_FILE).exists():
        if reaped:
            return reaped
        raise UsageError(f"no cluster state in {directory} (nothing to stop)")
    return sorted(set(stop_cluster_state(directory) + reaped))


def cluster_status(directory: Path) -> dict:
    """The master's view of the cluster in ``directory`` and where each worker really runs."""
    return Cluster.attach(directory).status()
