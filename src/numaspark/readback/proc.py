"""Where a process really runs: its allowed CPUs and nodes, and its memory policy, from /proc;
and `EffectiveJvm`, the one shape a run records it in, however it was read."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from numaspark.placement import Binding, JvmPlacement, MemPolicy
from numaspark.placement.plugin import PlacementReport
from numaspark.readback.python_processes import PythonProcess
from numaspark.records import Shape
from numaspark.topology import CpuSet

_NODE_PAGES = re.compile(r"\bN(\d+)=(\d+)")
_PAGE_KB = re.compile(r"\bkernelpagesize_kB=(\d+)")
_POLICY_NAMES = {
    "bind": MemPolicy.BIND,
    "prefer": MemPolicy.PREFERRED,
    "preferred": MemPolicy.PREFERRED,
    "prefer (many)": MemPolicy.PREFERRED,
    "interleave": MemPolicy.INTERLEAVE,
    "weighted interleave": MemPolicy.INTERLEAVE,
    "local": MemPolicy.LOCAL,
}
# The policy field of a numa_maps line, as the kernel's mpol_to_str() writes it: a mode (two
# of them with a space), optional flags after "=" ("static", "relative", "balancing", joined
# by "|"), and the nodes after ":" ("default" and "local" have none). hwloc-bind --membind
# gives "prefer (many):0" (MPOL_PREFERRED_MANY, Linux 5.15+).
_FIELD = (
    r"(?P<mode>default|prefer \(many\)|prefer|bind|weighted interleave|interleave|local)"
    r"(?:=(?P<flags>[a-z|]+))?(?::(?P<nodes>[0-9,-]*))?"
)
_POLICY = re.compile(_FIELD)
_LINE = re.compile(rf"^[0-9a-f]+ (?P<field>{_FIELD})(?= |$)")


@dataclass(frozen=True)
class Policy:
    """One numa_maps policy field, parsed: ``bind=static:0-1`` is mode "bind", flags
    ("static",), nodes 0-1."""

    mode: str  # the kernel's name: "default", "prefer", "prefer (many)", "bind", ...
    flags: tuple[str, ...]
    nodes: CpuSet

    @property
    def kind(self) -> MemPolicy | None:
        """numaspark's policy for it; None for "default" (the kernel's local allocation)."""
        return _POLICY_NAMES.get(self.mode)


def parse_policy(text: str) -> Policy | None:
    """A policy as numa_maps writes it (``bind:0``, ``prefer (many):0``, ``bind=static:0``,
    ``local``, ``default``); None when ``text`` is not one (``unknown``: nothing read)."""
    found = _POLICY.fullmatch(text.strip())
    if found is None:
        return None
    flags = tuple(found["flags"].split("|")) if found["flags"] else ()
    return Policy(found["mode"], flags, CpuSet.parse(found["nodes"] or ""))


@dataclass(frozen=True)
class EffectivePlacement:
    pid: int
    cpus: CpuSet  # Cpus_allowed_list
    mems: CpuSet  # Mems_allowed_list
    policy: str  # numa_maps policy of most mappings: "default", "bind:0", "interleave:0-1", ...


@dataclass(frozen=True)
class EffectiveJvm:
    """Where one JVM that ran tasks really ran, as a run records it (``effective_placement``):
    read by numaspark from /proc here or on its host over SSH (``source`` ``proc``), or
    reported from inside the executor by the affinity plugin (``plugin``, on a cluster
    numaspark did not start). The JSON is the one numaspark.run/1 wrote."""

    jvm: str  # "driver", "executor 0", ...
    index: int | None
    pid: int | None
    cpus: str | None  # Linux list format
    mems: str | None
    policy: str | None  # "bind:0", "interleave:0-1", "default", ...
    source: str | None = "proc"  # None: a record older than the field (read from /proc)
    planned_cpus: str = ""
    planned_mem_nodes: str = ""
    differences: tuple[str, ...] = ()
    host: str | None = None  # the host it ran on, when not this one
    bytes_per_node: dict[str, int] | None = None  # its resident pages (SSH, plugin)
    # the plugin's own figures: share of pages local, tasks it pinned, tasks that moved
    local_share: float | None = None
    pinned_tasks: int | None = None
    task_migrations: int | None = None
    # level node, from inside (plugin): the nodes it chose, why, and what it applied
    chosen_nodes: str | None = None
    choice: str | None = None
    binding: str | None = None
    placed_by: str | None = None  # plugin, cgroup or nothing (plugin_reports.ReportedJvm)
    # a PySpark JVM's Python processes (daemon, workers; a local-mode driver's script), every
    # one seen while it ran, and the most seen alive at once (readback/python_processes.py)
    python: tuple[PythonProcess, ...] = ()
    python_at_once: int | None = None
    # the devices Spark gave it and the interface its traffic leaves by, each with its node, as
    # the plugin reported them (placement/plugin.py PlacementReport's devices and nic)
    devices: tuple[dict, ...] = ()
    nic: dict | None = None
    extra: dict = field(default_factory=dict)  # keys a newer numaspark wrote

    # The stored JSON: the fields a source fills, absent ones left out as before (a PySpark
    # JVM's python, an executor given devices, one whose interface was read, one at level
    # node); a record older than ``source`` was read from /proc and writes back without it.
    __json__: ClassVar[Shape] = Shape(
        omit_none=(
            *("source", "host", "bytes_per_node", "local_share", "pinned_tasks"),
            *("task_migrations", "chosen_nodes", "choice", "binding", "placed_by"),
        ),
        omit_empty=("python", "python_at_once", "devices", "nic"),
        absent={"jvm": "?", "source": None}
        | dict.fromkeys(("index", "pid", "cpus", "mems", "policy")),
        extra="extra",
    )

    @classmethod
    def read(
        cls, planned: JvmPlacement, actual: EffectivePlacement, facts: dict | None = None
    ) -> EffectiveJvm:
        """A JVM numaspark placed, as /proc shows it (``facts``: its host and pages, when
        read over SSH)."""
        facts = facts or {}
        return cls(
            jvm=planned.name,
            index=planned.index,
            pid=actual.pid,
            cpus=str(actual.cpus),
            mems=str(actual.mems),
            policy=actual.policy,
            source="proc",
            planned_cpus=str(planned.cpus),
            planned_mem_nodes=str(planned.mem_nodes),
            differences=tuple(differences(planned, actual)),
            host=facts.get("host"),
            bytes_per_node=facts.get("bytes_per_node"),
        )

    @classmethod
    def reported(cls, report: PlacementReport, index: int) -> EffectiveJvm:
        """An executor as the affinity plugin reported it from inside (``source`` plugin)."""
        return cls(
            jvm=f"executor {report.executor}",
            index=index,
            pid=report.pid,
            host=report.host,
            cpus=report.cpus,
            mems=report.mems,
            policy=report.policy,
            bytes_per_node=report.bytes_per_node or {},
            local_share=report.local_share,
            pinned_tasks=report.pinned_tasks,
            task_migrations=report.task_migrations,
            chosen_nodes=report.chosen_nodes,
            choice=report.choice,
            binding=report.binding,
            devices=tuple(report.devices or ()),
            nic=report.nic,
            source="plugin",
        )


def read_effective(pid: int, proc: Path = Path("/proc")) -> EffectivePlacement | None:
    """Read ``pid``'s placement; None when it has gone."""
    try:
        status = (proc / str(pid) / "status").read_text()
    except OSError:
        return None
    try:
        maps = (proc / str(pid) / "numa_maps").read_text()
    except OSError:
        maps = ""
    return parse_effective(pid, status, maps)


