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

A JVM whose ``tree`` is known (a Spark application's) has its Python processes (PySpark's
daemon and workers; a local-mode driver's script) read at every tick: they come and go
(``spark.python.worker.reuse=false``), so every one seen is kept, at its last reading, and
marked ended once gone (readback/python_processes.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from numaspark.placement import Binding, JvmPlacement
from numaspark.readback.proc import EffectiveJvm, EffectivePlacement, differences, read_effective
from numaspark.readback.python_processes import WORKER, PythonProcess
from numaspark.readback.tree import CLK_TCK, ProcText, python_processes, read_tree_here
from numaspark.topology import CpuSet

Reader = Callable[[int], "tuple[EffectivePlacement | None, dict]"]
# a JVM's descendants as text, and its host's clock ticks per second
TreeReader = Callable[[int], "tuple[list[ProcText], int]"]


def read_here(pid: int) -> tuple[EffectivePlacement | None, dict]:
    """A process of this machine, from /proc; no further facts."""
    return read_effective(pid), {}


def tree_here(pid: int) -> tuple[list[ProcText], int]:
    """A process's descendants on this machine, from /proc."""
    return read_tree_here(pid), CLK_TCK


@dataclass(frozen=True)
class Watched:
    """A process to read: its pid, what it was planned, and how its host's /proc is read."""

    pid: int
    planned: JvmPlacement
    read: Reader = read_here
    tree: TreeReader | None = None  # how its descendants are read (None: not PySpark's)
    driver: bool = False  # a local-mode driver JVM: its Python child is the user's script


class Watch(threading.Thread):
    """Samples the JVMs ``sources`` names while they run; ``check`` says why the run must
    stop (a host lost, executors that keep dying), or None."""

    def __init__(
        self,
        sources: Callable[[], list[Watched]],
        check: Callable[[], str | None] | None = None,
        refresh: bool = False,
        interval_s: float = 0.5,
    ) -> None:
        super().__init__(daemon=True)
        self.sources = sources
        self.check = check
        self.refresh = refresh
        self.interval_s = interval_s
        self.failure: str | None = None
        self._seen: dict[int, EffectiveJvm] = {}
        self._planned: dict[int, JvmPlacement] = {}
        self._python: dict[int, dict[int, PythonProcess]] = {}  # JVM pid -> every one seen
        self._at_once: dict[int, int] = {}  # JVM pid -> most workers seen alive at once
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
        sources = self.sources()  # asked once a tick: on hosts it is a command over SSH
        for watched in sources:
            known = self._seen.get(watched.pid)
            if known is not None and not self.refresh and known.policy != "unknown":
                continue
            actual, facts = watched.read(watched.pid)
            if actual is None or (known is not None and actual.policy == "unknown"):
                continue
            self._planned[watched.pid] = watched.planned
            self._seen[watched.pid] = EffectiveJvm.read(watched.planned, actual, facts)
        for watched in sources:
            if watched.tree is not None and watched.pid in self._seen:
                self._sample_python(watched)

    def _sample_python(self, watched: Watched) -> None:
        tree, ticks = watched.tree(watched.pid)
        alive = {p.pid: p for p in python_processes(watched.pid, tree, watched.driver, ticks)}
        known = self._python.setdefault(watched.pid, {})
        for pid, proc in list(known.items()):
            if pid not in alive and not proc.ended:
                known[pid] = dataclasses.replace(proc, ended=True)
        for pid, proc in alive.items():
            before = known.get(pid)
            if before is not None and proc.policy == "unknown":  # exiting: no mappings left
                proc = dataclasses.replace(before, cpu_s=max(before.cpu_s or 0, proc.cpu_s or 0))
            known[pid] = proc
        workers = sum(1 for p in alive.values() if p.role == WORKER)
        self._at_once[watched.pid] = max(self._at_once.get(watched.pid, 0), workers)

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
        return sorted(
            (self._with_python(pid, e) for pid, e in list(self._seen.items())),
            key=lambda e: (e.index, e.pid),
        )

    def _with_python(self, pid: int, entry: EffectiveJvm) -> EffectiveJvm:
        found = sorted(self._python.get(pid, {}).values(), key=lambda p: p.pid)
        if not found:
            return entry
        planned = self._planned[pid]
        strayed = [line for p in found for line in python_differences(planned, p)]
        return dataclasses.replace(
            entry,
            python=tuple(found),
            python_at_once=self._at_once[pid],
            differences=(*entry.differences, *strayed),
        )

    def seen(self, pid: int) -> EffectiveJvm | None:
        return self._seen.get(pid)

    def warnings(self) -> list[str]:
        return [d for e in self.effective() for d in e.differences]


def python_differences(planned: JvmPlacement, proc: PythonProcess) -> list[str]:
    """How a JVM's Python process departs from the JVM's plan (its CPUs, its memory policy)."""
    if proc.policy in (None, "unknown"):
        return []  # read before it had mappings: nothing to judge
    actual = EffectivePlacement(
        proc.pid, CpuSet.parse(proc.cpus or ""), CpuSet.parse(proc.mems or ""), proc.policy
    )
    name = f"{planned.name}'s Python {proc.role} {proc.pid}"
    return [
        line.replace(f"{planned.name}:", f"{name}:", 1) for line in differences(planned, actual)
    ]
