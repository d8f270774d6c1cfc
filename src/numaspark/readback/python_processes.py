"""A PySpark JVM's Python processes as a run records them under that JVM (``python`` of its
effective placement): the executor's ``pyspark.daemon`` and the workers it forks, and in
local mode the driver's own Python process (the user's script). One shape whoever read them:
numaspark from /proc (readback/tree.py) or the affinity plugin from inside the executor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from numaspark.records import Shape

DAEMON = "daemon"
WORKER = "worker"
DRIVER = "driver"


@dataclass(frozen=True)
class PythonProcess:
    """One Python process of a JVM, as a run records it under that JVM (``python``): read by
    numaspark from /proc, or by the affinity plugin from inside the executor."""

    pid: int
    role: str  # "daemon", "worker" (forked by the daemon, or a simple worker), "driver"
    cpus: str | None = None  # Cpus_allowed_list (its main thread)
    mems: str | None = None
    policy: str | None = None  # numa_maps policy of most mappings
    bytes_per_node: dict[str, int] = field(default_factory=dict)  # resident pages per node
    cpu_s: float | None = None  # its user+system CPU time at its last sighting (all threads)
    rss_bytes: int | None = None
    threads: int | None = None
    ended: bool = False  # gone before the run ended (seen, then not)

    # what was not read is left out; a report that leaves out the pid or role reads as a worker
    __json__: ClassVar[Shape] = Shape(
        omit_none=("cpus", "mems", "policy", "cpu_s", "rss_bytes", "threads"),
        absent={"pid": 0, "role": WORKER},
    )


def python_cpu_s(
    processes: list[PythonProcess] | tuple[PythonProcess, ...],
    roles: tuple[str, ...] = (DAEMON, WORKER),
) -> float:
    """The CPU time of ``processes`` in ``roles``, each at its last sighting. A worker that
    lived and ended between two samples is not in it: the daemon ignores SIGCHLD, so the
    kernel reaps its workers and adds their time to no parent's (checked here)."""
    return round(sum(p.cpu_s or 0.0 for p in processes if p.role in roles), 2)
