"""The topology drawing of the HTML report: an SVG of the packages, NUMA nodes, cores and
hardware threads of a topology, each JVM's CPUs in its colour (the plots' palette)."""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass

from numaspark.placement import Binding, JvmPlacement, Placement
from numaspark.report.plots import PALETTE
from numaspark.topology import Topology
from numaspark.topology.cpuset import CpuSet
from numaspark.topology.model import Core, NumaNode, Package


def topology_svg(topology: Topology, placement: Placement) -> str:
    """Packages, NUMA nodes, cores and hardware threads; each JVM's CPUs in its colour."""
    # the standalone driver runs no task: the executors only
    return jvms_svg(topology, placement.executors)


def jvms_svg(topology: Topology, jvms: tuple[JvmPlacement, ...]) -> str:
    """`topology_svg` of these JVMs (a placement's, or those a log's reports describe)."""
    drawing = _TopologyDrawing.of(topology, jvms)
    parts, y, width = [], 10, 0
    for package in topology.packages or [Package(None, 0, CpuSet(), CpuSet(), None)]:
        package_parts, package_w, nodes_h = drawing.package(package, y)
        parts += package_parts
        width = max(width, package_w + 20)
        y += 26 + nodes_h + _PAD + 16
    legend_y = y + 8
    parts += drawing.legend(legend_y)
    height = legend_y + len(drawing.jvms) * 20 + 10
    # packages first so nodes draw over them
    packages = [p for p in parts if 'class="package"' in p]
    others = [p for p in parts if 'class="package"' not in p]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(width, 520)}" height="{height}" '
        f'class="topology">{"".join(packages + others)}</svg>'
    )


# the topology drawing's measures in pixels: cores in a row of a node, a hardware thread's
# width, a core's height, and the padding inside a box
_CORES_PER_ROW, _PU_W, _CORE_H, _PAD = 8, 34, 34, 10


