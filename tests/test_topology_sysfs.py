"""This machine's topology from the kernel's sysfs, where hwloc is not installed: the same
topology lstopo gives here (same fingerprint), and, for the multi-node servers of
shared/topologies (this machine has one node), a copy of the sysfs files each server's
kernel would show, written from its hwloc XML and read back."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import run_cli, topology_file

from numaspark import records
from numaspark.errors import ToolMissingError
from numaspark.hosts import Host, Local, host_topology
from numaspark.placement import Binder
from numaspark.topology import Topology, load_machine, load_synthetic, load_xml, read_sysfs
from numaspark.topology.cgroup import read_cgroup_limits
from numaspark.topology.sysfs import SOURCE

pytestmark = pytest.mark.integration

#: real servers whose sysfs the kernel would show as hwloc saw them: two and eight nodes
#: (NUMA logical order differing from the OS order), offline CPUs, SMT siblings far apart
SERVERS = [
    "24em64t-2n6c2t-pci.xml",
    "32em64t-2n8c2t-pci-noio.xml",
    "16amd64-4distances.xml",
    "16em64t-4s2c2t-offlines.xml",
    "96em64t-4n4d3ca2co-pci.xml",
]


def test_sysfs_gives_what_lstopo_gives_on_this_machine():
    hwloc = load_machine()
    assert hwloc.source == "this machine" and hwloc.hwloc_version  # lstopo is installed here
    ours = read_sysfs(cgroup=read_cgroup_limits(), hostname=hwloc.hostname)
    assert ours.source == SOURCE and ours.hwloc_version is None
    assert ours.fingerprint == hwloc.fingerprint
    mine, theirs = records.dump(ours), records.dump(hwloc)
    for key in ("source", "hwloc_version", "fingerprint"):
        mine.pop(key), theirs.pop(key)
    assert mine == theirs


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def fake_sysfs(topo: Topology, root: Path) -> Path:
    """The sysfs and proc files a kernel shows for ``topo`` (the subset numaspark reads)."""
    cpu, node = root / "sys/devices/system/cpu", root / "sys/devices/system/node"
    _write(cpu / "online", str(topo.online_cpus))
    _write(cpu / "present", str(topo.complete_cpus))
    cpuinfo = []
    for core in topo.cores:
        package = topo.packages[core.package]
        for pu in core.cpus:
            _write(cpu / f"cpu{pu}/topology/physical_package_id", str(package.os_index))
            _write(cpu / f"cpu{pu}/topology/core_id", str(core.os_index))
            _write(cpu / f"cpu{pu}/topology/thread_siblings_list", str(core.cpus))
            if core.l3 is not None:
                cache = topo.l3[core.l3]
                index = cpu / f"cpu{pu}/cache/index3"
                for name, value in (
                    ("level", "3"),
                    ("type", "Unified"),
                    ("shared_cpu_list", str(cache.cpus)),
                    ("size", f"{cache.size // 1024}K"),
                ):
                    _write(index / name, value)
            model = f"model name\t: {package.cpu_model}\n" if package.cpu_model else ""
            cpuinfo.append(f"processor\t: {pu}\n{model}")
    _write(root / "proc/cpuinfo", "\n".join(cpuinfo))
    online = sorted(n.os_index for n in topo.nodes)
    _write(node / "online", ",".join(map(str, online)))
    for n in topo.nodes:
        _write(node / f"node{n.os_index}/cpulist", str(n.cpus))
        _write(
            node / f"node{n.os_index}/meminfo",
            f"Node {n.os_index} MemTotal:       {(n.memory or 0) // 1024} kB",
        )
        if topo.distances is not None:
            _write(
                node / f"node{n.os_index}/distance",
                " ".join(str(topo.distance(n.os_index, m)) for m in online),
            )
    _write(root / "proc/self/cgroup", "0::/")
    _write(root / "sys/fs/cgroup/cpuset.cpus.effective", str(topo.allowed_cpus))
    _write(root / "sys/fs/cgroup/cpuset.mems.effective", str(topo.allowed_nodes))
    return root


def _by_os_index(topo: Topology) -> dict:
    """What the plan is made of, independent of hwloc's logical order."""
    package = {p.logical_index: p.os_index for p in topo.packages}
    l3 = {d.logical_index: str(d.cpus) for d in topo.l3}
    return {
        "nodes": sorted((n.os_index, n.memory, str(n.cpus), n.allowed) for n in topo.nodes),
        "cores": sorted(
            (str(c.cpus), c.os_index, package[c.package], c.node, l3.get(c.l3)) for c in topo.cores
        ),
        "pus": sorted(
            (p.os_index, str(topo.cores[p.core].cpus), p.node, p.allowed) for p in topo.pus
        ),
        "packages": sorted(
            (p.os_index, str(p.cpus), str(p.nodes), p.cpu_model) for p in topo.packages
        ),
        "sets": [
            str(topo.complete_cpus),
            str(topo.online_cpus),
            str(topo.allowed_cpus),
            str(topo.allowed_nodes),
        ],
        "distances": {
            (a, b): topo.distance(a, b) for a in topo.distance_nodes for b in topo.distance_nodes
        },
    }


