"""probe: the machine's memory system, measured (bandwidth and latency per CPU node x memory node).

For every pair (CPUs of node i, memory on node j) it runs membench.c under
``numactl --cpunodebind=i --membind=j``: STREAM's copy/scale/add/triad with
one OpenMP thread per allowed CPU of node i, and a pointer chase pinned to one
CPU of node i. The matrices are saved with the topology fingerprint; runs on
the same machine place their memory bandwidth, where counters can estimate
it, in the constant (<40%), linear (40-80%) or exponential (>80%) region of
the sustained maximum (Awan et al.).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from numaspark.errors import NumasparkError, ToolMissingError, UsageError
from numaspark.placement import Binder, bindexec_argv
from numaspark.topology import CpuSet, Topology

SOURCE = Path(__file__).resolve().parent / "membench.c"
PROBE_SCHEMA = "numaspark.probe/1"
KERNELS = ("copy", "scale", "add", "triad")


def membench_path() -> Path:
    """The compiled kernel: built next to this Python (the venv) by setup, or on first use."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return Path(sys.prefix) / "lib" / "numaspark" / f"membench-{digest}"


def build_membench(force: bool = False) -> Path:
    target = membench_path()
    if target.exists() and not force:
        return target
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        raise ToolMissingError(
            "numaspark probe compiles a small C kernel: install a C compiler "
            "(apt-get install gcc) and run it again"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    proc = subprocess.run(
        [compiler, "-O2", "-fopenmp", "-o", str(partial), str(SOURCE)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise NumasparkError(f"compiling {SOURCE.name} failed: {lines[-1] if lines else '?'}")
    partial.replace(target)
    return target


@dataclass(frozen=True)
class ProbeCommand:
    kind: str  # "bandwidth" or "latency"
    cpu_node: int
    mem_node: int
    argv: list[str]
    env: dict[str, str]


def plan_probe(
    topology: Topology,
    elements: int,
    loads: int,
    latency_bytes: int,
    repeat: int = 5,
    exe: str = "membench",
    binder: Binder | None = None,
) -> list[ProbeCommand]:
    """The commands for every (CPU node, memory node) pair; CPUs only where allowed. Bound
    with numactl (commands for another machine, or where it is installed), else with
    numaspark's own binder."""
    commands = []
    cpu_nodes = [n for n in topology.nodes if n.has_cpus and n.allowed]
    mem_nodes = [n for n in topology.nodes if n.allowed]
    for cpu_node in cpu_nodes:
        cpus = cpu_node.cpus & topology.allowed_cpus
        if not len(cpus):
            continue
        for mem_node in mem_nodes:
            bind = _bind(binder, cpus, f"--cpunodebind={cpu_node.os_index}", mem_node.os_index)
            commands.append(
                ProbeCommand(
                    "bandwidth",
                    cpu_node.os_index,
                    mem_node.os_index,
                    [*bind, exe, "bandwidth", str(elements), str(repeat)],
                    {"OMP_NUM_THREADS": str(len(cpus)), "OMP_PROC_BIND": "spread"},
                )
            )
            first = min(cpus)
            commands.append(
                ProbeCommand(
                    "latency",
                    cpu_node.os_index,
                    mem_node.os_index,
                    [
                        *_bind(
                            binder, CpuSet([first]), f"--physcpubind={first}", mem_node.os_index
                        ),
                        exe,
                        "latency",
                        str(latency_bytes),
                        str(loads),
                    ],
                    {"OMP_NUM_THREADS": "1"},
                )
            )
    return commands


def _bind(binder: Binder | None, cpus: CpuSet, numactl_cpus: str, mem_node: int) -> list[str]:
    if binder is None or binder.kind == "numactl":
        return [binder.path if binder else "numactl", numactl_cpus, f"--membind={mem_node}"]
    return bindexec_argv(cpus, "bind", CpuSet([mem_node]), binder.path)


def default_elements(topology: Topology) -> int:
    """STREAM's rule: each array at least 4x all the last-level cache; at least 16 Mi elements."""
    l3 = sum(d.size or 0 for d in topology.l3)
    return max(16 * 2**20, 4 * l3 // 8)


def probe_commands(
    topology: Topology,
    size: int | None,
    latency_bytes: int,
    loads: int,
    repeat: int,
    exe: str,
    binder: Binder | None = None,
) -> list[ProbeCommand]:
    """``plan_probe`` for the options of ``numaspark probe`` (``size``: bytes per STREAM
    array, None for STREAM's rule), with their bounds checked."""
    elements = size // 8 if size else default_elements(topology)
    if elements < 1024 or latency_bytes < 4096 or loads < 1 or repeat < 1:
        raise UsageError("--size, --latency-size, --loads and --repeat are too small to measure")
    commands = plan_probe(topology, elements, loads, latency_bytes, repeat, exe=exe, binder=binder)
    if not commands:
        raise UsageError("no NUMA node has CPUs this process may use: nothing to probe")
    return commands


def run_probe(commands: list[ProbeCommand], on_progress=None) -> dict:
    """Run the commands one at a time (they would disturb each other); the matrices."""
    results = []
    for i, command in enumerate(commands, 1):
        if on_progress:
            on_progress(i, len(commands), command)
        proc = subprocess.run(
            command.argv,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **command.env},
        )
        if proc.returncode != 0:
            raise NumasparkError(
                f"{' '.join(command.argv)} failed: {(proc.stderr.strip() or '?').splitlines()[-1]}"
            )
        results.append(
            {"cpu_node": command.cpu_node, "mem_node": command.mem_node, **json.loads(proc.stdout)}
        )
    return matrices(results)


def matrices(results: list[dict]) -> dict:
    """Rows: CPU node; columns: memory node. Bandwidth in MB/s per kernel, latency in ns."""
    cpu_nodes = sorted({r["cpu_node"] for r in results})
    mem_nodes = sorted({r["mem_node"] for r in results})

    def matrix(kind: str, key: str) -> list[list[float | None]]:
        table = {(r["cpu_node"], r["mem_node"]): r.get(key) for r in results if r["kind"] == kind}
        return [[table.get((i, j)) for j in mem_nodes] for i in cpu_nodes]

    return {
        "cpu_nodes": cpu_nodes,
        "mem_nodes": mem_nodes,
        "bandwidth_mbps": {k: matrix("bandwidth", f"{k}_mbps") for k in KERNELS},
        "latency_ns": matrix("latency", "ns_per_load"),
        "raw": results,
    }


def save_probe(found: dict, topology: Topology, path: Path | None = None) -> Path:
    path = path or probe_path(topology.fingerprint)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "schema": PROBE_SCHEMA,
        "topology_fingerprint": topology.fingerprint,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **found,
    }
    path.write_text(json.dumps(document, indent=2))
    return path


def probe_path(fingerprint: str) -> Path:
    root = Path(os.environ.get("NUMASPARK_CACHE", Path.home() / ".cache" / "numaspark"))
    return root / f"probe-{fingerprint}.json"


def load_probe(fingerprint: str) -> dict | None:
    path = probe_path(fingerprint)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


def sustained_bandwidth_bps(probe: dict) -> float | None:
    """The best local triad bandwidth of the machine, in bytes/s."""
    triad = probe.get("bandwidth_mbps", {}).get("triad") or []
    local = [
        row[j]
        for i, row in enumerate(triad)
        for j in range(len(row))
        if probe["cpu_nodes"][i] == probe["mem_nodes"][j] and row[j] is not None
    ]
    values = local or [v for row in triad for v in row if v is not None]
    return max(values) * 1e6 if values else None


def bandwidth_region(used_bps: float, sustained_bps: float) -> str:
    """Awan et al.'s regions of memory-bandwidth use: constant, linear, exponential."""
    share = used_bps / sustained_bps
    if share < 0.40:
        return "constant"
    if share <= 0.80:
        return "linear"
    return "exponential"
