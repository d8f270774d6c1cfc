"""Devices in the topology: the PCI devices that matter to a Spark host (GPUs, NICs, NVMe
drives), each with its NUMA node, from hwloc XML and from sysfs.

The multi-node servers are the real hwloc exports of shared/topologies (this machine has one
node and no GPU); the sysfs trees are small ones each test writes, as a kernel shows them.
This machine's own devices are checked only for what holds on any machine.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli, topology_file

from numaspark import records
from numaspark.topology import Topology, load_machine, load_xml, read_sysfs
from numaspark.topology.cpuset import CpuSet
from numaspark.topology.devices import classify, sysfs_devices
from numaspark.topology.hwloc import parse_xml

BUSID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def _by_node(topo: Topology, kind: str) -> dict[int | None, list[str]]:
    found: dict[int | None, list[str]] = {}
    for device in topo.devices_of(kind):
        found.setdefault(device.node, []).append(device.name)
    return found


def test_a_dgx2_has_16_gpus_8_behind_each_socket_and_its_nvswitches_are_not_gpus():
    topo = load_xml(topology_file("nvidiaDGX2.xml"))
    gpus = topo.devices_of("gpu")
    assert len(gpus) == 16
    assert _by_node(topo, "gpu") == {
        0: [f"nvml{i}" for i in range(8)],
        1: [f"nvml{i}" for i in range(8, 16)],
    }
    assert [g.index for g in gpus] == list(range(16))
    assert {g.pci_class for g in gpus} == {"0302"} and {g.pci_id for g in gpus} == {"10de:1db8"}
    # its 12 NVSwitches are PCI devices (class 0680, one read as 0000): none is kept
    assert len(topo.devices) == 16
    assert topo.devices_of("gpu", 1)[0].pci_busid == "0000:b7:00.0"


def test_one_gpu_seen_as_several_os_devices_is_one_device_and_nics_hang_off_node_1():
    """32em64t-2n8c2t-pci-wholeio.xml: every I/O object hwloc shows. Its README names one GPU
    (cuda0, card0) and the NICs behind node 1; the file holds more: two Teslas without OS
    devices (one per node), a Radeon with an OpenCL device, and the BMC's Matrox VGA."""
    topo = load_xml(topology_file("32em64t-2n8c2t-pci-wholeio.xml"))
    cuda = next(d for d in topo.devices if d.pci_busid == "0000:84:00.0")
    assert cuda.kind == "gpu" and cuda.names == ("cuda0", "card0") and cuda.name == "cuda0"
    assert cuda.node == 1 and cuda.index == 0
    assert _by_node(topo, "gpu") == {0: ["0000:03:00.0"], 1: ["0000:83:00.0", "cuda0", "opencl0d1"]}
    assert _by_node(topo, "nic") == {1: ["ib0", "eth0", "eth1"]}
    infiniband = next(d for d in topo.devices if d.name == "ib0")
    assert infiniband.names == ("ib0", "mlx5_0") and infiniband.pci_class == "0207"
    # the console's VGA (Matrox, class 0300, computes nothing) is listed, and is no GPU
    assert [(d.pci_id, d.node) for d in topo.devices_of("display")] == [("102b:0532", 0)]
    # SATA (0106, 0107) and the I2C controller (1180) do not matter to Spark
    assert {d.pci_class for d in topo.devices} == {"0302", "0300", "0200", "0207"}


def test_power8_gpus_are_counted_once_named_by_nvml_whatever_their_osdev_type():
    """Its nvmlN OS devices are osdev_type 1, the DGX-2's 5: classified by PCI class."""
    topo = load_xml(topology_file("power8gpudistances.xml"))
    assert _by_node(topo, "gpu") == {0: ["nvml0", "nvml1"], 1: ["nvml2", "nvml3"]}
    first = topo.devices_of("gpu")[0]
    assert first.names == ("cuda0", "opencl0d0", "nvml0") and first.pci_busid == "0002:01:00.0"
    assert len(topo.devices) == 4


def test_the_other_pci_servers_gpus_nics_and_their_nodes():
    xeon = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    assert _by_node(xeon, "gpu") == {0: ["0000:06:00.0"], 1: ["0000:11:00.0", "0000:14:00.0"]}
    # an older Mellanox card's class is InfiniBand under serial bus (0c06): a NIC
    assert _by_node(xeon, "nic") == {0: ["eth0", "eth1", "eth2"]}
    mellanox = xeon.devices_of("nic")[2]
    assert mellanox.pci_class == "0c06" and mellanox.names == ("eth2", "ib0", "mlx4_0")
    assert [d.pci_id for d in xeon.devices_of("display")] == ["1002:515e"]  # ATI ES1000
    # four nodes, each a Group holding its I/O: two NICs behind each
    groups = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))
    assert {n: len(names) for n, names in _by_node(groups, "nic").items()} == {
        0: 2,
        1: 2,
        2: 2,
        3: 2,
    }
    assert not groups.devices_of("gpu")


