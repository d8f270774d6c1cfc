"""The watch: while a run's processes run, read where each one really runs (its host's /proc)
and stop the run when something it checks has gone wrong.

One watch serves every way numaspark starts JVMs: a Spark application (the
executors under a cluster's workers, or the local-mode driver; spark/app.py) and
``numaspark launch`` (any program, once per planned JVM; launch.py). What to
watch is asked of ``sources`` at every tick, so JVMs that appear later (an
executor a worker forks) are found; each is read once, or at every tick with
``refresh`` (launch checks binding itself, and a process under numactl is read
again once it has exec'd its program). A reading whose policy is unknown (no
numa_maps yet) is read again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from numaspark.placement import Binding, JvmPlacement
from numaspark.readback.proc import EffectiveJvm, EffectivePlacement, read_effective

Reader = Callable[[int], "tuple[EffectivePlacement | None, dict]"]


def read_here(pid: int) -> tuple[EffectivePlacement | None, dict]:
    """A process of this machine, from /proc; no further facts."""
    return read_effective(pid), {}


@dataclass(frozen=True)
class Watched:
    """A process to read: its pid, what it was planned, and how its host's /proc is read."""

    pid: int
    planned: JvmPlacement
    read: Reader = read_here


class Watch(threading.Thread):
    """Samples the JVMs ``sources`` names while they run; ``check`` says why the run must
    stop (a host lost, executors that keep dying), or None."""

    def __init__(self, sources: Callable[[], list[Watched]],
                 check: Callable[[], str | None] | None = None, refresh: bool = False,
                 interval_s: float = 0.5) -> None:  # fmt: skip
        super().__init__(daemon=True)
        self.sources = sources
        self.check = check
        self.refresh = refresh
        self.interval_s = interval_s
        self.failure: str | None = None
        self._seen: dict[int, EffectiveJvm] = {}
        self._planned: dict[int, JvmPlacement] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            with contextlib.suppress(psutil.Error, OSError):  # a JVM gone between list and read
                self.sample()
            self._stop_event.wait(self.interval_s)

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)

    def sample(self) -> None:
        """One tick: check, then read what is new (or everything, with ``refresh``)."""
        if self.failure is None and self.check is not None:
            self.failure = self.check()
        for watched in self.sources():
            known = self._seen.get(watched.pid)
            if known is not None and not self.refresh and known.policy != "unknown":
                continue
            actual, facts = watched.read(watched.pid)
            if actual is None or (known is not None and actual.policy == "unknown"):
                continue
            self._planned[watched.pid] = watched.planned
            self._seen[watched.pid] = EffectiveJvm.read(watched.planned, actual, facts)

    def jvms(self) -> dict[int, tuple[str, frozenset[int] | None]]:
        """The JVMs seen so far: pid -> (name, nodes its memory is bound to); what the
        collectors sample."""
        found = {}
        for pid, entry in list(self._seen.items()):
            planned = self._planned[pid]
            nodes = planned.mem_nodes if len(planned.mem_nodes) else planned.nodes
            bound = frozenset(nodes) if planned.binding is not Binding.NONE else None
            found[pid] = (entry.jvm, bound)
        return found

    def effective(self) -> list[EffectiveJvm]:
        return sorted(self._seen.values(), key=lambda e: (e.index, e.pid))

    def seen(self, pid: int) -> EffectiveJvm | None:
        return self._seen.get(pid)

    def warnings(self) -> list[str]:
        return [d for e in self.effective() for d in e.differences]
