"""Read hwloc XML (version 2) into a `Topology`, and ask lstopo for the XML.

hwloc is the authority on topology: numaspark never probes sysfs for the
structure itself. It only reads the XML that ``lstopo-no-graphics --of xml``
writes (for this machine, a saved file, or a synthetic description). The XML
format is stable and documented (hwloc2.dtd); parsing it here avoids binding to
libhwloc's C API, for which no maintained Python binding exists.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import ToolMissingError, UsageError
from numaspark.topology.cpuset import CpuSet
from numaspark.topology.devices import hwloc_devices
from numaspark.topology.model import (
    CacheDomain,
    CgroupLimits,
    Core,
    NumaNode,
    Package,
    Pu,
    Topology,
)

LSTOPO = "lstopo-no-graphics"
LSTOPO_TIMEOUT_S = 60.0  # the largest real servers take well under a second

# NUMA node subtypes that are memory without CPUs of their own, even though
# hwloc gives them the cpuset of the CPUs near them.
_MEMORY_ONLY_SUBTYPES = {"MCDRAM", "HBM", "NVM", "SPM", "GPUMemory", "CXL-DRAM"}


def lstopo_xml(input_spec: str | None = None) -> str:
    """Run lstopo and return its XML: this machine when ``input_spec`` is None."""
    exe = shutil.which(LSTOPO)
    if exe is None:
        what = "this machine" if input_spec is None else repr(input_spec)
        raise ToolMissingError(
            f"reading {what} needs hwloc's {LSTOPO}, which is not on the "
            "PATH: install hwloc (apt-get install hwloc-nox); this machine's "
            "own topology is read from sysfs without it"
        )
    # --disallowed keeps CPUs and nodes outside our cgroup in the output, so the
    # topology shows the whole machine and the allowed sets separately. I/O stays in (no
    # --no-io): lstopo keeps the PCI devices that matter, GPUs and NICs (topology/devices.py).
    argv = [exe, "--of", "xml", "--disallowed"]
    if input_spec is not None:
        argv[1:1] = ["-i", input_spec]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=LSTOPO_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:  # run() killed lstopo: nothing is left running
        what = "this machine" if input_spec is None else repr(input_spec)
        raise UsageError(
            f"hwloc took more than {LSTOPO_TIMEOUT_S:.0f} s to read {what}: describe "
            "a smaller machine, or export its XML with lstopo"
        ) from None
    if proc.returncode != 0 or "<topology" not in proc.stdout:
        reason = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
        what = "this machine" if input_spec is None else repr(input_spec)
        found = re.search(r"cannot import XML version (\d+(\.\d+)?)", reason)
        hint = f"; {_export_hint(found.group(1))}" if found else ""
        raise UsageError(f"hwloc could not read {what}: {reason}{hint}")
    return proc.stdout


def _export_hint(version: str) -> str:
    if version.split(".")[0].isdigit() and int(version.split(".")[0]) >= 3:
        return (
            "export a version 2 file on the source machine with 'lstopo --of xml "
            "--export-xml-flags v2 FILE.xml' (hwloc 3), or read it there with hwloc 3"
        )
    return f"convert it with '{LSTOPO} -i FILE --of xml > new.xml' (hwloc 2)"


def parse_xml(
    text: str, source: str, *, memory_known: bool = True, cgroup: CgroupLimits | None = None
) -> Topology:
    """Parse hwloc 2 XML text. ``memory_known=False`` drops node sizes (synthetic defaults)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UsageError(f"{source}: not valid XML ({exc})") from None
    if root.tag != "topology":
        raise UsageError(f"{source}: not an hwloc topology (root element <{root.tag}>)")
    version = root.get("version", "1.0")
    if not version.startswith("2"):
        raise UsageError(
            f"{source}: hwloc XML version {version} is not supported; {_export_hint(version)}"
        )
    machine = root.find("object")
    if machine is None or machine.get("type") != "Machine":
        raise UsageError(f"{source}: no Machine object in the hwloc XML")
    builder = _Builder(memory_known=memory_known)
    builder.walk(machine, package=None, l3=None, core=None)
    return builder.topology(root, machine, source, cgroup)


