"""A cluster numaspark did not start, learned from the plugin (issue 32): each host's topology
from the first placement report of an executor there (topology/reported.py), kept per cluster
(spark/learned_topology.py), and the next plan of that cluster made with it. No JVM: the reports are a
real one recorded here (tests/fixtures/plugin) and ones built from shared real servers' XML;
the standalone master is its recorded status page served by the test (tests/statuspage.py).
The real path, a plain cluster and two runs, is tests/test_plugin_report.py's."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import FIXTURES, topology_file
from statuspage import recorded_status, serving

from numaspark import records
from numaspark.experiment.request import RunRequest
from numaspark.experiment.runner import Runner
from numaspark.experiment.venue import ClusterAt
from numaspark.placement import Binding, Layout, inside_slice_cpus
from numaspark.placement.plugin import PLACEMENT_FILE, PlacementReport
from numaspark.placement.render import inside_slice
from numaspark.spark.learned_topology import (
    cluster_file,
    cluster_name,
    learn,
    load_learned,
    reported_hosts,
)
from numaspark.topology import CpuSet, Topology, load, load_xml
from numaspark.topology.reported import from_report

MASTER = "spark://127.0.0.1:7077"
RECORDED = FIXTURES / "plugin" / "first-reports.jsonl"
WHEN = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def state(tmp_path, monkeypatch) -> Path:
    """numaspark's state directory (where clusters are learned) is the test's own."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def host_report(topology: Topology) -> dict:
    """The ``host_topology`` the plugin would send from a host of ``topology`` (its sysfs
    read as jvm/ HostTopology reads it: nodes by OS index, cores by their first CPU, each
    CPU's package by its physical id, distances node to node)."""
    return {
        "nodes": {str(n.os_index): str(n.cpus) for n in topology.nodes},
        "node_memory_bytes": {str(n.os_index): n.memory for n in topology.nodes},
        "cores": [str(c.cpus) for c in sorted(topology.cores, key=lambda c: c.cpus.first())],
        "packages": {str(p.os_index): str(p.cpus) for p in topology.packages},
        "distances": {
            str(a): {str(b): topology.distance(a, b) for b in topology.distance_nodes}
            for a in topology.distance_nodes
        },
    }


