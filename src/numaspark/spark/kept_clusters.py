"""A cluster kept up across runs (``numaspark cluster up DIR``, ``numaspark yarn up DIR``): attaching to it, stopping it
(with what a killed numaspark left) and reading its status, from its directory's state file."""

from __future__ import annotations

from pathlib import Path

from numaspark.errors import UsageError
from numaspark.spark.standalone import STATE_FILE, Cluster, stop_cluster_state
from numaspark.supervise.ledger import reap
from numaspark.supervise.processes import supervised


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


def start_kept_yarn(
    directory: Path,
    nodemanagers: int,
    memory_mb: int,
    vcores: int,
    minimum_mb: int,
    host: str,
    say=None,
    site: Path | None = None,
) -> Cluster:
    """``numaspark yarn up``: a mini YARN that outlives this process (``numaspark yarn down``
    or ``cluster down`` stops it); one that fails half-way, or is interrupted, is stopped
    whole."""
    with supervised() as tracker:
        cluster = Cluster.yarn_mini(
            directory,
            tracker,
            nodemanagers,
            memory_mb,
            vcores,
            minimum_mb,
            host,
            kept=True,
            on_progress=say,
            site=site,
        )
        tracker.release_all()
    return cluster