@dataclass
class _Builder:
    memory_known: bool
    packages: list[dict] = field(default_factory=list)
    nodes: list[dict] = field(default_factory=list)
    l3: list[CacheDomain] = field(default_factory=list)
    cores: list[dict] = field(default_factory=list)
    pus: list[dict] = field(default_factory=list)
    gp_to_node: dict[int, int] = field(default_factory=dict)

    def walk(self, obj: ET.Element, package: int | None, l3: int | None, core: int | None) -> None:
        kind = obj.get("type")
        cpus = CpuSet.from_hwloc(obj.get("cpuset", "0x0"))
        if kind == "Package":
            package = len(self.packages)
            self.packages.append(
                {
                    "os_index": _int(obj.get("os_index")),
                    "cpus": cpus,
                    "model": _info(obj, "CPUModel"),
                }
            )
        elif kind == "L3Cache" and obj.get("subtype") != "MemorySideCache":
            # A memory-side cache (KNL MCDRAM cache mode) caches memory, not CPUs:
            # it is not a CPU cache-sharing domain.
            l3 = len(self.l3)
            self.l3.append(CacheDomain(l3, _int(obj.get("cache_size")), cpus))
        elif kind == "Core" or (kind == "PU" and core is None):
            # A PU without a Core above it (some platforms) counts as its own core.
            core = len(self.cores)
            self.cores.append(
                {"os_index": _int(obj.get("os_index")), "cpus": cpus, "package": package, "l3": l3}
            )
        if kind == "PU":
            self.pus.append({"os_index": int(obj.get("os_index", "0")), "core": core})
        self._add_memory_children(obj, package)
        for child in obj.findall("object"):
            # memory was taken above, a MemCache's NUMA nodes with it: not walked again
            if child.get("type") not in ("NUMANode", "MemCache"):
                self.walk(child, package, l3, core)

    def _add_memory_children(self, obj: ET.Element, package: int | None) -> None:
        """NUMA nodes hang off their parent; the first plain one owns the parent's CPUs."""
        memory = [c for c in obj.findall("object") if c.get("type") == "NUMANode"]
        # MemCache objects (hwloc >= 2.1) wrap NUMA nodes: look through them.
        for cache in (c for c in obj.findall("object") if c.get("type") == "MemCache"):
            memory.extend(c for c in cache.iter("object") if c.get("type") == "NUMANode")
        owner_taken = False
        for child in memory:
            subtype = child.get("subtype")
            local = CpuSet.from_hwloc(child.get("cpuset", "0x0"))
            cpu_owner = not owner_taken and subtype not in _MEMORY_ONLY_SUBTYPES and bool(local)
            owner_taken = owner_taken or cpu_owner
            memory_bytes = _int(child.get("local_memory")) if self.memory_known else None
            self.nodes.append(
                {
                    "os_index": int(child.get("os_index", "0")),
                    "memory": memory_bytes or None,
                    "cpus": local if cpu_owner else CpuSet(),
                    "subtype": subtype,
                    "package": package,
                }
            )
            if child.get("gp_index"):
                self.gp_to_node[int(child.get("gp_index", "0"))] = int(child.get("os_index", "0"))

    def topology(
        self, root: ET.Element, machine: ET.Element, source: str, cgroup: CgroupLimits | None
    ) -> Topology:
        online = CpuSet.from_hwloc(machine.get("cpuset", "0x0"))
        complete = CpuSet.from_hwloc(machine.get("complete_cpuset", machine.get("cpuset", "0x0")))
        allowed_cpus = CpuSet.from_hwloc(
            machine.get("allowed_cpuset", machine.get("cpuset", "0x0"))
        )
        allowed_cpus = allowed_cpus & online
        all_nodes = CpuSet(n["os_index"] for n in self.nodes)
        allowed_nodes_text = machine.get("allowed_nodeset")
        allowed_nodes = (
            CpuSet.from_hwloc(allowed_nodes_text) & all_nodes if allowed_nodes_text else all_nodes
        )
        nodes = self._numa_nodes(allowed_nodes)
        node_of_cpu = {cpu: n.os_index for n in nodes for cpu in n.cpus}
        order, matrix = _numa_distances(root, self.gp_to_node)
        return Topology(
            source=source,
            hostname=_info(machine, "HostName"),
            architecture=_info(machine, "Architecture"),
            hwloc_version=_info(machine, "hwlocVersion"),
            packages=self._packages(),
            nodes=nodes,
            l3=tuple(self.l3),
            cores=self._cores(node_of_cpu),
            pus=self._pus(node_of_cpu, allowed_cpus),
            complete_cpus=complete,
            online_cpus=online,
            allowed_cpus=allowed_cpus,
            allowed_nodes=allowed_nodes,
            distance_nodes=order,
            distances=matrix,
            cgroup=cgroup,
            devices=hwloc_devices(machine, all_nodes),
        )

    def _numa_nodes(self, allowed_nodes: CpuSet) -> tuple[NumaNode, ...]:
        return tuple(
            NumaNode(
                os_index=n["os_index"],
                logical_index=i,
                memory=n["memory"],
                cpus=n["cpus"],
                subtype=n["subtype"],
                allowed=n["os_index"] in allowed_nodes,
            )
            for i, n in enumerate(self.nodes)
        )

    def _cores(self, node_of_cpu: dict[int, int]) -> tuple[Core, ...]:
        return tuple(
            Core(
                logical_index=i,
                os_index=c["os_index"],
                cpus=c["cpus"],
                package=c["package"],
                node=node_of_cpu.get(c["cpus"].first()) if c["cpus"] else None,
                l3=c["l3"],
            )
            for i, c in enumerate(self.cores)
        )

    def _pus(self, node_of_cpu: dict[int, int], allowed_cpus: CpuSet) -> tuple[Pu, ...]:
        return tuple(
            Pu(
                os_index=p["os_index"],
                logical_index=i,
                core=p["core"],
                node=node_of_cpu.get(p["os_index"]),
                allowed=p["os_index"] in allowed_cpus,
            )
            for i, p in enumerate(self.pus)
        )

    def _packages(self) -> tuple[Package, ...]:
        """Each package with its NUMA nodes: those that hang off it, and those sharing its
        CPUs (a node's CPUs can be all of a package's, or a part of them)."""
        return tuple(
            Package(
                os_index=p["os_index"],
                logical_index=i,
                cpus=p["cpus"],
                nodes=CpuSet(
                    n["os_index"]
                    for n in self.nodes
                    if n["package"] == i or not n["cpus"].isdisjoint(p["cpus"])
                ),
                cpu_model=p["model"],
            )
            for i, p in enumerate(self.packages)
        )