@dataclass(frozen=True)
class _TopologyDrawing:
    """What the SVG of one placement on one topology draws from: each CPU's JVM, with
    bound JVMs claiming a CPU before unbound ones that may run there too."""

    topology: Topology
    jvms: tuple[JvmPlacement, ...]
    bound: set[int]  # the numbers of the JVMs that are bound
    owner: dict[int, int]  # CPU to the number of the JVM drawn on it
    cores_by_node: dict[int | None, list[Core]]

    @classmethod
    def of(cls, topology: Topology, jvms: tuple[JvmPlacement, ...]) -> _TopologyDrawing:
        bound = {number for number, jvm in enumerate(jvms) if jvm.binding is not Binding.NONE}
        owner: dict[int, int] = {}
        for number in sorted(range(len(jvms)), key=lambda n: n not in bound):  # bound first
            for cpu in jvms[number].cpus:
                owner.setdefault(cpu, number)
        cores_by_node: dict[int | None, list[Core]] = {}
        for core in topology.cores:
            cores_by_node.setdefault(core.node, []).append(core)
        return cls(topology, jvms, bound, owner, cores_by_node)

    def package(self, package: Package, top: int) -> tuple[list[str], int, int]:
        """A package's box at height ``top`` with its nodes in a row inside it; its parts,
        its width and the height of its nodes' row."""
        on_package = [n for n in self.topology.nodes if n.os_index in package.nodes]
        parts, x, row_h = [], 10 + _PAD, 0
        for node in on_package or self.topology.nodes:  # a package without nodes: all of them
            node_parts, node_w, node_h = self.node(node, x, top + 26)
            parts += node_parts
            x += node_w + _PAD
            row_h = max(row_h, node_h)
        package_w = x - 10
        model = package.cpu_model or ""
        parts.append(
            f'<rect x="10" y="{top}" width="{package_w}" height="{row_h + 26 + _PAD}" '
            f'rx="8" class="package"/><text x="18" y="{top + 17}" class="label">'
            f"Package L#{package.logical_index} {html.escape(model)}</text>"
        )
        return parts, package_w, row_h

    def node(self, node: NumaNode, x: int, y: int) -> tuple[list[str], int, int]:
        """A NUMA node's box with its cores in rows; its parts, its width and its height."""
        cores = self.cores_by_node.get(node.os_index, [])
        ways = max((len(c.cpus) for c in cores), default=1)
        core_w = ways * _PU_W + 8
        columns = min(_CORES_PER_ROW, max(1, len(cores)))
        title = _node_title(self.topology, node)
        node_w = max(columns * (core_w + 6) + 2 * _PAD, 8 * len(title) + 16)
        node_h = 34 + ((len(cores) + _CORES_PER_ROW - 1) // _CORES_PER_ROW) * (_CORE_H + 6) + _PAD
        parts = [
            f'<rect x="{x}" y="{y}" width="{node_w}" height="{node_h}" rx="6" '
            f'class="node"/><text x="{x + 8}" y="{y + 18}" class="label">'
            f"{html.escape(title)}</text>"
        ]
        for index, core in enumerate(cores):
            cx = x + _PAD + (index % _CORES_PER_ROW) * (core_w + 6)
            cy = y + 28 + (index // _CORES_PER_ROW) * (_CORE_H + 6)
            parts.append(
                f'<rect x="{cx}" y="{cy}" width="{core_w}" height="{_CORE_H}" '
                f'rx="3" class="core"><title>core L#{core.logical_index}</title></rect>'
            )
            parts += (self.pu(cpu, cx + 4 + k * _PU_W, cy) for k, cpu in enumerate(core.cpus))
        return parts, node_w, node_h

    def pu(self, cpu: int, x: int, core_y: int) -> str:
        """A hardware thread in its JVM's colour (dashed: an unbound JVM may run there), white
        where it is free, grey where this process may not use it."""
        allowed = cpu in self.topology.allowed_cpus
        who = self.owner.get(cpu)
        fill = (
            PALETTE[who % len(PALETTE)]
            if who is not None
            else ("#ffffff" if allowed else "#d9d9d9")
        )
        dash = "" if who is None or who in self.bound else ' stroke-dasharray="3,2"'
        tip = (
            f"P#{cpu}: {self.jvms[who].role} {self.jvms[who].index}"
            if who is not None
            else f"P#{cpu}: {'free' if allowed else 'not allowed'}"
        )
        return (
            f'<rect x="{x}" y="{core_y + 4}" width="{_PU_W - 4}" '
            f'height="{_CORE_H - 8}" fill="{fill}" class="pu"{dash}>'
            f"<title>{html.escape(tip)}</title></rect>"
            f'<text x="{x + (_PU_W - 4) / 2}" y="{core_y + _CORE_H / 2 + 4}" '
            f'class="pu-label">{cpu}</text>'
        )

    def legend(self, top: int) -> list[str]:
        """One line per JVM: its colour, its CPUs, nodes and binding."""
        parts = []
        for number, jvm in enumerate(self.jvms):
            text = (
                f"{jvm.role} {jvm.index}: CPUs {jvm.cpus}, nodes "
                f"{jvm.nodes}, {jvm.binding.value}"
                + ("" if number in self.bound else " (unbound: may run on any allowed CPU)")
            )
            parts.append(
                f'<rect x="12" y="{top + number * 20}" width="14" height="14" '
                f'fill="{PALETTE[number % len(PALETTE)]}"/><text x="32" '
                f'y="{top + number * 20 + 12}" class="legend">{html.escape(text)}</text>'
            )
        return parts


def _node_title(topology: Topology, node: NumaNode) -> str:
    memory = node.memory
    return (
        f"NUMA node P#{node.os_index}"
        + (f" · {memory / 2**30:.1f} GiB" if memory else "")
        + ("" if node.has_cpus else " · memory only")
        + _devices_on(topology, node.os_index)
    )


def _devices_on(topology: Topology, node: int) -> str:
    """A node's devices in its title, counted by kind (" · 8 gpu, 2 nic"); names in the JSON."""
    kinds = Counter(d.kind for d in topology.devices if d.node == node and d.kind != "display")
    return (" · " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))) if kinds else ""