def fake_pci(topo: Topology, root: Path) -> Path:
    """The PCI functions of ``topo``'s devices as the kernel shows them: class, ids, numa_node
    (-1 for none known), and the OS devices the kernel names (network interfaces, InfiniBand
    devices, DRM cards, NVMe namespaces; CUDA, NVML and OpenCL are hwloc's libraries' names)."""
    for device in topo.devices:
        where = root / "sys/bus/pci/devices" / device.pci_busid
        vendor, device_id = device.pci_id.split(":")
        _write(where / "class", f"0x{device.pci_class}00")
        _write(where / "vendor", f"0x{vendor}")
        _write(where / "device", f"0x{device_id}")
        _write(where / "numa_node", str(-1 if device.node is None else device.node))
        for name in device.names:
            if name.startswith(("eth", "ib", "en")):
                (where / "net" / name).mkdir(parents=True)
            elif name.startswith(("mlx", "hfi")):
                (where / "infiniband" / name).mkdir(parents=True)
            elif name.startswith("card"):
                (where / "drm" / name).mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    "name",
    [
        "nvidiaDGX2.xml",
        "32em64t-2n8c2t-pci-wholeio.xml",
        "power8gpudistances.xml",
        "24em64t-2n6c2t-pci.xml",
        "96em64t-4n4d3ca2co-pci.xml",
    ],
)
def test_a_servers_devices_read_from_sysfs_as_from_its_hwloc_xml(name, tmp_path):
    """The same PCI devices, kinds and nodes, and the NICs' names; a GPU's name is hwloc's
    (nvml0, cuda0) only where hwloc had its GPU libraries. The one difference: a VGA
    controller that computes only by hwloc's OpenCL backend (wholeio's Radeon) is a display
    to sysfs, which sees no OpenCL."""
    hwloc = load_xml(topology_file(name))
    ours = read_sysfs(fake_pci(hwloc, fake_sysfs(hwloc, tmp_path)))
    opencl_only = {
        d.pci_busid
        for d in hwloc.devices
        if d.pci_class == "0300" and d.kind == "gpu" and not d.pci_id.startswith("10de")
    }

    def seen(topo: Topology) -> list[tuple]:
        return [
            (d.pci_busid, d.node, d.pci_class, d.pci_id)
            + ((d.kind,) if d.pci_busid not in opencl_only else ())
            + ((d.name, d.names) if d.kind == "nic" else ())
            for d in topo.devices
        ]

    assert hwloc.devices and seen(ours) == seen(hwloc)


@pytest.mark.parametrize("name", SERVERS)
def test_a_servers_sysfs_reads_as_its_hwloc_xml(name, tmp_path):
    hwloc = load_xml(topology_file(name))
    ours = read_sysfs(fake_sysfs(hwloc, tmp_path))
    assert len(ours.nodes) > 1 or name.startswith("16em64t")  # the offline CPUs' server
    assert _by_os_index(ours) == _by_os_index(hwloc)
    # the same logical order too, hence the same fingerprint, except where hwloc orders by
    # what sysfs does not show: NUMA nodes out of OS order, offline CPUs' packages
    same_order = [n.os_index for n in hwloc.nodes] == sorted(n.os_index for n in hwloc.nodes)
    if same_order and not hwloc.offline_cpus:
        assert [(str(c.cpus), c.package) for c in ours.cores] == [
            (str(c.cpus), c.package) for c in hwloc.cores
        ]
        assert ours.fingerprint == hwloc.fingerprint


def test_without_hwloc_this_machine_comes_from_sysfs_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.path.dirname(os.__file__)}")  # no lstopo
    topo = load_machine()
    assert topo.source == SOURCE and topo.hostname == os.uname().nodename
    assert topo.fingerprint == read_sysfs(cgroup=read_cgroup_limits()).fingerprint
    with pytest.raises(ToolMissingError, match="needs hwloc's lstopo-no-graphics"):
        load_synthetic("pack:2 core:2")


def test_the_topology_command_says_where_it_read_the_machine():
    proc = run_cli("topology")
    assert proc.returncode == 0, proc.stderr
    assert "read by hwloc" in proc.stdout


def test_a_host_without_hwloc_answers_with_numasparks_reading_of_its_sysfs(tmp_path):
    """What a host over SSH runs, run by this machine's shell with no lstopo on the PATH (the
    SSH hosts themselves are tests/test_hosts.py's, in network namespaces)."""
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "sh").symlink_to("/bin/sh")
    host = Host("bare", "127.0.0.1", python=sys.executable)
    path = os.environ["PATH"]
    os.environ["PATH"] = str(bare)
    try:
        topology = host_topology(Local(host))
    finally:
        os.environ["PATH"] = path
    assert topology.source == "host:bare (sysfs)"
    assert topology.fingerprint == load_machine().fingerprint
    assert Binder.on_host(None, "/opt/py/bin/python") == Binder("numaspark", "/opt/py/bin/python")
    assert Binder.on_host("/usr/bin/numactl", "python3").kind == "numactl"
