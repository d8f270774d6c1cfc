"""A standalone cluster numaspark did not start (``--master spark://HOST:PORT``): what it has,
so that a run is planned for the cluster, never for this machine.

The master's JSON status (``/json/`` on its web UI) lists its workers with their cores and
memory, and what running applications use of them. ``spark://HOST:PORT`` does not give the
web UI's port: the default (8080) on the master's host is tried, or ``--master-ui URL``.
(`master_json` and `alive_workers` read it for a cluster numaspark started, too.)

A layout is planned on the alive workers with the most free cores, as one machine whose
NUMA nodes are those workers (a worker does not say its NUMA nodes; the master spreads
executors over the workers), and then checked against every alive worker's free
cores and memory the way the master schedules: an executor takes its cores and
its heap (``spark.executor.memory``; the standalone master counts no overhead) from one
worker. A layout the cluster cannot hold is refused before anything is submitted.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from numaspark.errors import UsageError
from numaspark.placement import Placement
from numaspark.placement.cluster_capacity import ClusterCapacity, Fitting, HostHas
from numaspark.topology import Topology

DEFAULT_UI_PORT = 8080
# a standalone worker gives an executor its cores and its heap (no overhead is counted)
FITTING = Fitting(cluster="the cluster", host="worker", listed="alive worker(s)")


@dataclass(frozen=True)
class Worker:
    host: str
    cores: int  # free now: the worker's cores less what running applications hold
    memory_mb: int  # free now, likewise


@dataclass(frozen=True)
class StandingCluster:
    """The alive workers of a standalone cluster, as its master's status page lists them."""

    master: str
    ui: str
    workers: tuple[Worker, ...]

    @classmethod
    def read(cls, master: str, ui: str | None = None) -> StandingCluster:
        """Ask the master's web UI (``ui``, or the default port on the master's host)."""
        address = master.removeprefix("spark://").split(",")[0].rpartition(":")[0]
        url = (ui or f"http://{address}:{DEFAULT_UI_PORT}").rstrip("/")
        state = _status(url)
        if state is None:
            raise UsageError(
                f"--master {master}: its web UI does not answer at {url}, so the "
                "cluster's workers are unknown: give --master-ui http://HOST:PORT "
                "(the master's web UI)"
            )
        workers = tuple(
            Worker(
                host=str(w.get("host", "?")),
                cores=int(w.get("cores", 0)) - int(w.get("coresused", 0)),
                memory_mb=int(w.get("memory", 0)) - int(w.get("memoryused", 0)),
            )
            for w in state.get("workers", [])
            if w.get("state") == "ALIVE"
        )
        if not workers:
            raise UsageError(
                f"--master {master}: the master has no alive worker ({url}): start "
                "a worker, or give the master that has them"
            )
        return cls(master=master, ui=url, workers=workers)

    def has(self) -> ClusterCapacity:
        """What the cluster has (placement/cluster_capacity.py), which plans it."""
        return ClusterCapacity(
            kind="standalone",
            address=self.master,
            fitting=FITTING,
            ui=self.ui,
            hosts=tuple(HostHas(w.host, w.cores, w.memory_mb) for w in self.workers),
        )

    def topology(self) -> Topology:
        """The alive workers with the most free cores as one machine, a node each
        (`ClusterCapacity.topology`; their memory is the cluster's to share out: `place` sizes the
        heap)."""
        return self.has().topology()

    def place(self, plan: Callable[[Topology], Placement], asked_heap: int | None) -> Placement:
        """``plan`` on the largest workers; the heap, when not asked for, the most that every
        worker holds for the executors the master spreads onto it; then `check_fits`."""
        return self.has().place(plan, asked_heap)

    def check_fits(self, placement: Placement) -> None:
        """Refuse, in one line naming what is missing, a placement whose executors the alive
        workers cannot hold now."""
        self.has().check_fits(placement)

    def describe(self) -> str:
        return self.has().describe()


def _status(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{url}/json/", timeout=5) as r:
            return json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def master_json(address: str, webui: int) -> dict | None:
    """A standalone master's JSON status page, or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://{address}:{webui}/json/", timeout=2) as r:
            return json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def alive_workers(state: dict | None) -> int:
    """How many workers a master's status page says are alive."""
    return sum(1 for w in (state or {}).get("workers", []) if w.get("state") == "ALIVE")
