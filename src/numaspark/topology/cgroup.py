"""CPU quota and memory limit of this process's cgroup (v1 or v2).

hwloc already reports the cgroup's cpuset as the allowed CPU and node sets;
what it does not report is a CFS quota ("2.5 CPUs worth of time") or a memory
limit, both of which cap what executors can use without changing the cpuset.
"""

from __future__ import annotations

from pathlib import Path

from numaspark.topology.model import CgroupLimits

_UNLIMITED = 1 << 60  # cgroup v1 writes ~2^63 rounded down to a page for "no limit"


def read_cgroup_limits(
    proc_self_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> CgroupLimits | None:
    """Read the limits; None when this process has no readable cgroup."""
    try:
        lines = proc_self_cgroup.read_text().splitlines()
    except OSError:
        return None
    paths: dict[str, str] = {}
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    if (root / "cgroup.controllers").exists() and "" in paths:
        return _v2(root, paths[""])
    if "memory" in paths or "cpu" in paths:
        return _v1(root, paths)
    return None


def _v2(root: Path, path: str) -> CgroupLimits:
    directory = _existing(root, path)
    quota = None
    cpu_max = _read(directory / "cpu.max")
    if cpu_max and not cpu_max.startswith("max"):
        limit, _, period = cpu_max.partition(" ")
        quota = int(limit) / int(period or "100000")
    memory = _read(directory / "memory.max")
    memory_limit = int(memory) if memory and memory != "max" else None
    return CgroupLimits(version=2, path=path, cpu_quota=quota, memory_limit=memory_limit)


def _v1(root: Path, paths: dict[str, str]) -> CgroupLimits:
    cpu_key = next((k for k in paths if "cpu" in k.split(",") or k == "cpu"), "cpu")
    cpu_dir = _existing(root / "cpu", paths.get(cpu_key, "/"))
    quota = None
    raw_quota, raw_period = (
        _read(cpu_dir / "cpu.cfs_quota_us"),
        _read(cpu_dir / "cpu.cfs_period_us"),
    )
    if raw_quota and raw_period and int(raw_quota) > 0:
        quota = int(raw_quota) / int(raw_period)
    mem_dir = _existing(root / "memory", paths.get("memory", "/"))
    raw_mem = _read(mem_dir / "memory.limit_in_bytes")
    memory_limit = int(raw_mem) if raw_mem and int(raw_mem) < _UNLIMITED else None
    return CgroupLimits(
        version=1, path=paths.get("memory", "/"), cpu_quota=quota, memory_limit=memory_limit
    )


def _existing(base: Path, path: str) -> Path:
    """The cgroup's directory; inside a container the hierarchy is often mounted at its root."""
    candidate = base / path.lstrip("/")
    return candidate if candidate.is_dir() else base


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