def _reports(path: Path, *hosts: tuple[str, Topology]) -> Path:
    """A run's placement file: each host's first report with its topology, then a later one
    without (as the plugin sends them)."""
    lines = []
    for index, (host, topology) in enumerate(hosts):
        first = {
            "executor": str(index),
            "host": host,
            "pid": 100 + index,
            "cpus": "0-1",
            "host_topology": host_report(topology),
        }
        lines += [first, {k: v for k, v in first.items() if k != "host_topology"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    "name", ["24em64t-2n6c2t-pci.xml", "16amd64-4distances.xml", "32em64t-2n8c2t-pci-noio.xml"]
)
def test_a_reported_host_is_the_same_machine_as_its_hwloc_xml(name):
    """Nodes (whose OS order is not hwloc's logical one on the AMD server), cores, SMT,
    packages, memory and distances come back as hwloc gave them."""
    xml = load_xml(topology_file(name))
    learned = from_report("host-a", host_report(xml))
    assert learned.source == "plugin:host-a" and learned.hostname == "host-a"
    assert {n.os_index: (n.cpus, n.memory) for n in learned.nodes} == {
        n.os_index: (n.cpus, n.memory) for n in xml.nodes
    }
    assert {(c.cpus, c.node) for c in learned.cores} == {(c.cpus, c.node) for c in xml.cores}
    assert learned.smt == xml.smt
    assert {cpu: learned.siblings(cpu) for cpu in xml.online_cpus} == {
        cpu: xml.siblings(cpu) for cpu in xml.online_cpus
    }
    assert [(p.cpus, p.nodes) for p in learned.packages] == [
        (p.cpus, p.nodes) for p in xml.packages
    ]
    pairs = [(a, b) for a in xml.distance_nodes for b in xml.distance_nodes]
    assert [learned.distance(a, b) for a, b in pairs] == [xml.distance(a, b) for a, b in pairs]
    assert learned.total_memory == xml.total_memory
    assert learned.allowed_cpus == learned.online_cpus == xml.online_cpus
    assert (
        records.load(Topology, records.dump(learned)) == learned
    )  # as the cluster's file keeps it


def test_the_two_node_smt_server_hand_checked():
    """24em64t-2n6c2t-pci.xml read by eye: node 0 is the even CPUs, P#0's sibling is P#12,
    node 1 is 10 from itself and 20 from node 0."""
    learned = from_report("h", host_report(load_xml(topology_file("24em64t-2n6c2t-pci.xml"))))
    assert learned.node(0).cpus == CpuSet.parse("0,2,4,6,8,10,12,14,16,18,20,22")
    assert learned.core_of(0).cpus == CpuSet.parse("0,12") and len(learned.cores) == 12
    assert (learned.distance(1, 1), learned.distance(0, 1)) == (10, 20)


def test_a_report_the_real_plugin_made_here():
    """Recorded from a run of the plugin on this machine (one node, 2 CPUs): the first report
    of the executor carries the host, the next does not."""
    first, later = (
        PlacementReport.from_json(json.loads(line))
        for line in RECORDED.read_text().splitlines()[:2]
    )
    assert first.host_topology is not None and later.host_topology is None
    learned = from_report(first.host, first.host_topology)
    assert [str(n.cpus) for n in learned.nodes] == ["0-1"]
    assert [str(c.cpus) for c in learned.cores] == ["0", "1"] and not learned.smt
    assert learned.nodes[0].memory == first.host_topology["node_memory_bytes"]["0"] > 2**30
    assert learned.distance(0, 0) == 10
    assert [str(p.cpus) for p in learned.packages] == ["0-1"]
    (host,) = reported_hosts(RECORDED, WHEN)
    assert host.host == first.host and host.topology == learned


def test_what_a_report_leaves_out_is_unknown():
    learned = from_report("h", {"nodes": {"0": "0-3"}, "cores": ["0", "1", "2", "3"]})
    assert learned.nodes[0].memory is None and learned.total_memory is None
    assert learned.packages == () and learned.distances is None
    assert learned.distance(0, 0) is None
    with pytest.raises(ValueError, match="no NUMA node"):
        from_report("h", {"nodes": {}, "cores": []})


def test_learned_hosts_are_kept_per_cluster(tmp_path, state):
    two_node = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    amd = load_xml(topology_file("16amd64-4distances.xml"))
    warnings: list[str] = []
    reports = _reports(tmp_path / PLACEMENT_FILE, ("host-b", two_node), ("host-a", amd))
    changed = learn(MASTER, reports, warnings.append, now=WHEN)
    assert [h.host for h in changed] == ["host-a", "host-b"]  # both new
    assert learn(MASTER, reports, warnings.append, now=WHEN) == ()  # nothing new the second time
    kept = load_learned(MASTER, warnings.append)
    assert [h.host for h in kept.hosts] == ["host-a", "host-b"]
    assert kept.host("host-b").topology == from_report("host-b", host_report(two_node))
    assert kept.host("host-b").learned == WHEN
    assert kept.largest().host == "host-b"  # 24 CPUs to 16
    assert kept.say() == (
        "planned with the topologies of host-a, host-b, learned from the "
        "plugin's report on 2026-11-26 09:30 UTC; --xml/--synthetic override"
    )
    assert load_learned("spark://127.0.0.1:7078", warnings.append) is None  # another cluster
    # one host again, now a different machine: it replaces that host only
    learn(MASTER, _reports(tmp_path / "again.jsonl", ("host-a", two_node)), warnings.append)
    again = load_learned(MASTER, warnings.append)
    assert again.host("host-a").topology.node(0).cpus == two_node.node(0).cpus
    assert again.host("host-b").learned == WHEN
    assert warnings == []
    assert [p.name for p in cluster_file(MASTER).parent.iterdir()] == [cluster_file(MASTER).name]


def test_an_unreadable_cluster_file_is_one_warning_and_ignored(tmp_path):
    path = cluster_file(MASTER)
    path.parent.mkdir(parents=True)
    for text in (
        "{ cut sho",
        json.dumps({"schema": "numaspark.learned/1", "cluster": "other"}),
        json.dumps(
            {
                "schema": "numaspark.learned/1",
                "cluster": MASTER,
                "hosts": {"h": {"learned": "yesterday", "topology": {}}},
            }
        ),
    ):
        path.write_text(text)
        warnings: list[str] = []
        assert load_learned(MASTER, warnings.append) is None
        assert len(warnings) == 1 and warnings[0].startswith(
            f"what was learned of {MASTER} is unreadable ({path}"
        )
        assert "\n" not in warnings[0]
    # the next run writes it afresh
    learn(MASTER, _reports(tmp_path / "r.jsonl", ("h", load())), warnings.append)
    assert load_learned(MASTER, warnings.append).hosts[0].host == "h"


def test_a_yarn_cluster_is_named_by_its_resource_manager(tmp_path, monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    assert cluster_name("yarn") == "yarn"
    (tmp_path / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.address</name>"
        "<value>rm.example:8032</value></property></configuration>"
    )
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    assert cluster_name("yarn") == "yarn://rm.example:8032"
    assert cluster_name("k8s://https://127.0.0.1:6443") == "k8s://https://127.0.0.1:6443"


def test_the_node_slice_is_the_plugins():
    """As jvm/ NodeChooser.nodesFor: the slot's node when it holds the cores, else the fewest
    nodes with it, the nearest; the ActiveProcessorCount is the fewest of any slot's."""
    amd = load_xml(topology_file("16amd64-4distances.xml"))  # 8 nodes of 2 CPUs, all 20 apart
    assert inside_slice(amd, 0, 2) == CpuSet.parse("2-3")  # node 0 is CPUs 2-3
    assert inside_slice(amd, 0, 3) == CpuSet.parse("0-3")  # with node 1, the lowest number
    assert inside_slice(amd, 7, 99) == amd.online_cpus  # every node when even they do not hold
    two = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    assert inside_slice_cpus([two], 6) == 12 and inside_slice_cpus([two], 13) == 24
    assert inside_slice_cpus([two, amd], 2) == 2


def _standing(tmp_path, request: RunRequest, status: dict | None = None, xml: str | None = None):
    """Plan ``request`` on the recorded standalone master (2 free cores, 2048 MB); what was
    said, and the placement."""
    said: list[str] = []
    with (
        serving(status or recorded_status()) as ui,
        Runner(load(), tmp_path / "out", progress=said.append) as runner,
    ):
        given = load_xml(topology_file(xml)) if xml else None
        ui = ui if request.venue.standalone else None  # a standalone master's own page
        request = replace(request, venue=replace(request.venue, ui=ui, node_topology=given))
        _, placement = runner.place(request)
    return said, placement


def test_the_next_plan_of_a_learned_cluster_uses_it(tmp_path):
    """A standalone master whose only host reported a 2-node server: at --bind node each
    executor's -XX:ActiveProcessorCount is the node it will be bound to (12 CPUs, not the
    worker's 2 cores), and the run says and records which topology planned it."""
    request = RunRequest(
        workload="wordcount",
        venue=ClusterAt(master=MASTER),
        binding=Binding.NODE,
        layout=Layout(executors=2, cores_per_executor=1),
        out=tmp_path,
    )
    said, before = _standing(tmp_path, request)
    assert before.executors[0].java_options == ()  # not learned: the slice is unknown
    two = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    learn(MASTER, _reports(tmp_path / PLACEMENT_FILE, ("host-a", two)), said.append, now=WHEN)
    said, placement = _standing(tmp_path, request)
    assert [e.java_options for e in placement.executors] == [("-XX:ActiveProcessorCount=12",)] * 2
    line = (
        "planned with host-a's topology, learned from the plugin's report on 2026-11-26 "
        "09:30 UTC; --xml/--synthetic override"
    )
    assert said == [line] and line in placement.notes
    assert [(e.cores, e.heap) for e in placement.executors] == [
        (e.cores, e.heap) for e in before.executors
    ]  # still sized from the worker
    # below node level nothing is bound from inside: said, and no ActiveProcessorCount
    said, unbound = _standing(tmp_path, replace(request, binding=Binding.NONE))
    assert said == [line] and unbound.executors[0].java_options == ()
    # --xml overrides it: the nodes' topology given, nothing said of what was learned
    k8s = replace(request, venue=ClusterAt(master="k8s://https://127.0.0.1:6443"))
    said, given = _standing(tmp_path, k8s, xml="16amd64-4distances.xml")
    assert said == [] and given.executors[0].java_options == ("-XX:ActiveProcessorCount=2",)


def test_an_executor_wider_than_every_learned_node_is_said(tmp_path):
    """On a worker of 4 free cores whose host has nodes of 2 CPUs: one line, not a refusal;
    the ActiveProcessorCount is the two nodes the plugin will take."""
    amd = load_xml(topology_file("16amd64-4distances.xml"))
    learn(MASTER, _reports(tmp_path / PLACEMENT_FILE, ("amd", amd)), print, now=WHEN)
    status = recorded_status()
    status["workers"][0]["cores"] = 4
    request = RunRequest(
        workload="wordcount",
        venue=ClusterAt(master=MASTER),
        binding=Binding.NODE,
        layout=Layout(executors=1, cores_per_executor=4),
        out=tmp_path,
    )
    said, placement = _standing(tmp_path, request, status)
    wide = (
        "4 cores per executor are more than the largest NUMA node of the cluster's hosts "
        "has (2 CPUs): the plugin binds each to the fewest nodes that hold them, nearest "
        "first"
    )
    assert said[1:] == [f"note: {wide}"] and wide in placement.notes
    assert placement.executors[0].java_options == ("-XX:ActiveProcessorCount=4",)


def test_kubernetes_without_xml_plans_on_the_learned_node(tmp_path):
    master = "k8s://https://127.0.0.1:6443"
    two = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    small = load_xml(topology_file("16amd64-4distances.xml"))
    learn(
        master,
        _reports(tmp_path / PLACEMENT_FILE, ("pod-b", two), ("pod-a", small)),
        print,
        now=WHEN,
    )
    request = RunRequest(
        workload="wordcount",
        venue=ClusterAt(master=master),
        binding=Binding.NODE,
        layout=Layout(executors=2, cores_per_executor=6),
        out=tmp_path,
    )
    said = []
    with Runner(load(), tmp_path / "out", progress=said.append) as runner:
        _, placement = runner.place(request)
    learned = from_report("pod-b", host_report(two))
    assert placement.topology_fingerprint == learned.fingerprint  # the record says which
    assert placement.topology_source == "plugin:pod-b"
    assert said == [
        "planned with pod-b's topology, learned from the plugin's report on "
        "2026-11-26 09:30 UTC; --xml/--synthetic override"
    ]
    assert [e.java_options for e in placement.executors] == [("-XX:ActiveProcessorCount=12",)] * 2
