"""What the affinity plugin reported from inside one application's JVMs, read in one place
whichever way it came: the driver's ``placement.jsonl`` of a run numaspark made
(``PLACEMENT_FILE``), or the ``NumaPlacementEvent`` lines the driver wrote into Spark's own
event log (jvm/contract.json's ``placement_event``), which is all a History Server keeps of an
application numaspark did not launch.

Each report is one executor's (or the driver's) placement at one moment: its host, CPUs,
memory policy, resident bytes per node, the share of them on its home nodes, tasks pinned and
migrated, its Python processes; an executor's first report carries its host's topology and
each carries the host's ``kernel.numa_balancing``. ``PluginReports`` turns them into what the
rules and views read: each JVM's latest placement, the nodes its CPUs span on its host, its
pages' locality, its Python processes over the run, each host's balancing state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from numaspark import records
from numaspark.jsonlines import read_json_lines
from numaspark.placement.plugin import PlacementReport
from numaspark.readback.proc import EffectiveJvm
from numaspark.readback.python_processes import WORKER, PythonProcess, python_cpu_s
from numaspark.topology import CpuSet

DRIVER = "driver"  # the driver's own reports, in the event log only


@dataclass(frozen=True)
class ReportedJvm:
    """One JVM over the run, as its reports say: the latest, its host's nodes (node number
    to CPUs, from a first report of that host), and every Python process it listed."""

    latest: PlacementReport
    host_nodes: dict[str, CpuSet] | None
    python: tuple[PythonProcess, ...] = ()
    python_at_once: int = 0
    python_rss_peak: int = 0  # the most its Python processes held at once, bytes
    jvm_rss_peak: int = 0  # the most the JVM itself held, bytes

    @property
    def name(self) -> str:
        executor = self.latest.executor
        return DRIVER if executor == DRIVER else f"executor {executor}"

    @property
    def nodes(self) -> CpuSet | None:
        """The host's nodes its allowed CPUs lie on (None: its host's topology unknown)."""
        if self.host_nodes is None or not self.latest.cpus:
            return None
        cpus = set(CpuSet.parse(self.latest.cpus))
        return CpuSet(int(n) for n, on in self.host_nodes.items() if cpus & set(on))

    @property
    def placed_by(self) -> str | None:
        """Who placed it on its node, at node level (None: not bound at node level, or its
        host's topology unknown): ``plugin`` (the plugin bound its threads from inside),
        ``cgroup`` (its CPUs were within part of its host before it started, and the plugin
        left them: on Kubernetes the kubelet's CPU Manager, on YARN its cgroups), ``nothing``
        (its whole host was one node: nothing to place)."""
        binding = self.latest.binding or ""
        if binding.startswith(("every thread", "moved from")):
            return "plugin"
        if not binding.startswith("already confined") or not self.host_nodes:
            return None
        cpus = set(CpuSet.parse(self.latest.cpus or ""))
        host = set().union(*(set(c) for c in self.host_nodes.values()))
        return "cgroup" if cpus and cpus < host else "nothing"

    @property
    def device_nodes(self) -> CpuSet:
        """The known nodes of the devices Spark gave it (empty: none, or none known)."""
        return CpuSet(d["node"] for d in self.latest.devices or () if _node(d) is not None)

    @property
    def nic_node(self) -> int | None:
        """The node of the interface its traffic to the driver leaves by (None: not known)."""
        return _node(self.latest.nic or {})

    @property
    def bound_nodes(self) -> CpuSet | None:
        """The nodes it was bound to: chosen from inside (node level), or the nodes its
        memory policy names; None when unbound (memory wherever the kernel puts it)."""
        if self.latest.chosen_nodes:
            return CpuSet.parse(self.latest.chosen_nodes)
        policy = self.latest.policy or ""
        kind, _, nodes = policy.partition(":")
        if kind in ("bind", "preferred", "prefer") and nodes:
            return CpuSet.parse(nodes.split("=")[0])
        return None


@dataclass
class PluginReports:
    """Every report of one application, in the order they were made."""

    reports: list[PlacementReport] = field(default_factory=list)

    @classmethod
    def of(cls, lines: Iterable[dict]) -> PluginReports:
        return cls([PlacementReport.from_json(line) for line in lines if isinstance(line, dict)])

    @classmethod
    def read(cls, path: Path) -> PluginReports:
        """The reports of a run's ``placement.jsonl`` (none when it is missing)."""
        return cls.of(read_json_lines(path) if path.exists() else [])

    def __bool__(self) -> bool:
        return bool(self.reports)

    def hosts(self) -> dict[str, dict]:
        """Each host's topology as a first report of it gave it (sysfs inside the host)."""
        found: dict[str, dict] = {}
        for report in self.reports:
            if report.host_topology and report.host not in found:
                found[str(report.host)] = report.host_topology
        return found

    def balancing(self) -> dict[str, str]:
        """Each host's ``kernel.numa_balancing`` as its latest report read it."""
        return {str(r.host): r.numa_balancing for r in self.reports if r.numa_balancing}

    def jvms(self, driver: bool = False) -> list[ReportedJvm]:
        """Each executor (and the driver's own, if ``driver``) over the run, by id."""
        hosts = {
            host: {str(n): CpuSet.parse(c) for n, c in (topology.get("nodes") or {}).items()}
            for host, topology in self.hosts().items()
        }
        by_jvm: dict[str, list[PlacementReport]] = {}
        for report in self.reports:
            if driver or report.executor != DRIVER:
                by_jvm.setdefault(str(report.executor), []).append(report)
        return [
            _over_the_run(reports, hosts.get(str(reports[-1].host)))
            for _, reports in sorted(by_jvm.items(), key=lambda kv: _executor_order(kv[0]))
        ]

    def effective(self) -> list[EffectiveJvm]:
        """The executors as a run records them (``effective_placement``, source plugin): each
        one's latest report, with every Python process it listed, ended when its latest
        report did not list it."""
        found = []
        for index, jvm in enumerate(self.jvms()):
            entry = EffectiveJvm.reported(jvm.latest, index)
            entry = dataclasses.replace(entry, placed_by=jvm.placed_by)
            if jvm.python:
                entry = dataclasses.replace(
                    entry, python=jvm.python, python_at_once=jvm.python_at_once
                )
            found.append(entry)
        return found

    def cpu_gap(self) -> dict | None:
        """The JVMs' own CPU time and their Python processes', in seconds (the executors'
        latest reports); None when the plugin did not measure the JVMs' (an older jar)."""
        jvms = self.jvms()
        if not jvms or any(j.latest.cpu_s is None for j in jvms):
            return None
        pythons = [p for j in jvms for p in j.python]
        return {
            "os_cpu_s": round(sum(j.latest.cpu_s or 0.0 for j in jvms), 2),
            "python_cpu_s": python_cpu_s(pythons) if pythons else None,
        }


def _node(part: dict) -> int | None:
    """A device's or an interface's node as the plugin reported it (None: not known)."""
    node = part.get("node") if isinstance(part, dict) else None
    return node if isinstance(node, int) and node >= 0 else None


def _executor_order(executor: str) -> tuple[int, str]:
    return (0, f"{int(executor):09d}") if executor.isdigit() else (1, executor)


def _over_the_run(reports: list[PlacementReport], host_nodes: dict | None) -> ReportedJvm:
    """One JVM's reports (in order) as one `ReportedJvm`."""
    seen: dict[int, PythonProcess] = {}
    at_once = python_peak = jvm_peak = 0
    for report in reports:
        listed = [records.load(PythonProcess, p) for p in report.python or ()]
        seen.update({p.pid: p for p in listed})
        at_once = max(at_once, sum(1 for p in listed if p.role == WORKER))
        python_peak = max(python_peak, sum(p.rss_bytes or 0 for p in listed))
        jvm_peak = max(jvm_peak, sum((report.bytes_per_node or {}).values()))
    last = {p.get("pid") for p in reports[-1].python or ()}
    python = tuple(dataclasses.replace(p, ended=p.pid not in last) for _, p in sorted(seen.items()))
    return ReportedJvm(reports[-1], host_nodes, python, at_once, python_peak, jvm_peak)
