"""A standalone cluster numaspark did not start (``--master spark://HOST:PORT``): what it has,
so that a run is planned for the cluster, never for this machine.

The master's JSON status (``/json/`` on its web UI) lists its workers with their cores and
memory, and what running applications use of them. ``spark://HOST:PORT`` does not give the
web UI's port: the default (8080) on the master's host is tried, or ``--master-ui URL``.

A layout is planned on the largest alive worker, as one machine of that many cores and that
much memory (a worker does not say its NUMA nodes), and then checked against every alive
worker's free cores and memory the way the master schedules: an executor takes its cores and
its heap (``spark.executor.memory``; the standalone master counts no overhead) from one
worker. A layout the cluster cannot hold is refused before anything is submitted.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace

from numaspark.errors import PlacementError, UsageError
from numaspark.placement import Placement
from numaspark.placement.planner import MAX_COMPRESSED_OOPS_HEAP, SPARK_MIN_HEAP, spark_overhead
from numaspark.topology import Topology, load_synthetic
from numaspark.units import MIB

DEFAULT_UI_PORT = 8080


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
            raise UsageError(f"--master {master}: its web UI does not answer at {url}, so the "
                             "cluster's workers are unknown: give --master-ui http://HOST:PORT "
                             "(the master's web UI)")  # fmt: skip
        workers = tuple(
            Worker(host=str(w.get("host", "?")),
                   cores=int(w.get("cores", 0)) - int(w.get("coresused", 0)),
                   memory_mb=int(w.get("memory", 0)) - int(w.get("memoryused", 0)))
            for w in state.get("workers", []) if w.get("state") == "ALIVE"
        )  # fmt: skip
        if not workers:
            raise UsageError(f"--master {master}: the master has no alive worker ({url}): start "
                             "a worker, or give the master that has them")  # fmt: skip
        return cls(master=master, ui=url, workers=workers)

    def topology(self) -> Topology:
        """The largest alive worker as one machine: one node of its free cores (its memory is
        the cluster's to share out: `place` sizes the heap)."""
        largest = max(self.workers, key=lambda w: (w.cores, w.memory_mb))
        return load_synthetic(f"package:1 numa:1 core:{max(1, largest.cores)} pu:1")

    def place(self, plan: Callable[[Topology], Placement], asked_heap: int | None) -> Placement:
        """``plan`` on the largest worker; the heap, when not asked for, the most that every
        worker holds for the executors the master spreads onto it; then `check_fits`."""
        try:
            placement = plan(self.topology())
        except (PlacementError, UsageError) as exc:
            raise UsageError(f"planned on the largest worker of the cluster at {self.master} "
                             f"({self.describe()}): {exc}") from None  # fmt: skip
        if asked_heap is None:
            executors = placement.executors
            per_worker = -(-len(executors) // len(self.workers))  # the master spreads them
            heap = min(w.memory_mb for w in self.workers) // per_worker * MIB
            heap = min(heap, MAX_COMPRESSED_OOPS_HEAP)
            if heap < SPARK_MIN_HEAP:
                raise UsageError(f"the cluster at {self.master} has {self.describe()}: "
                                 f"{per_worker} executor(s) on a worker would get "
                                 f"{heap // MIB} MB heap each, below Spark's minimum of 450 MB: "
                                 "give fewer --executors")  # fmt: skip
            jvms = tuple(replace(j, heap=heap, overhead=spark_overhead(heap)) if j.runs_tasks
                         else j for j in placement.jvms)  # fmt: skip
            notes = tuple(n for n in placement.notes if not n.startswith("node memory is unknown"))
            placement = replace(placement, jvms=jvms, notes=(*notes, (
                f"heap from the cluster: {heap // MIB} MB, the free memory of its smallest "
                f"worker shared by the {per_worker} executor(s) the master puts on it")))  # fmt: skip
        self.check_fits(placement)
        return placement

    def check_fits(self, placement: Placement) -> None:
        """Refuse, in one line naming what is missing, a placement whose executors the alive
        workers cannot hold now."""
        executors = placement.executors
        cores = max(e.cores for e in executors)
        heap_mb = max(e.heap for e in executors) // MIB
        room = room_for([(w.cores, w.memory_mb) for w in self.workers], cores, heap_mb)
        if room >= len(executors):
            return
        have = ", ".join(f"{w.host}: {w.cores} cores, {w.memory_mb} MB free" for w in self.workers)
        raise UsageError(f"the cluster at {self.master} cannot hold {len(executors)} executor(s) "
                         f"of {cores} core(s) and {heap_mb} MB heap (room for {room}; its alive "
                         f"workers: {have}): give fewer --executors, --cores-per-executor or "
                         "--memory-per-executor")  # fmt: skip

    def describe(self) -> str:
        cores = sum(w.cores for w in self.workers)
        memory = sum(w.memory_mb for w in self.workers)
        return f"{len(self.workers)} alive worker(s), {cores} cores and {memory} MB free"


def room_for(free: list[tuple[int, int]], cores: int, memory_mb: int) -> int:
    """How many executors of ``cores`` and ``memory_mb`` the machines with ``free`` (cores,
    MB) hold, none split across two (a standalone worker's or a YARN node's)."""
    return sum(max(0, min(c // max(1, cores), m // max(1, memory_mb))) for c, m in free)


def _status(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{url}/json/", timeout=5) as r:
            return json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