def parse_effective(pid: int, status: str, maps: str) -> EffectivePlacement:
    """A placement from the text of ``/proc/PID/status`` and ``/proc/PID/numa_maps`` (read
    here, or on another host over SSH)."""
    cpus = re.search(r"^Cpus_allowed_list:\s*(\S*)", status, re.MULTILINE)
    mems = re.search(r"^Mems_allowed_list:\s*(\S*)", status, re.MULTILINE)
    policies = Counter(_policy_field(line) for line in maps.splitlines() if line.strip())
    policies.pop(None, None)
    return EffectivePlacement(
        pid=pid,
        cpus=CpuSet.parse(cpus.group(1)) if cpus else CpuSet(),
        mems=CpuSet.parse(mems.group(1)) if mems else CpuSet(),
        policy=policies.most_common(1)[0][0] if policies else "unknown",
    )


def differences(planned: JvmPlacement, actual: EffectivePlacement) -> list[str]:
    """How ``actual`` departs from the plan, in words; empty when it matches."""
    found = []
    if planned.binding is not Binding.NONE and actual.cpus != planned.cpus:
        found.append(f"{planned.name}: planned CPUs {planned.cpus}, runs on {actual.cpus}")
    if planned.mem_policy is not None:
        policy = parse_policy(actual.policy)
        expected = planned.mem_policy
        if policy is None:
            ok = False
        elif expected is MemPolicy.LOCAL:
            ok = policy.mode in ("local", "default")
        else:
            ok = policy.kind is expected and (
                not planned.mem_nodes or policy.nodes == planned.mem_nodes
            )
        if not ok:
            want = f"{expected.value}:{planned.mem_nodes}" if planned.mem_nodes else expected.value
            found.append(f"{planned.name}: planned memory policy {want}, has {actual.policy}")
    return found


def _policy_field(line: str) -> str | None:
    """The policy of one numa_maps line as the kernel wrote it (``prefer (many):0``)."""
    found = _LINE.match(line)
    return found["field"] if found else None


def pages_per_node(numa_maps: str) -> dict[int, int]:
    """Resident bytes per NUMA node from the text of a numa_maps file."""
    found: dict[int, int] = {}
    for line in numa_maps.splitlines():
        size = _PAGE_KB.search(line)
        page = int(size.group(1)) * 1024 if size else 4096
        for node, pages in _NODE_PAGES.findall(line):
            found[int(node)] = found.get(int(node), 0) + int(pages) * page
    return found
