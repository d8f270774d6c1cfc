"""NUMA locality: where each JVM's pages are, and the kernel's NUMA allocation counters.

Per JVM, resident pages per node from /proc/PID/numa_maps (``N<node>=<pages>``
times the mapping's page size), and the share on the node(s) its memory is
bound to. Machine-wide, deltas of /sys/devices/system/node/node*/numastat and
of the NUMA-balancing counters in /proc/vmstat. numastat counts *allocations*
(which node a page came from, and whether that was the node asked for), not
memory *accesses*: remote access traffic needs hardware counters.
"""

from __future__ import annotations

from pathlib import Path

from numaspark.collect.base import Collector, JvmMap
from numaspark.readback.proc import pages_per_node
from numaspark.readback.python_processes import DRIVER
from numaspark.readback.tree import python_processes, read_tree_here

NUMASTAT_NOTE = "numastat counts page allocations, not memory accesses"
VMSTAT_KEYS = (
    "numa_hint_faults",
    "numa_hint_faults_local",
    "numa_pages_migrated",
    "numa_pte_updates",
)


def read_numastat(root: Path = Path("/sys/devices/system/node")) -> dict[str, dict[str, int]]:
    stats = {}
    for node_dir in sorted(root.glob("node[0-9]*")):
        try:
            text = (node_dir / "numastat").read_text()
        except OSError:
            continue
        stats[node_dir.name[4:]] = {
            k: int(v) for k, v in (line.split() for line in text.splitlines() if line.strip())
        }
    return stats


def read_vmstat(path: Path = Path("/proc/vmstat")) -> dict[str, int]:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    values = dict(line.split() for line in lines if line.startswith("numa_"))
    return {k: int(values[k]) for k in VMSTAT_KEYS if k in values}


def _python_pages(pid: int, driver: bool) -> dict:
    """The resident bytes per node of a JVM's Python workers and daemon (a local-mode
    driver's script apart), summed; none for a JVM without any. A forked worker shares the
    daemon's pages until it writes them, so shared pages count once per process."""
    python = [p for p in python_processes(pid, read_tree_here(pid), driver) if p.role != DRIVER]
    if not python:
        return {}
    total: dict[str, int] = {}
    for proc in python:
        for node, nbytes in proc.bytes_per_node.items():
            total[node] = total.get(node, 0) + nbytes
    return {"python_bytes_per_node": dict(sorted(total.items()))}


class NumaCollector(Collector):
    name = "numa"

    def sample(self, now: float, jvms: JvmMap) -> dict:
        reading = {"numastat": read_numastat(), "vmstat": read_vmstat(), "jvms": {}}
        for pid, (name, bound) in jvms.items():
            try:
                text = Path(f"/proc/{pid}/numa_maps").read_text()
            except OSError:
                continue  # gone, or numa_maps absent (a kernel without NUMA)
            per_node = pages_per_node(text)
            if not per_node:
                continue  # exited, not yet reaped: its last reading stands
            reading["jvms"][str(pid)] = {
                "name": name,
                "bytes_per_node": {str(n): b for n, b in sorted(per_node.items())},
                "bound_nodes": sorted(bound) if bound is not None else None,
                **_python_pages(pid, name == "driver"),
            }
        return reading

    def summarize(self, start: float, end: float) -> dict:
        samples = self.window(start, end)
        if not samples:
            return {}
        first, last = samples[0], samples[-1]
        summary: dict = {"note": NUMASTAT_NOTE, "jvms": []}
        summary["numastat_delta"] = {
            node: {k: v - first["numastat"].get(node, {}).get(k, 0) for k, v in counters.items()}
            for node, counters in last["numastat"].items()
        }
        summary["vmstat_delta"] = {
            k: v - first["vmstat"].get(k, 0) for k, v in last["vmstat"].items()
        }
        for pid in sorted({p for s in samples for p in s["jvms"]}, key=int):
            entry = [s for s in samples if pid in s["jvms"]][-1]["jvms"][pid]
            per_node = entry["bytes_per_node"]
            total = sum(per_node.values())
            bound = entry["bound_nodes"]
            on_bound = sum(v for n, v in per_node.items() if bound is not None and int(n) in bound)
            summary["jvms"].append(
                {
                    "name": entry["name"],
                    "pid": int(pid),
                    "bytes_per_node": per_node,
                    "resident_bytes": total,
                    "bound_nodes": bound,
                    "share_on_bound_nodes": round(on_bound / total, 4) if bound and total else None,
                    **(
                        {"python_bytes_per_node": entry["python_bytes_per_node"]}
                        if "python_bytes_per_node" in entry
                        else {}
                    ),
                }
            )
        return summary