@pytest.mark.parametrize(
    "name", ["32em64t-2n8c2t-pci-noio.xml", "16amd64-4distances.xml", "16em64t-4s2c2t-offlines.xml"]
)
def test_an_export_without_io_objects_has_no_devices(name):
    assert load_xml(topology_file(name)).devices == ()


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
def test_devices_stay_out_of_the_fingerprint_and_survive_a_record(name):
    topo = load_xml(topology_file(name))
    assert topo.devices
    without = replace(topo, devices=(), _pu_by_os={})
    assert without.fingerprint == topo.fingerprint
    assert "devices" not in topo.structure()
    record = records.dump(topo)
    again = records.load(Topology, record)
    assert again.devices == topo.devices and again.fingerprint == topo.fingerprint
    # a record written before devices existed loads, with none known, and still compares
    del record["devices"]
    older = records.load(Topology, record)
    assert older.devices == () and older.fingerprint == topo.fingerprint


def _machine_xml(nodes: int, io_parent_nodeset: str) -> str:
    """A small hwloc 2 XML: ``nodes`` packages of one NUMA node and one PU each, and a GPU and
    a NIC hanging off the Machine (whose nodeset is ``io_parent_nodeset``)."""
    packages = "".join(
        f'<object type="Package" os_index="{i}" cpuset="0x{1 << i:x}" nodeset="0x{1 << i:x}">'
        f'<object type="NUMANode" os_index="{i}" cpuset="0x{1 << i:x}" nodeset="0x{1 << i:x}" '
        f'local_memory="1073741824"/><object type="Core" os_index="{i}" cpuset="0x{1 << i:x}">'
        f'<object type="PU" os_index="{i}" cpuset="0x{1 << i:x}"/></object></object>'
        for i in range(nodes)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><topology version="2.0">'
        f'<object type="Machine" os_index="0" cpuset="0x{(1 << nodes) - 1:x}" '
        f'nodeset="{io_parent_nodeset}">{packages}'
        '<object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">'
        '<object type="PCIDev" pci_busid="0000:01:00.0" pci_type="0302 [10de:20b0] [10de:1450] a1">'
        '<object type="OSDev" name="cuda0" osdev_type="5"/></object>'
        '<object type="PCIDev" pci_busid="0000:00:03.0" pci_type="0200 [8086:1521] [0000:0000] 01">'
        '<object type="OSDev" name="eth0" osdev_type="2"><info name="Address" value="0:1"/>'
        "</object></object></object></object></topology>"
    )


def test_a_device_whose_parent_spans_every_node_has_none_known_except_on_one_node():
    two = parse_xml(_machine_xml(2, "0x3"), "xml:two")
    assert [(d.kind, d.name, d.node) for d in two.devices] == [
        ("nic", "eth0", None),
        ("gpu", "cuda0", None),
    ]
    one = parse_xml(_machine_xml(1, "0x1"), "xml:one")
    assert [(d.name, d.node) for d in one.devices] == [("eth0", 0), ("cuda0", 0)]


def test_classified_by_pci_class():
    assert classify("0302", "10de", ()) == "gpu"
    assert classify("0380", "1002", ()) == "gpu"  # AMD Instinct MI200: display controller
    assert classify("0300", "10de", ()) == "gpu"  # a GeForce is a VGA controller
    assert classify("0300", "1a03", ()) == "display"  # an ASPEED BMC's console
    assert classify("0300", "1002", ("opencl0d1",)) == "gpu"
    assert classify("1200", "1d0f", ()) == "accelerator"
    assert classify("1200", "1002", ("rsmi0",)) == "gpu"
    assert [classify(c, "15b3", ()) for c in ("0200", "0207", "0280", "0c06")] == ["nic"] * 4
    assert classify("0108", "144d", ()) == "nvme"
    assert [classify(c, "8086", ()) for c in ("0106", "0604", "0680", "0c03", "0000")] == [None] * 5


def _pci(root: Path, busid: str, pci_class: str, pci_id: str, node: int, *names: str) -> Path:
    """One PCI function as the kernel shows it under /sys/bus/pci/devices; ``names``: paths
    of its OS devices below it (``net/eth0``, ``virtio2/net/eth0``, ``nvme/nvme0/nvme0n1``)."""
    device = root / "sys/bus/pci/devices" / busid
    device.mkdir(parents=True)
    vendor, device_id = pci_id.split(":")
    for name, value in (
        ("class", f"0x{pci_class}"),
        ("vendor", f"0x{vendor}"),
        ("device", f"0x{device_id}"),
        ("numa_node", str(node)),
    ):
        (device / name).write_text(value + "\n")
    for name in names:
        (device / name).mkdir(parents=True)
    return device


