"""Synthetic topologies, bad sources, cgroup limits, and this machine's real topology."""

import os
from pathlib import Path

import pytest

from numaspark.errors import UsageError
from numaspark.topology import CpuSet, load, load_machine, load_synthetic
from numaspark.topology.cgroup import read_cgroup_limits
from numaspark.topology.hwloc import parse_xml


@pytest.mark.parametrize(
    ("spec", "nodes", "cores", "pus"),
    [
        ("pack:2 numa:2 core:6 pu:2", 4, 24, 48),
        ("pack:2 numa:2 core:12 pu:2", 4, 48, 96),
        ("pack:4 core:8 pu:1", 1, 32, 32),
        ("numa:8 core:4 pu:4", 8, 32, 128),
    ],
)
def test_synthetic(spec, nodes, cores, pus):
    topo = load_synthetic(spec)
    assert (len(topo.nodes), len(topo.cores), len(topo.pus)) == (nodes, cores, pus)
    assert topo.source == f"synthetic:{spec}"
    assert topo.total_memory is None  # hwloc's invented 1 GB per node is not trusted


def test_synthetic_with_memory():
    topo = load_synthetic("pack:2 numa:1(memory=32GB) core:4 pu:2")
    assert [n.memory for n in topo.nodes] == [32 * 10**9, 32 * 10**9]  # hwloc reads GB as 10^9


def test_bad_sources_are_usage_errors(tmp_path: Path):
    with pytest.raises(UsageError, match="unknown object type"):
        load_synthetic("pack:2 socket-ish:2")
    with pytest.raises(UsageError, match="does not exist"):
        load(xml=tmp_path / "missing.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<nonsense/>")
    with pytest.raises(UsageError, match="hwloc could not read"):
        load(xml=bad)  # not hwloc 2 XML, so hwloc itself is asked, and refuses it
    with pytest.raises(UsageError, match="not an hwloc topology"):
        parse_xml('<nonsense version="2.0"/>', "t")
    with pytest.raises(UsageError, match="either --xml or --synthetic"):
        load(xml=bad, synthetic="pack:1")
    with pytest.raises(UsageError, match="version 1.0"):
        parse_xml('<topology version="1.0"><object type="Machine"/></topology>', "t")


def test_cgroup_v2_limits(tmp_path: Path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cgroup").write_text("0::/job\n")
    root = tmp_path / "cg"
    (root / "job").mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu memory\n")
    (root / "job" / "cpu.max").write_text("250000 100000\n")
    (root / "job" / "memory.max").write_text(str(8 << 30) + "\n")
    limits = read_cgroup_limits(tmp_path / "proc" / "cgroup", root)
    assert limits.version == 2 and limits.cpu_quota == 2.5 and limits.memory_limit == 8 << 30


def test_cgroup_v1_unlimited(tmp_path: Path):
    (tmp_path / "cgroup").write_text("4:memory:/a\n1:cpu,cpuacct:/\n")
    root = tmp_path / "cg"
    (root / "memory").mkdir(parents=True)
    (root / "cpu").mkdir()
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (root / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (root / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    limits = read_cgroup_limits(tmp_path / "cgroup", root)
    assert limits.version == 1 and limits.cpu_quota is None and limits.memory_limit is None


@pytest.mark.integration
def test_this_machine_matches_the_kernel():
    """The real topology against /sys/devices/system/node and sched_getaffinity."""
    topo = load_machine()
    assert topo.allowed_cpus == CpuSet(os.sched_getaffinity(0))
    sysfs = Path("/sys/devices/system/node")
    kernel_nodes = sorted(int(p.name[4:]) for p in sysfs.glob("node[0-9]*"))
    assert sorted(n.os_index for n in topo.nodes) == kernel_nodes
    for node in topo.nodes:
        cpulist = (sysfs / f"node{node.os_index}" / "cpulist").read_text().strip()
        assert node.cpus == CpuSet.parse(cpulist)
        meminfo = (sysfs / f"node{node.os_index}" / "meminfo").read_text()
        kb = int(meminfo.split("MemTotal:")[1].split()[0])
        assert abs(node.memory - kb * 1024) < 0.02 * kb * 1024
    online = CpuSet.parse(Path("/sys/devices/system/cpu/online").read_text())
    assert topo.online_cpus == online
    assert topo.source == "this machine" and topo.cgroup is not None
