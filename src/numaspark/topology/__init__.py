"""see: the machine's topology, from hwloc (or, for this machine without hwloc, the kernel's
sysfs). `load()` is the one way to get a `Topology`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.topology.cgroup import read_cgroup_limits
from numaspark.topology.cpuset import CpuSet
from numaspark.topology.hwloc import LSTOPO, lstopo_xml, parse_xml, read_xml_file
from numaspark.topology.model import (
    TOPOLOGY_SCHEMA,
    CacheDomain,
    CgroupLimits,
    Core,
    NumaNode,
    Package,
    Pu,
    Topology,
)
from numaspark.topology.sysfs import read_sysfs

__all__ = [
    "TOPOLOGY_SCHEMA",
    "CacheDomain",
    "CgroupLimits",
    "Core",
    "CpuSet",
    "NumaNode",
    "Package",
    "Pu",
    "Topology",
    "load",
    "load_machine",
    "load_synthetic",
    "load_xml",
    "read_sysfs",
]


def load_machine() -> Topology:
    """This machine, as lstopo sees it, with this process's cgroup limits; from the kernel's
    sysfs where hwloc is not installed (its `Topology.source` says which: docs/install.md)."""
    if shutil.which(LSTOPO) is not None:
        return parse_xml(lstopo_xml(), "this machine", cgroup=read_cgroup_limits())
    return read_sysfs(cgroup=read_cgroup_limits(), hostname=os.uname().nodename)


def load_xml(path: str | Path) -> Topology:
    """A topology saved on another server with ``lstopo-no-graphics --of xml``."""
    path = Path(path)
    text = read_xml_file(path)
    if 'version="2' not in text[:400]:
        text = lstopo_xml(str(path))  # hwloc 1.x XML: let hwloc convert it
    return parse_xml(text, f"xml:{path}")


def load_synthetic(description: str) -> Topology:
    """An hwloc synthetic description, e.g. ``"pack:2 numa:2 core:12 pu:2"``.

    hwloc invents 1 GB per NUMA node unless the description gives
    ``numa:2(memory=64GB)``; an invented size is reported as unknown.
    """
    if not description.strip():
        raise UsageError(
            '--synthetic is empty: describe a machine, e.g. "pack:2 numa:2 core:12 pu:2"'
        )
    _refuse_absurd(description)
    return parse_xml(
        lstopo_xml(description),
        f"synthetic:{description}",
        memory_known="memory=" in description,
    )


#: The largest synthetic machine described (hwloc builds every object: a million PUs takes
#: minutes). The biggest servers today have a few thousand hardware threads.
MAX_SYNTHETIC_PUS = 65_536


def _refuse_absurd(description: str) -> None:
    """Refuse a synthetic machine too large to build, before hwloc spends minutes on it."""
    import re

    total = 1
    for count in re.findall(r"[A-Za-z0-9]+:(\d+)", description):
        total *= int(count)
        if total > MAX_SYNTHETIC_PUS:
            raise UsageError(
                f"--synthetic {description!r} describes more than "
                f"{MAX_SYNTHETIC_PUS:,} objects at its lowest level: describe a "
                'real machine\'s size (e.g. "pack:2 numa:2 core:12 pu:2")'
            )


def load(xml: str | Path | None = None, synthetic: str | None = None) -> Topology:
    """The topology the CLI options ask for: ``--xml``, ``--synthetic`` or this machine."""
    if xml is not None and synthetic is not None:
        raise UsageError("give either --xml or --synthetic, not both")
    if xml is not None:
        return load_xml(xml)
    if synthetic is not None:
        return load_synthetic(synthetic)
    return load_machine()