def test_sysfs_devices_with_their_nodes_and_none_known_for_minus_one(tmp_path):
    """A two-node server's sysfs: a GPU, a dual-port ConnectX (an InfiniBand port and an
    Ethernet one), an NVMe drive, a virtio NIC and a BMC's VGA that no node claims (-1), a
    SATA controller and a bridge whose directory holds the function behind it."""
    _pci(tmp_path, "0000:3b:00.0", "030200", "10de:1db8", 0, "drm/card1", "drm/renderD128")
    _pci(tmp_path, "0000:03:00.0", "030000", "1a03:2000", -1, "drm/card0")
    _pci(tmp_path, "0000:af:00.0", "020700", "15b3:1017", 1, "net/ib0", "infiniband/mlx5_0")
    _pci(tmp_path, "0000:af:00.1", "020000", "15b3:1017", 1, "net/ens1f1")
    _pci(tmp_path, "0000:d8:00.0", "010802", "144d:a808", 1, "nvme/nvme0/nvme0n1")
    _pci(tmp_path, "0000:00:02.0", "020000", "1af4:1041", -1, "virtio2/net/eth0")
    _pci(tmp_path, "0000:00:1f.2", "010601", "8086:a182", 0)
    bridge = _pci(tmp_path, "0000:00:01.0", "060400", "8086:2030", 0)
    (bridge / "0000:01:00.0" / "net" / "eth9").mkdir(parents=True)  # not the bridge's own
    found = sysfs_devices(tmp_path, CpuSet([0, 1]))
    assert [(d.pci_busid, d.kind, d.name, d.node) for d in found] == [
        ("0000:00:02.0", "nic", "eth0", None),
        ("0000:03:00.0", "display", "card0", None),
        ("0000:3b:00.0", "gpu", "card1", 0),
        ("0000:af:00.0", "nic", "ib0", 1),
        ("0000:af:00.1", "nic", "ens1f1", 1),
        ("0000:d8:00.0", "nvme", "nvme0n1", 1),
    ]
    assert found[3].names == ("ib0", "mlx5_0") and found[2].pci_id == "10de:1db8"
    # on a machine of one node, every device is local to it (as hwloc says there)
    assert {d.node for d in sysfs_devices(tmp_path, CpuSet([0]))} == {0}
    assert sysfs_devices(tmp_path / "nothing", CpuSet([0])) == ()


def test_this_machines_devices_agree_between_lstopo_and_sysfs():
    """Whatever this machine has (here a virtio NIC): each device once, a PCI bus id, a kind,
    a node of the machine or none known; lstopo and sysfs see the same ones."""
    hwloc, kernel = load_machine(), read_sysfs()
    nodes = {n.os_index for n in hwloc.nodes}
    for device in hwloc.devices:
        assert BUSID.match(device.pci_busid)
        assert device.kind in ("gpu", "accelerator", "nic", "nvme", "display")
        assert device.node is None or device.node in nodes
    assert len({d.pci_busid for d in hwloc.devices}) == len(hwloc.devices)
    assert [(d.pci_busid, d.kind, d.node, d.pci_class, d.pci_id) for d in kernel.devices] == [
        (d.pci_busid, d.kind, d.node, d.pci_class, d.pci_id) for d in hwloc.devices
    ]
    assert kernel.fingerprint == hwloc.fingerprint


def test_the_topology_command_shows_the_devices_by_node():
    path = str(topology_file("nvidiaDGX2.xml"))
    shown = run_cli("topology", "--xml", path)
    assert shown.returncode == 0, shown.stderr
    table = shown.stdout[shown.stdout.index("Devices (PCI)") :]
    rows = [line for line in table.splitlines() if "nvml" in line]
    assert len(rows) == 16
    assert all(row.split("│")[1].strip() == ("0" if i < 8 else "1") for i, row in enumerate(rows))
    as_json = run_cli("topology", "--xml", path, "--json")
    assert as_json.returncode == 0, as_json.stderr
    devices = json.loads(as_json.stdout)["devices"]
    assert [(d["name"], d["node"], d["kind"]) for d in devices[:2]] == [
        ("nvml0", 0, "gpu"),
        ("nvml1", 0, "gpu"),
    ]
    assert sum(1 for d in devices if d["kind"] == "gpu" and d["node"] == 1) == 8
