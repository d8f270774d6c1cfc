"""A cluster's executors and workers, read back: which of a worker's children are executor
JVMs, and where one of them really runs, from its /proc text (read here, or fetched from its
host over SSH by the cluster, spark/standalone.py); and, on hosts, its resident bytes per
node."""

from __future__ import annotations

from collections.abc import Iterable

from numaspark import records
from numaspark.placement import JvmPlacement
from numaspark.readback.proc import (
    EffectiveJvm,
    EffectivePlacement,
    pages_per_node,
    parse_effective,
)

EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def executors_under(
    children: Iterable[tuple[int, int, str]], workers: dict[int, int]
) -> dict[int, list[int]]:
    """The executor JVMs among ``children`` (ppid, pid, command line) of ``workers`` (pid ->
    worker index), by worker index."""
    found: dict[int, list[int]] = {}
    for ppid, pid, args in children:
        if EXECUTOR_CLASS in args:
            found.setdefault(workers[ppid], []).append(pid)
    return found


def bytes_per_node(maps: str) -> dict[str, int]:
    """Resident bytes per NUMA node (keyed as JSON keys them), from numa_maps text."""
    return {str(n): b for n, b in sorted(pages_per_node(maps).items())}


def effective_of(
    pid: int, text: tuple[str, str] | None, host: str | None = None
) -> tuple[EffectivePlacement | None, dict]:
    """Where ``pid`` really runs, from its /proc ``text`` (status, numa_maps; None: gone); and,
    on ``host`` (None: this machine), that host and its resident bytes per node."""
    if text is None:
        return None, {}
    status, maps = text
    if host is None:
        return parse_effective(pid, status, maps), {}
    return parse_effective(pid, status, maps), {
        "host": host,
        "bytes_per_node": bytes_per_node(maps),
    }


def worker_reading(
    pid: int, text: tuple[str, str] | None, planned: JvmPlacement | None
) -> tuple[dict | None, dict[str, int]]:
    """A worker's reading for ``cluster status``: where it really runs against its
    ``planned`` executor (None: not planned, or its /proc ``text`` gone), as recorded; and its
    resident bytes per node."""
    effective = None
    if text is not None and planned is not None:
        effective = records.dump(EffectiveJvm.read(planned, parse_effective(pid, *text)))
    return effective, bytes_per_node(text[1]) if text else {}
