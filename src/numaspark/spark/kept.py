"""A cluster kept up across runs (``numaspark cluster up DIR``): its directory's state file
says whether it is a standalone cluster here (spark/cluster.py) or one on several hosts over
SSH (spark/remote.py); attaching, stopping and reading its status ask it here, so neither
kind needs to know the other."""

from __future__ import annotations

from pathlib import Path

from numaspark.errors import UsageError
from numaspark.spark.cluster import (
    STATE_FILE,
    StandaloneCluster,
    local_cluster_status,
    stop_local_cluster_dir,
)
from numaspark.spark.remote import (
    HostsCluster,
    hosts_status,
    is_hosts_state,
    stop_hosts_cluster_dir,
)
from numaspark.supervise.ledger import reap


def attach(directory: Path) -> StandaloneCluster | HostsCluster:
    """The running cluster a directory's state file describes."""
    if is_hosts_state(directory):
        return HostsCluster.attach(directory)
    return StandaloneCluster.attach(directory)


def stop_cluster_dir(directory: Path) -> list[int]:
    """Stop whatever a cluster directory's state file names, even a half-started cluster (on
    several hosts: over SSH); and what a numaspark killed by SIGKILL left (perf stat too)."""
    reaped = [p.pid for p in reap()]
    if not (directory.resolve() / STATE_FILE).exists():
        if reaped:
            return reaped
        raise UsageError(f"no cluster state in {directory} (nothing to stop)")
    if is_hosts_state(directory):
        return stop_hosts_cluster_dir(directory)
    return sorted(set(stop_local_cluster_dir(directory) + reaped))


def cluster_status(directory: Path) -> dict:
    """The master's view of the cluster in ``directory`` and where each worker really runs."""
    if is_hosts_state(directory):
        return hosts_status(directory)
    return local_cluster_status(directory)
