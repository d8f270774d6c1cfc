"""Every real server in shared/topologies loads with its quirks intact.

This machine has one NUMA node, so multi-node behaviour is tested on these
files (hwloc's own test inputs from real servers).
"""

import subprocess

import pytest
from conftest import topology_file
from prereq import require

from numaspark import records
from numaspark.topology import load_xml

# file: packages, nodes, nodes with CPUs, cores, PUs, allowed CPUs, allowed nodes, offline CPUs
EXPECTED = {
    "16amd64-4distances.xml": (8, 8, 8, 16, 16, "0-15", "0-7", ""),
    "16amd64-8n2c-cpusets.xml": (6, 5, 3, 10, 10, "0-3,5-6,12-15", "1-5", "4,7-11"),
    "16em64t-4s2c2t-offlines.xml": (4, 1, 1, 6, 7, "0-1,3-4,6,12,15", "0", "2,5,7-11,13-14"),
    "24em64t-2n6c2t-pci.xml": (2, 2, 2, 12, 24, "0-23", "0-1", ""),
    "32em64t-2n8c2t-pci-noio.xml": (2, 2, 2, 16, 32, "0-31", "0-1", ""),
    "64intel64-fakeKNL-SNC4-hybrid.xml": (1, 8, 4, 16, 64, "0-63", "0-7", ""),
    "96em64t-4n4d3ca2co-pci.xml": (16, 4, 4, 96, 96, "0-95", "0-3", ""),
    "power8gpudistances.xml": (
        2,
        2,
        2,
        8,
        16,
        "0-1,8-9,16-17,24-25,80-81,88-89,96-97,104-105",
        "0-1",
        "",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_and_allowed_sets(name):
    topo = load_xml(topology_file(name))
    packages, nodes, cpu_nodes, cores, pus, allowed, allowed_nodes, offline = EXPECTED[name]
    assert len(topo.packages) == packages
    assert len(topo.nodes) == nodes
    assert sum(1 for n in topo.nodes if n.has_cpus) == cpu_nodes
    assert len(topo.cores) == cores
    assert len(topo.pus) == pus
    assert str(topo.allowed_cpus) == allowed
    assert str(topo.allowed_nodes) == allowed_nodes
    assert str(topo.offline_cpus) == offline
    # every PU belongs to exactly one core, and cores partition the online CPUs
    assert sorted(c for core in topo.cores for c in core.cpus) == topo.online_cpus.to_list()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pu_order_matches_hwloc(name):
    """Our logical (L#) order of PUs and NUMA nodes is hwloc's own."""
    require("hwloc-calc")
    path = topology_file(name)
    topo = load_xml(path)

    def calc(kind: str) -> list[int]:
        out = subprocess.run(
            ["hwloc-calc", "-i", str(path), "--physical-output", "--intersect", kind, "all"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return [int(x) for x in out.split(",") if x]

    assert [p.os_index for p in topo.pus] == calc("pu")
    with_cpus = [n.os_index for n in topo.nodes if n.cpus & topo.online_cpus]
    assert with_cpus == [n for n in calc("numa") if topo.node(n).has_cpus]


def test_smt_siblings_are_not_adjacent():
    topo = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    assert str(topo.siblings(0)) == "12"
    assert topo.pus[1].os_index == 12  # L#1 is P#12
    assert topo.smt
    topo32 = load_xml(topology_file("32em64t-2n8c2t-pci-noio.xml"))
    assert str(topo32.siblings(3)) == "19"


def test_numa_logical_order_differs_from_os_order():
    topo = load_xml(topology_file("16amd64-4distances.xml"))
    assert topo.nodes[0].os_index == 1  # L#0 is P#1
    assert topo.distance_nodes == (1, 0, 2, 5, 4, 3, 6, 7)
    assert topo.distance(1, 1) == 10
    assert topo.distance(1, 0) == 20
    assert topo.distance(3, 3) == 10


def test_restricted_cpuset_memory_only_nodes():
    topo = load_xml(topology_file("16amd64-8n2c-cpusets.xml"))
    assert [n.os_index for n in topo.cpu_nodes] == [1, 2, 3]
    memory_only = [n.os_index for n in topo.nodes if not n.has_cpus]
    assert memory_only == [5, 4]  # their CPUs are outside the cpuset
    assert topo.pu(0).node is None  # allowed CPU whose node is not allowed
    assert topo.pu(5).node == 2


def test_offline_cpus_and_uneven_cores():
    topo = load_xml(topology_file("16em64t-4s2c2t-offlines.xml"))
    assert topo.nodes[0].memory is None
    assert topo.total_memory is None
    assert sorted(len(c.cpus) for c in topo.cores) == [1, 1, 1, 1, 1, 2]
    assert str(topo.core_of(4).cpus) == "4,12"
    assert len(topo.l3) == 4


def test_knl_memory_only_mcdram_nodes():
    topo = load_xml(topology_file("64intel64-fakeKNL-SNC4-hybrid.xml"))
    mcdram = [n for n in topo.nodes if n.subtype == "MCDRAM"]
    assert sorted(n.os_index for n in mcdram) == [4, 5, 6, 7]
    assert all(not n.has_cpus for n in mcdram)
    assert str(topo.node(0).cpus) == "0-3,16-19,32-35,48-51"
    assert all(len(c.cpus) == 4 for c in topo.cores)
    assert topo.l3 == ()  # memory-side caches are not CPU cache domains


def test_power8_numbering_gaps_and_distances():
    topo = load_xml(topology_file("power8gpudistances.xml"))
    assert str(topo.node(1).cpus) == "80-81,88-89,96-97,104-105"
    assert topo.distances == ((10, 40), (40, 10))
    assert len(topo.l3) == 8


def test_fingerprint_is_stable_and_structural():
    a = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    b = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    c = load_xml(topology_file("32em64t-2n8c2t-pci-noio.xml"))
    assert a.fingerprint == b.fingerprint != c.fingerprint


def test_json_schema_fields():
    data = records.dump(load_xml(topology_file("24em64t-2n6c2t-pci.xml")))
    assert data["schema"] == "numaspark.topology/1"
    assert data["summary"]["numa_nodes"] == 2
    assert data["pus"][0]["siblings"] == "12"
    assert data["distances"]["matrix"] == [[10, 20], [20, 10]]
    assert {"complete", "online", "offline", "allowed"} <= set(data["cpus"])


# A memory-side cache above a high-bandwidth node, attached to the machine (as in hwloc 2.9's
# test file 8intel64-fakeKNL-A2A-hybrid.rootattachednumas): the structure, written here by hand.
_MEMCACHE_XML = """<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003"
          allowed_cpuset="0x00000003" nodeset="0x00000003" allowed_nodeset="0x00000003">
    <object type="NUMANode" os_index="0" cpuset="0x00000003" nodeset="0x00000001"
            gp_index="10" local_memory="51431501824"/>
    <object type="MemCache" os_index="1" cpuset="0x00000003" nodeset="0x00000002"
            cache_size="10000000" depth="1">
      <object type="NUMANode" os_index="1" cpuset="0x00000003" nodeset="0x00000002"
              gp_index="11" subtype="MCDRAM" local_memory="8589934592"/>
    </object>
    <object type="Package" os_index="0" cpuset="0x00000003">
      <object type="Core" os_index="0" cpuset="0x00000001">
        <object type="PU" os_index="0" cpuset="0x00000001"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x00000002">
        <object type="PU" os_index="1" cpuset="0x00000002"/>
      </object>
    </object>
  </object>
</topology>
"""


def test_a_node_behind_a_memory_side_cache_is_counted_once(tmp_path):
    path = tmp_path / "memcache.xml"
    path.write_text(_MEMCACHE_XML)
    topo = load_xml(path)
    assert [n.os_index for n in topo.nodes] == [0, 1]
    assert sum(n.memory for n in topo.nodes) == 51431501824 + 8589934592  # 55.9 GiB, as hwloc