def _numa_distances(
    root: ET.Element, gp_to_node: dict[int, int]
) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...] | None]:
    """The NUMA latency matrix (``distances2``, preferring the one named NUMALatency)."""
    candidates = [d for d in root.findall("distances2") if d.get("type") == "NUMANode"]
    if not candidates:
        return (), None
    chosen = next((d for d in candidates if d.get("name") == "NUMALatency"), candidates[0])
    count = int(chosen.get("nbobjs", "0"))
    indexes_el = chosen.find("indexes")
    indexes = [int(x) for x in (indexes_el.text or "").split()] if indexes_el is not None else []
    if chosen.get("indexing") == "gp":
        indexes = [gp_to_node.get(i, i) for i in indexes]
    values = [int(x) for v in chosen.findall("u64values") for x in (v.text or "").split()]
    if len(indexes) != count or len(values) != count * count:
        return (), None
    matrix = tuple(tuple(values[r * count : (r + 1) * count]) for r in range(count))
    return tuple(indexes), matrix


def _info(obj: ET.Element, name: str) -> str | None:
    for info in obj.findall("info"):
        if info.get("name") == name:
            return info.get("value")
    return None


def _int(text: str | None) -> int | None:
    return int(text) if text not in (None, "") else None


def read_xml_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"topology file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read topology file {path}: {exc}") from None
